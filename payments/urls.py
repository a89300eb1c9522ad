"""Mounted under i18n_patterns at account/orders/<number>/payment/ (see rental/urls.py)."""

from django.urls import path

from payments import views

app_name = "payments"

urlpatterns = [
    path("", views.payment_page, name="page"),
    path("issue/", views.payment_issue, name="issue"),
    path("claim/", views.payment_claim, name="claim"),
    path("status/", views.payment_status, name="status"),
]

"""Mounted under i18n_patterns at account/orders/<number>/payment/ (see rental/urls.py)."""

from django.urls import path

from payments import views
from payments.refunds import views as refund_views

app_name = "payments"

urlpatterns = [
    path("", views.payment_page, name="page"),
    path("issue/", views.payment_issue, name="issue"),
    path("claim/", views.payment_claim, name="claim"),
    path("status/", views.payment_status, name="status"),
    path("refund-address/", refund_views.refund_address, name="refund_address"),
]

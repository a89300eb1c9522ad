"""Mounted under i18n_patterns at account/orders/<number>/ (see rental/urls.py): what the
order page opens on the rental's hosts."""

from django.urls import path

from hosts import views

app_name = "hosts"

urlpatterns = [
    path("jupyter/", views.order_jupyter, name="jupyter"),
    path("files.tar", views.order_files, name="files"),
]

from django.contrib import admin
from django.urls import path

from backoffice import views

urlpatterns = [
    path("", admin.site.admin_view(views.dashboard), name="backoffice_dashboard"),
]

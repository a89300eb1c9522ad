from django.urls import path

from orders import views

app_name = "orders"

urlpatterns = [
    path("gpus/<slug:slug>/configure/", views.configure, name="configure"),
]

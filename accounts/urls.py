from django.urls import path

from accounts import views

app_name = "accounts"

urlpatterns = [
    path("", views.profile, name="profile"),
]

urlpatterns += [
    path("api-keys/", views.api_keys, name="api_keys"),
]

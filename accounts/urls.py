from django.urls import path

from accounts import ssh_key_views, views

app_name = "accounts"

urlpatterns = [
    path("", views.profile, name="profile"),
]

urlpatterns += [
    path("api-keys/", views.api_keys, name="api_keys"),
]

urlpatterns += [
    path("ssh-keys/", ssh_key_views.ssh_keys, name="ssh_keys"),
]

from django.urls import path

from accounts import ssh_key_views, two_factor_views, views

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

urlpatterns += [
    path("security/", two_factor_views.two_factor_security, name="two_factor"),
    path("security/enrol/", two_factor_views.two_factor_enrol, name="two_factor_enrol"),
    path("security/verify/", two_factor_views.two_factor_verify, name="two_factor_verify"),
]

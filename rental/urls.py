from django.conf.urls.i18n import i18n_patterns
from django.contrib import admin
from django.urls import include, path

from rental.health import healthz

urlpatterns = [
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="healthz"),
]

urlpatterns += i18n_patterns(
    path("accounts/", include("allauth.urls")),
    path("account/", include("accounts.urls")),
    path("", include("orders.urls")),
    path("", include("catalog.urls")),
)

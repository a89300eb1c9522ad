from django.conf.urls.i18n import i18n_patterns
from django.contrib import admin
from django.urls import include, path

from rental.health import healthz

urlpatterns = [
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="healthz"),
    path("api/", include("api.urls")),
]

urlpatterns += i18n_patterns(
    path("accounts/", include("allauth.urls")),
    path("account/", include("accounts.urls")),
    path("", include("orders.urls")),
    path("", include("catalog.urls")),
)

# JSON for paths under /api/, Django's default pages everywhere else.
handler404 = "api.errors.page_not_found"
handler500 = "api.errors.server_error"

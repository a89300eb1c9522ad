from django.conf.urls.i18n import i18n_patterns
from django.contrib import admin
from django.templatetags.static import static
from django.urls import include, path
from django.utils.translation import gettext_lazy as _
from django.views.generic import RedirectView

from rental import health

admin.site.site_header = admin.site.site_title = _("LocaGPU back office")
admin.site.index_title = _("Orders, payments and catalog")

urlpatterns = [
    # Staff log in through the store's login: its failed-login limits and e-mail verification
    # apply to them too (Django's admin login form has no rate limit at all).
    path(
        "admin/login/",
        RedirectView.as_view(pattern_name="account_login", query_string=True),
        name="admin_login_entry",
    ),
    path("admin/dashboard/", include("backoffice.urls")),
    path("admin/", admin.site.urls),
    path("healthz/live", health.live, name="healthz_live"),
    path("healthz/ready", health.ready, name="healthz_ready"),
    # Monitors configured before the split call /healthz: it answers as /healthz/ready.
    path("healthz", health.ready, name="healthz"),
    # Browsers ask for /favicon.ico on pages that do not name one (the admin).
    path("favicon.ico", RedirectView.as_view(url=static("img/favicon.svg"), permanent=True)),
    path("api/", include("api.urls")),
]

urlpatterns += i18n_patterns(
    path("accounts/", include("allauth.urls")),
    path("account/", include("accounts.urls")),
    path("account/invoices/", include("billing.urls")),
    path("account/orders/<slug:number>/payment/", include("payments.urls")),
    path("account/orders/<slug:number>/", include("hosts.urls")),
    path("", include("orders.urls")),
    path("", include("catalog.urls")),
)

# JSON for paths under /api/, Django's default pages everywhere else.
handler404 = "api.errors.page_not_found"
handler500 = "api.errors.server_error"

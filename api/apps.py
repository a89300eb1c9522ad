from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ApiConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "api"
    verbose_name = _("Partner API")

    def ready(self) -> None:
        from accounts.hooks import on_password_changed
        from api import schema  # noqa: F401  (registers the Api-Key authentication's OpenAPI)
        from api.webhooks.services import webhook_endpoints_pause

        # A new password on the account pauses its webhooks (accounts knows nothing of them).
        on_password_changed(webhook_endpoints_pause)

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ApiConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "api"
    verbose_name = _("Partner API")

    def ready(self) -> None:
        from accounts.hooks import password_changed_hooks
        from api import schema  # noqa: F401  (registers the Api-Key authentication's OpenAPI)
        from api.webhooks.services import webhook_deliveries_create, webhook_endpoints_pause
        from orders import events

        # A new password on the account pauses its webhooks (accounts knows nothing of them).
        password_changed_hooks.register("webhooks", webhook_endpoints_pause)
        # Webhook deliveries are rows, sent with their own retries: made with the event's
        # claim, so none is lost and none made twice (orders knows nothing of webhooks).
        events.with_claim.register("webhooks", webhook_deliveries_create)

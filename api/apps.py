from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ApiConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "api"
    verbose_name = _("Partner API")

    def ready(self) -> None:
        from api import schema  # noqa: F401  (registers the Api-Key authentication's OpenAPI)

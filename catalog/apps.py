from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class CatalogConfig(AppConfig):
    name = "catalog"
    verbose_name = _("Catalog")

    def ready(self) -> None:
        from catalog.models import Environment, GpuModel, TermPrice
        from rental import changes

        # Any order's page names its GPU, environment and today's prices.
        for model in (GpuModel, TermPrice, Environment):
            changes.watch(model, changes.GLOBAL_TAG_SQL)

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class BackofficeConfig(AppConfig):
    """The staff cockpit: the "to handle" queue on the admin home and the dashboard. It reads
    orders and payments (and later billing), so it sits above them all: no app imports it."""

    name = "backoffice"
    verbose_name = _("Back office")

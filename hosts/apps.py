from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class HostsConfig(AppConfig):
    # Provisioning follows order events and a seeded catalog gets its hosts: both are named in
    # settings.HOOKS (rental.hooks), like every other subscriber.
    name = "hosts"
    verbose_name = _("Hosts")

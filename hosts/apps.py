from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class HostsConfig(AppConfig):
    name = "hosts"
    verbose_name = _("Hosts")

    def ready(self) -> None:
        from catalog import hooks as catalog_hooks
        from hosts.capacity import gpu_host_seed
        from hosts.provisioning.triggers import provisioning_on_event
        from orders import events

        # Automatic provisioning follows the order's statuses like any other channel: the
        # state machine never calls it.
        events.with_claim.register("provisioning", provisioning_on_event)
        # A freshly seeded GPU model gets a host for its units.
        catalog_hooks.seeded.register("hosts", gpu_host_seed)

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class OrdersConfig(AppConfig):
    name = "orders"
    verbose_name = _("Orders")

    def ready(self) -> None:
        from catalog import hooks as catalog_hooks
        from orders import events, hooks
        from orders.capacity import gpu_host_seed
        from orders.notifications import order_event_email
        from orders.provisioning.triggers import provisioning_on_event
        from orders.selectors import order_public_keys
        from orders.stock import gpus_with_availability

        # The e-mail channel subscribes like any other: the state machine never calls it.
        events.after_claim.register("email", order_event_email)
        # Automatic provisioning follows the order's statuses the same way.
        events.with_claim.register("provisioning", provisioning_on_event)
        # Units are held by orders: the catalog shows what they leave free.
        catalog_hooks.availability.register("orders", gpus_with_availability)
        catalog_hooks.seeded.register("orders", gpu_host_seed)
        # The keys a customer chose for the order are the ones its machines install.
        hooks.public_key_sources.register("accounts", order_public_keys)

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class OrdersConfig(AppConfig):
    name = "orders"
    verbose_name = _("Orders")

    def ready(self) -> None:
        from catalog import hooks as catalog_hooks
        from orders import events, hooks
        from orders.notifications import order_event_email
        from orders.selectors import order_public_keys
        from orders.stock import gpus_with_availability

        # The e-mail channel subscribes like any other: the state machine never calls it.
        events.after_claim.register("email", order_event_email)
        # Units are held by orders: the catalog shows what they leave free.
        catalog_hooks.availability.register("orders", gpus_with_availability)
        # The keys a customer chose for the order are the ones its machines install.
        hooks.public_key_sources.register("accounts", order_public_keys)
        _watch_order_rows()


def _watch_order_rows() -> None:
    """What changes an order's pages (rental.changes): its own rows, its account's."""
    from hosts.models import Host, SlotHold
    from orders.models import Order, OrderEvent
    from orders.versions import order_account_tag
    from rental import changes

    changes.watch(Order, changes.account_tag_sql(changes.column(Order, "user")))
    for model in (OrderEvent, Order.ssh_keys.through):
        changes.watch(model, order_account_tag(changes.column(model, "order")))
    changes.watch(
        SlotHold,
        order_account_tag(changes.column(SlotHold, "order")),
        changes.host_tag_sql(changes.column(SlotHold, "host")),
    )
    changes.watch(Host, changes.host_tag_sql(changes.column(Host, "id")))

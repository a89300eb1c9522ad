from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class OrdersConfig(AppConfig):
    name = "orders"
    verbose_name = _("Orders")

    def ready(self) -> None:
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

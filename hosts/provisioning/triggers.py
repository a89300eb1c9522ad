"""When provisioning runs: subscribed to order events in settings.HOOKS, like the other
channels, so the state machine stays unaware of hosts. A paid order on `ssh` hosts is
provisioned; an order whose access was granted is revoked when it ends (term, early stop or
refund); its keys are installed again when its end moves (their expiry follows it)."""

from hosts.provisioning.services import order_is_automatic
from orders.extensions import SHORTENED
from orders.models import OrderEvent, OrderStatus
from rental.celery import enqueue_after_commit

S = OrderStatus
ENDS = (S.COMPLETED, S.REFUNDED)


def _end_moved(event: OrderEvent) -> bool:
    """An extension paid, an extension refunded, or staff activating a rental whose access
    was granted before (a custom environment): the keys' expiry is no longer the end."""
    Kind = OrderEvent.Kind
    return (
        event.kind == Kind.EXTENDED
        or (event.kind == Kind.NOTE and event.data.get("notice") == SHORTENED)
        or (event.new_status == S.ACTIVE and event.actor != OrderEvent.Actor.SYSTEM)
    )


def provisioning_on_event(*, event: OrderEvent) -> None:
    """Runs in the event's claim transaction: the task is queued once, after it commits."""
    order = event.order
    if _end_moved(event) and order.access_host and order_is_automatic(order=order):
        enqueue_after_commit("hosts.tasks.order_keys_sync_task", order.pk)
    if event.kind != OrderEvent.Kind.STATUS:
        return
    if event.new_status == S.PAID and order_is_automatic(order=order):
        enqueue_after_commit("hosts.tasks.order_provision_task", order.pk)
    elif event.new_status in ENDS and order.access_host and order_is_automatic(order=order):
        enqueue_after_commit("hosts.tasks.order_access_revoke_task", order.pk)

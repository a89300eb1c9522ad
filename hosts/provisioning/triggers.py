"""When provisioning runs: subscribed to order events in settings.HOOKS, like the other
channels, so the state machine stays unaware of hosts. A paid order on `ssh` hosts is
provisioned; an order whose access was granted is revoked when it ends (term, early stop or
refund)."""

from hosts.provisioning.services import order_is_automatic
from orders.models import OrderEvent, OrderStatus
from rental.celery import enqueue_after_commit

S = OrderStatus
ENDS = (S.COMPLETED, S.REFUNDED)


def provisioning_on_event(*, event: OrderEvent) -> None:
    """Runs in the event's claim transaction: the task is queued once, after it commits."""
    if event.kind != OrderEvent.Kind.STATUS:
        return
    order = event.order
    if event.new_status == S.PAID and order_is_automatic(order=order):
        enqueue_after_commit("hosts.tasks.order_provision_task", order.pk)
    elif event.new_status in ENDS and order.access_host and order_is_automatic(order=order):
        enqueue_after_commit("hosts.tasks.order_access_revoke_task", order.pk)

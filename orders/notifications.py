"""Side effects of an order event, run by a Celery task after the event's transaction commits."""

from django.db import transaction
from django.utils import timezone

from accounts.mail import user_mail
from api.webhooks.services import webhook_deliveries_create
from orders.models import OrderEvent, OrderStatus

# E-mail template per status reached; `ending_soon` is a note event sent by the beat task.
STATUS_EMAILS = {
    OrderStatus.AWAITING_PAYMENT: "received",
    OrderStatus.PAID: "paid",
    OrderStatus.ACTIVE: "active",
    OrderStatus.COMPLETED: "completed",
    OrderStatus.EXPIRED: "expired",
}
ENDING_SOON = "ending_soon"


def _email_for(event: OrderEvent) -> str | None:
    if event.kind == OrderEvent.Kind.STATUS:
        return STATUS_EMAILS.get(event.new_status)
    if event.kind == OrderEvent.Kind.NOTE and event.data.get("notice") == ENDING_SOON:
        return ENDING_SOON
    return None


def order_event_dispatch(*, event: OrderEvent) -> None:
    """Send what this event owes the outside world, once even if the task runs twice.

    The claim and the webhook delivery rows commit together: a worker that dies before the
    commit leaves the event unclaimed for the next run. The e-mail goes after the commit, so
    it is sent at most once.
    """
    with transaction.atomic():
        claimed = OrderEvent.objects.filter(pk=event.pk, dispatched_at__isnull=True).update(
            dispatched_at=timezone.now()
        )
        if not claimed:
            return
        webhook_deliveries_create(event=event)
    template = _email_for(event)
    if template:
        send_order_email(order=event.order, template=template)


def send_order_email(*, order, template: str) -> None:
    # Already in a worker (the event's dispatch task): sent here, not queued again.
    user_mail(user=order.user, template=f"orders/email/{template}", context={"order": order}).send()

from datetime import timedelta

from celery import shared_task
from django.utils import timezone

from orders.events import DISPATCH_GRACE, order_event_dispatch, order_events_pending
from orders.models import OrderEvent
from orders.reminders import orders_remind_ending
from orders.services import orders_complete, orders_expire

PENDING_DISPATCH_BATCH = 500


@shared_task(acks_late=True)
def order_event_dispatch_task(event_id: int) -> None:
    event = (
        OrderEvent.objects.select_related("order__user", "order__gpu").filter(pk=event_id).first()
    )
    if event is not None:
        order_event_dispatch(event=event)


@shared_task(acks_late=True)
def orders_dispatch_pending_task(grace_seconds: float = DISPATCH_GRACE.total_seconds()) -> int:
    """Beat: queue again the recent events whose side effects were never handed over, or
    whose subscriber failed and is due for another try (orders.events).

    A copy of a task still waiting in the queue is harmless: the dispatch claims the event,
    and each of its deliveries, with a conditional update, so the side effects run once.
    """
    now = timezone.now()
    event_ids = list(
        OrderEvent.objects.filter(
            order_events_pending(now=now, grace=timedelta(seconds=grace_seconds))
        )
        .order_by("created_at", "id")
        .values_list("pk", flat=True)[:PENDING_DISPATCH_BATCH]
    )
    for event_id in event_ids:
        order_event_dispatch_task.delay(event_id)
    return len(event_ids)


# Beat tasks: each scans for due orders; two runs at once are safe (conditional updates).
@shared_task(acks_late=True)
def orders_expire_task() -> int:
    return orders_expire()


@shared_task(acks_late=True)
def orders_complete_task() -> int:
    return orders_complete()


@shared_task(acks_late=True)
def orders_remind_ending_task() -> int:
    return orders_remind_ending()

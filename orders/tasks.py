from datetime import timedelta

from celery import shared_task
from django.utils import timezone

from orders.events import order_event_dispatch
from orders.models import OrderEvent

# An event still undispatched after this long lost its task (broker down when it was queued,
# or a broker restart dropped the message): the sweep queues it again.
PENDING_DISPATCH_GRACE = timedelta(minutes=2)
# Older events are left alone: re-sending a days-old e-mail would confuse more than help.
PENDING_DISPATCH_HORIZON = timedelta(days=2)
PENDING_DISPATCH_BATCH = 500


@shared_task(acks_late=True)
def order_event_dispatch_task(event_id: int) -> None:
    event = (
        OrderEvent.objects.select_related("order__user", "order__gpu").filter(pk=event_id).first()
    )
    if event is not None:
        order_event_dispatch(event=event)


@shared_task(acks_late=True)
def orders_dispatch_pending_task(
    grace_seconds: float = PENDING_DISPATCH_GRACE.total_seconds(),
) -> int:
    """Beat: queue again the recent events whose side effects were never handed over.

    A copy of a task still waiting in the queue is harmless: the dispatch claims the event
    with a conditional update, so the side effects run once.
    """
    now = timezone.now()
    event_ids = list(
        OrderEvent.objects.filter(
            dispatched_at__isnull=True,
            created_at__gte=now - PENDING_DISPATCH_HORIZON,
            created_at__lte=now - timedelta(seconds=grace_seconds),
        )
        .order_by("created_at", "id")
        .values_list("pk", flat=True)[:PENDING_DISPATCH_BATCH]
    )
    for event_id in event_ids:
        order_event_dispatch_task.delay(event_id)
    return len(event_ids)


# Beat tasks: each scans for due orders; two runs at once are safe (conditional updates).
# Services are imported in the bodies: they reach the state machine, which imports this module.
@shared_task(acks_late=True)
def orders_expire_task() -> int:
    from orders.services import orders_expire

    return orders_expire()


@shared_task(acks_late=True)
def orders_complete_task() -> int:
    from orders.services import orders_complete

    return orders_complete()


@shared_task(acks_late=True)
def orders_remind_ending_task() -> int:
    from orders.reminders import orders_remind_ending

    return orders_remind_ending()


# Provisioning reaches hosts over SSH (queue `hosts`). A failure queues the next attempt with a
# doubling back-off (a new message, not a retry of this one: the attempt number travels with
# it); once the attempts are spent the order is flagged for staff with the reason.
@shared_task(acks_late=True)
def order_provision_task(order_id: int, attempt: int = 1) -> bool:
    from orders.provisioning.services import order_provision

    return _attempt(order_provision_task, order_provision, order_id, attempt)


@shared_task(acks_late=True)
def order_keys_sync_task(order_id: int, attempt: int = 1) -> bool:
    from orders.provisioning.keys import order_keys_sync

    return _attempt(order_keys_sync_task, order_keys_sync, order_id, attempt)


@shared_task(acks_late=True)
def order_access_revoke_task(order_id: int, attempt: int = 1) -> bool:
    from orders.provisioning.services import order_access_revoke

    return _attempt(order_access_revoke_task, order_access_revoke, order_id, attempt)


@shared_task(acks_late=True)
def rentals_purge_task() -> int:
    from orders.provisioning.services import rentals_purge

    return rentals_purge()


def _attempt(task, step, order_id: int, attempt: int) -> bool:
    from django.conf import settings

    from orders.models import Order
    from orders.provisioning.services import ProvisioningError, order_provisioning_flag

    order = Order.objects.select_related("environment").filter(pk=order_id).first()
    if order is None:
        return False
    try:
        return step(order=order)
    except ProvisioningError as error:
        if attempt >= settings.PROVISIONING_ATTEMPTS:
            order_provisioning_flag(
                order=order, reason=error.reason, detail=error.detail, attempts=attempt
            )
            return False
        countdown = settings.PROVISIONING_RETRY_SECONDS * 2 ** (attempt - 1)
        task.apply_async((order_id, attempt + 1), countdown=countdown)
        return False

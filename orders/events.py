"""The order event bus. The state machine (orders.transitions) stores each OrderEvent and
queues one dispatch after its transaction commits; the dispatch hands the event to every
subscriber. orders imports none: e-mail (orders.notifications), provisioning (hosts), billing
and webhooks (api) are named in settings.HOOKS (rental.hooks), in the order they run.

A subscriber picks the promise it needs:
- `order_event_with_claim`: once, on its own. Claiming the event (`dispatched_at`) makes one
  OrderEventDelivery per subscriber; each then runs in its own transaction, the one that marks
  its delivery done. What it writes (webhook delivery rows, sent later with their own retries)
  commits with that mark or not at all: a worker dying before the commit leaves the delivery
  to the next run, so nothing is lost and nothing is made twice. A subscriber that raises
  rolls back its own work only: the others go on, its error is kept on its delivery, and the
  beat's sweep tries it again, later each time, until the event is DISPATCH_HORIZON old; from
  then it waits in the staff's queue (orders.queue).
- `order_event_after_claim`: runs once the subscribers above were tried, for what cannot be
  taken back (an e-mail): sent at most once, by the dispatch that claimed the event.
"""

import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from orders.models import OrderEvent, OrderEventDelivery
from rental.hooks import answers

logger = logging.getLogger(__name__)

# A dispatch (or a delivery) still not done after this long lost its worker: broker down when
# it was queued, a broker restart dropped the message, the worker died. The sweep tries again.
DISPATCH_GRACE = timedelta(minutes=2)
# A failing subscriber is tried again after DISPATCH_GRACE, then twice as long each time, up to
# once an hour.
DELIVERY_RETRY_MAX = timedelta(hours=1)
# Older events are left to staff: re-sending a days-old e-mail would confuse more than help,
# and a subscriber failing for that long needs a person.
DISPATCH_HORIZON = timedelta(days=2)
LAST_ERROR_LENGTH = 2000


def order_event_dispatch(*, event: OrderEvent) -> None:
    """Hand `event` to its channels, once each even if the dispatch task runs twice."""
    subscribers = answers("order_event_with_claim")
    now = timezone.now()
    with transaction.atomic():
        claimed = OrderEvent.objects.filter(pk=event.pk, dispatched_at__isnull=True).update(
            dispatched_at=now
        )
        if claimed:
            OrderEventDelivery.objects.bulk_create(
                [
                    OrderEventDelivery(event=event, subscriber=name, retry_at=now + DISPATCH_GRACE)
                    for name in subscribers
                ],
                ignore_conflicts=True,
            )
    for delivery in OrderEventDelivery.objects.filter(event=event, done_at__isnull=True):
        _deliver(delivery=delivery, event=event, subscriber=subscribers.get(delivery.subscriber))
    if claimed:
        for handler in answers("order_event_after_claim").values():
            handler(event=event)


def _deliver(
    *,
    delivery: OrderEventDelivery,
    event: OrderEvent,
    subscriber: Callable[..., Any] | None,
) -> None:
    try:
        with transaction.atomic():
            # Waits for a copy of this dispatch running it now: done there, skipped here.
            if not OrderEventDelivery.objects.filter(pk=delivery.pk, done_at__isnull=True).update(
                done_at=timezone.now(), attempts=F("attempts") + 1, last_error=""
            ):
                return
            if subscriber is None:
                raise LookupError(f"{delivery.subscriber!r} is no longer a subscriber in HOOKS")
            subscriber(event=event)
    except Exception as error:
        logger.exception(
            "order event %s: subscriber %r failed", delivery.event_id, delivery.subscriber
        )
        attempts = delivery.attempts + 1
        OrderEventDelivery.objects.filter(pk=delivery.pk, done_at__isnull=True).update(
            attempts=F("attempts") + 1,
            last_error=f"{type(error).__name__}: {error}"[:LAST_ERROR_LENGTH],
            retry_at=timezone.now() + min(DISPATCH_GRACE * 2 ** (attempts - 1), DELIVERY_RETRY_MAX),
        )


def order_events_pending(*, now: datetime, grace: timedelta = DISPATCH_GRACE) -> Q:
    """The events the sweep dispatches again: never claimed after `grace`, or with a failed
    or abandoned delivery due for another try; none older than DISPATCH_HORIZON."""
    due = OrderEventDelivery.objects.filter(done_at__isnull=True, retry_at__lte=now)
    return Q(created_at__gte=now - DISPATCH_HORIZON) & (
        Q(dispatched_at__isnull=True, created_at__lte=now - grace)
        | Q(pk__in=due.values("event_id"))
    )


def order_events_given_up(*, now: datetime) -> Q:
    """The events the sweep no longer tries (older than DISPATCH_HORIZON) that some channel
    never got: never claimed, or a delivery not done."""
    undelivered = OrderEventDelivery.objects.filter(done_at__isnull=True)
    return Q(created_at__lt=now - DISPATCH_HORIZON) & (
        Q(dispatched_at__isnull=True) | Q(pk__in=undelivered.values("event_id"))
    )

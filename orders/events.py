"""The order event bus. The state machine (orders.transitions) stores each OrderEvent and
queues one dispatch after its transaction commits; the dispatch hands the event to every
subscriber. orders imports none: e-mail (orders.notifications), provisioning (hosts), billing
and webhooks (api) are named in settings.HOOKS (rental.hooks), in the order they run.

A subscriber picks the promise it needs:
- `order_event_with_claim`: runs inside the transaction that claims the event
  (`dispatched_at`). What it writes (webhook delivery rows, sent later with their own retries)
  commits with the claim or not at all: a worker dying before the commit leaves the event to
  the next run, so nothing is lost and nothing is made twice.
- `order_event_after_claim`: runs once the claim has committed, for what cannot be taken back
  (an e-mail): sent at most once.
"""

from django.db import transaction
from django.utils import timezone

from orders.models import OrderEvent
from rental.hooks import answers


def order_event_dispatch(*, event: OrderEvent) -> None:
    """Hand `event` to its channels, once even if the dispatch task runs twice."""
    with transaction.atomic():
        claimed = OrderEvent.objects.filter(pk=event.pk, dispatched_at__isnull=True).update(
            dispatched_at=timezone.now()
        )
        if not claimed:
            return
        for handler in answers("order_event_with_claim").values():
            handler(event=event)
    for handler in answers("order_event_after_claim").values():
        handler(event=event)

"""Order events leave the domain here. The state machine (orders.transitions) stores each
OrderEvent and queues one dispatch after its transaction commits; the dispatch hands the event
to every channel subscribed. orders imports no channel: e-mail (orders.notifications) and
webhooks (api) subscribe in their AppConfig.ready().

A channel picks the promise it needs:
- `with_claim`: runs inside the transaction that claims the event (`dispatched_at`). What it
  writes (webhook delivery rows, sent later with their own retries) commits with the claim or
  not at all: a worker dying before the commit leaves the event to the next run, so nothing is
  lost and nothing is made twice.
- `after_claim`: runs once the claim has committed, for what cannot be taken back (an e-mail):
  sent at most once.
"""

from collections.abc import Callable

from django.db import transaction
from django.utils import timezone

from orders.models import OrderEvent
from rental.hooks import Hooks

# handler(event=) for each order event, by channel name.
with_claim: Hooks[Callable[..., object]] = Hooks()
after_claim: Hooks[Callable[..., object]] = Hooks()


def order_event_dispatch(*, event: OrderEvent) -> None:
    """Hand `event` to its channels, once even if the dispatch task runs twice."""
    with transaction.atomic():
        claimed = OrderEvent.objects.filter(pk=event.pk, dispatched_at__isnull=True).update(
            dispatched_at=timezone.now()
        )
        if not claimed:
            return
        for handler in with_claim:
            handler(event=event)
    for handler in after_claim:
        handler(event=event)

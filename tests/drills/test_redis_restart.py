"""Drill 2: the broker (a Redis of our own) crashes and restarts while customers order.

Orders live in PostgreSQL; their side effects (e-mail, webhooks) go through the broker after
commit. Without persistence, a crash loses what was queued, and while Redis is down nothing
can be queued: the order page must still answer, and every event must still be sent, once.
"""

import json
from collections import Counter

import pytest

from api.webhooks.services import webhook_endpoint_create
from orders.models import Order, OrderEvent
from orders.tasks import orders_dispatch_pending_task
from tests.drills.processes import wait_until
from tests.factories import TERMS_TICKED, accepted_terms

pytestmark = pytest.mark.django_db(transaction=True)


def _not_queued(event: OrderEvent) -> str:
    return f"order_event_dispatch_task({event.pk},) not queued"


def _order_through_the_page(client, gpu) -> Order:
    before = list(Order.objects.values_list("pk", flat=True))
    # "another": the same configuration, unpaid, would otherwise be offered back.
    form = {"environment": "pytorch", "quantity": "1", "term": "7", "another": "1", **TERMS_TICKED}
    response = client.post(f"/en/gpus/{gpu.slug}/configure/", form)
    assert response.status_code == 302, response.content[:500]
    order = Order.objects.exclude(pk__in=before).get()
    assert response["Location"].endswith(f"/account/orders/{order.number}/")
    return order


def _undispatched(orders) -> set[int]:
    return set(
        OrderEvent.objects.filter(order__in=orders, dispatched_at__isnull=True).values_list(
            "order_id", flat=True
        )
    )


def test_orders_placed_across_a_broker_crash_are_all_kept_and_all_notified_once(
    client, customer, gpu, broker, worker_factory, receiver, caplog, settings
):
    webhook_endpoint_create(user=customer, url=receiver.url, events=["order.created"])
    client.force_login(customer)
    # More orders than one account may hold unpaid: the drill is about the broker.
    settings.ORDERS_NEW_ACCOUNT_UNPAID_CEILING = {"orders": 10, "units": 10}

    queued_then_lost = [_order_through_the_page(client, gpu) for _ in range(2)]
    assert broker.client().llen("default") == 2

    broker.crash()
    while_down = []
    for _ in range(2):
        while_down.append(_order_through_the_page(client, gpu))
        # No hang on the dead broker: the page answered once queueing had failed, while the
        # broker was still down (it restarts below, after both pages answered).
        assert _not_queued(while_down[-1].events.get()) in caplog.text
    # Too fresh for the sweep: a task may still be on its way, so it is not queued again.
    assert orders_dispatch_pending_task() == 0

    broker.start()  # empty: the two tasks queued before the crash are gone
    after_restart = [_order_through_the_page(client, gpu) for _ in range(2)]
    assert broker.client().llen("default") == 2

    orders = queued_then_lost + while_down + after_restart
    assert Order.objects.filter(pk__in=[o.pk for o in orders]).count() == 6
    assert OrderEvent.objects.filter(order__in=orders).count() == 6

    worker = worker_factory(API_WEBHOOK_ALLOW_LOCAL_TARGETS="true")
    worker.start()
    wait_until(
        lambda: not _undispatched(after_restart), timeout=20, what="the queued events to run"
    )
    assert _undispatched(orders) == {o.pk for o in queued_then_lost + while_down}

    # The beat's sweep, twice (two beats, or a copy redelivered): what was lost runs once.
    orders_dispatch_pending_task.delay(0)
    orders_dispatch_pending_task.delay(0)
    wait_until(lambda: not _undispatched(orders), timeout=20, what="the lost events to run")
    # 2 dispatches queued after the restart, then 4 lost events queued by each sweep.
    wait_until(
        lambda: worker.log().count("order_event_dispatch_task") >= 2 * (2 + 4 + 4),
        timeout=20,
        what="every dispatch task received and run",
    )
    received = receiver.wait_for(6, timeout=20)

    assert orders_dispatch_pending_task(0) == 0
    created = Counter(json.loads(hook.body)["order"]["number"] for hook in received)
    assert created == {order.number: 1 for order in orders}
    subjects = worker.emails_by_subject()
    for order in orders:
        assert sum(n for subject, n in subjects.items() if order.number in subject) == 1


def test_order_create_commits_and_returns_while_the_broker_is_down(
    customer, gpu, pytorch, broker, caplog
):
    from orders.services import order_create

    broker.crash()
    order = order_create(
        terms=accepted_terms(), user=customer, gpu=gpu, environment=pytorch, quantity=1, term_days=3
    )
    event = OrderEvent.objects.get(order=order)
    assert event.dispatched_at is None
    assert _not_queued(event) in caplog.text

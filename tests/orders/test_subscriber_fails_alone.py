"""Each subscriber of an order event succeeds or fails on its own (orders.events): billing
failing on the "paid" event neither stops nor undoes provisioning, the webhooks or the e-mail;
its own work is rolled back, its error kept, and the beat's sweep tries it again until it
succeeds, once. A subscriber still failing when the sweep gives up waits in the staff's queue."""

from datetime import timedelta

import pytest
from django.core import mail
from django.db.models import F

from api.models import WebhookDelivery
from api.webhooks.services import webhook_endpoint_create
from backoffice.selectors import queue_entries
from billing.models import BillingDocument
from billing.services import billing_on_event
from orders.events import DISPATCH_HORIZON
from orders.models import OrderEvent, OrderEventDelivery, OrderStatus
from orders.tasks import orders_dispatch_pending_task
from tests.billing.helpers import order_paid

pytestmark = pytest.mark.django_db


class BillingDown:
    """Billing as it runs, raising after its work on the "paid" event while `down`: the
    facture it made must go with the error."""

    def __init__(self) -> None:
        self.down = True
        self.calls = 0

    def __call__(self, *, event: OrderEvent) -> None:
        billing_on_event(event=event)
        if event.new_status == OrderStatus.PAID:
            self.calls += 1
            if self.down:
                raise RuntimeError("the PDF renderer is out of memory")


@pytest.fixture
def billing_down(settings) -> BillingDown:
    billing = BillingDown()
    subscribers = {**settings.HOOKS["order_event_with_claim"], "billing": billing}
    settings.HOOKS = {**settings.HOOKS, "order_event_with_claim": subscribers}
    return billing


@pytest.fixture
def endpoint(customer, receiver):
    return webhook_endpoint_create(
        user=customer, url=f"{receiver.url}/hook", events=["order.status_changed"]
    )


def _deliveries(event: OrderEvent) -> dict[str, tuple[bool, int, str]]:
    return {
        delivery.subscriber: (delivery.done_at is not None, delivery.attempts, delivery.last_error)
        for delivery in event.deliveries.all()
    }


def _time_passes(delta: timedelta) -> None:
    OrderEventDelivery.objects.update(retry_at=F("retry_at") - delta)


def test_billing_failing_leaves_the_webhooks_and_the_email_done_and_is_tried_again_once(
    usdc, customer, endpoint, billing_down, worker_runs
):
    with worker_runs():
        order = order_paid(usdc, user=customer)
    paid = order.events.get(new_status=OrderStatus.PAID)

    # Before: the error rolled back the claim, and the webhooks and e-mail with it.
    assert WebhookDelivery.objects.filter(event=paid).count() == 1
    assert len(mail.outbox) == 1
    assert not BillingDocument.objects.filter(order=order).exists()  # undone with its error
    error = "RuntimeError: the PDF renderer is out of memory"
    assert _deliveries(paid) == {
        "provisioning": (True, 1, ""),
        "billing": (False, 1, error),
        "webhooks": (True, 1, ""),
    }

    # Not tried again before its time, then tried by the sweep: done, nothing else twice.
    with worker_runs():
        assert orders_dispatch_pending_task(0) == 0
    _time_passes(timedelta(minutes=2))
    billing_down.down = False
    with worker_runs():
        assert orders_dispatch_pending_task(0) == 1
        assert orders_dispatch_pending_task(0) == 0

    assert billing_down.calls == 2
    assert BillingDocument.objects.filter(order=order).count() == 1
    assert _deliveries(paid)["billing"] == (True, 2, "")
    assert WebhookDelivery.objects.filter(event=paid).count() == 1
    assert len(mail.outbox) == 1


def test_a_subscriber_failing_for_two_days_waits_in_the_staff_queue(
    usdc, customer, billing_down, worker_runs, client, staff
):
    with worker_runs():
        order = order_paid(usdc, user=customer)
    paid = order.events.get(new_status=OrderStatus.PAID)
    for _ in range(3):
        _time_passes(timedelta(hours=1))
        with worker_runs():
            assert orders_dispatch_pending_task(0) == 1
    assert _deliveries(paid)["billing"][:2] == (False, 4)
    counts = {entry.key: entry.count for entry in queue_entries()}
    assert counts["events_undelivered"] == 0  # still being tried

    OrderEvent.objects.filter(pk=paid.pk).update(
        created_at=F("created_at") - DISPATCH_HORIZON - timedelta(minutes=1)
    )
    _time_passes(timedelta(hours=1))
    with worker_runs():
        assert orders_dispatch_pending_task(0) == 0  # given up...
    entry = next(entry for entry in queue_entries() if entry.key == "events_undelivered")
    assert entry.count == 1  # ...but staff see it

    client.force_login(staff)
    assert list(client.get(entry.url).context["cl"].result_list) == [order]
    page = client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert "billing (4): RuntimeError: the PDF renderer is out of memory" in page

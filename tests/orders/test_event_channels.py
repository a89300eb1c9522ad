"""Order events leave through their subscribed channels (orders.events): one e-mail where the
e-mail channel has one, and one webhook per subscribed endpoint, for each event; also when the
broker was down as the event committed (the beat's sweep then dispatches it, once)."""

import json
from datetime import timedelta

import pytest
from django.core import mail

from api.models import WebhookDelivery
from api.webhooks.services import webhook_endpoint_create
from orders.models import OrderEvent, OrderStatus
from orders.services import orders_expire
from orders.tasks import order_event_dispatch_task, orders_dispatch_pending_task
from tests.drills.processes import broker_down
from tests.factories import order_placed
from tests.hooks import answer_added


@pytest.fixture
def endpoints(customer, receiver):
    """Two endpoints of the owner that want every order event, one that wants another kind."""
    every = ["order.created", "order.status_changed"]
    return [
        webhook_endpoint_create(user=customer, url=f"{receiver.url}/{name}", events=events)
        for name, events in (("a", every), ("b", every), ("claims", ["order.payment_claimed"]))
    ]


def _webhooks_by_endpoint(receiver) -> dict[str, list[tuple[str, str, str]]]:
    sent: dict[str, list[tuple[str, str, str]]] = {}
    for request in receiver.requests:
        body = json.loads(request.body)
        sent.setdefault(request.path.rsplit("/", 1)[-1], []).append(
            (body["id"], body["type"], body["event"]["new_status"])
        )
    return sent


def test_every_order_event_sends_one_email_and_one_webhook_per_subscribed_endpoint(
    customer, gpu, pytorch, endpoints, receiver, celery_eager, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        order = order_placed(customer, gpu, pytorch)
    with django_capture_on_commit_callbacks(execute=True):
        assert orders_expire(now=order.payment_deadline + timedelta(seconds=1)) == 1

    created, expired = OrderEvent.objects.filter(order=order).order_by("created_at", "id")
    assert [m.subject for m in mail.outbox] == [
        f"Commande {order.number} reçue",
        f"La commande {order.number} a expiré sans paiement",
    ]
    expected = [
        (f"evt_{created.pk}", "order.created", OrderStatus.AWAITING_PAYMENT),
        (f"evt_{expired.pk}", "order.status_changed", OrderStatus.EXPIRED),
    ]
    assert _webhooks_by_endpoint(receiver) == {"a": expected, "b": expected}
    # Nothing left for the sweep, and a copy of a dispatch task sends nothing more.
    with django_capture_on_commit_callbacks(execute=True):
        assert orders_dispatch_pending_task(0) == 0
        order_event_dispatch_task(created.pk)
    assert len(mail.outbox) == 2 and len(receiver.requests) == 4


def test_an_event_committed_while_the_broker_is_down_is_sent_once_by_the_sweep(
    customer,
    gpu,
    pytorch,
    endpoints,
    receiver,
    celery_eager,
    django_capture_on_commit_callbacks,
    caplog,
):
    with broker_down(celery_eager), django_capture_on_commit_callbacks(execute=True):
        order = order_placed(customer, gpu, pytorch)
    event = OrderEvent.objects.get(order=order)
    assert event.dispatched_at is None
    assert f"order_event_dispatch_task({event.pk},) not queued" in caplog.text
    assert not mail.outbox and not WebhookDelivery.objects.exists()

    # The broker is back: the beat's sweep queues the event, and a second sweep (or a copy of
    # the task redelivered) finds it dispatched.
    with django_capture_on_commit_callbacks(execute=True):
        assert orders_dispatch_pending_task(0) == 1
        assert orders_dispatch_pending_task(0) == 0
        order_event_dispatch_task(event.pk)

    assert [m.subject for m in mail.outbox] == [f"Commande {order.number} reçue"]
    expected = [(f"evt_{event.pk}", "order.created", OrderStatus.AWAITING_PAYMENT)]
    assert _webhooks_by_endpoint(receiver) == {"a": expected, "b": expected}
    assert set(WebhookDelivery.objects.values_list("status", flat=True)) == {"delivered"}


def test_a_channel_subscribed_later_gets_each_event_once_and_orders_does_not_change(
    customer, gpu, pytorch, celery_eager, django_capture_on_commit_callbacks, settings
):
    seen = []
    answer_added(
        settings, "order_event_after_claim", "test-channel", lambda *, event: seen.append(event.pk)
    )
    with django_capture_on_commit_callbacks(execute=True):
        order = order_placed(customer, gpu, pytorch)
        order_event_dispatch_task(order.events.get().pk)  # a copy of the task
    assert seen == [order.events.get().pk]

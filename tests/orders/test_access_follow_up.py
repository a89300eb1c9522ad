"""After payment the order page says when access usually comes, its poll brings every part
that an event changed, and an order whose access is late reaches the staff's queue."""

from datetime import timedelta

import pytest
from django.utils import timezone

from hosts.models import Host
from orders.models import Order, OrderEvent, OrderStatus
from orders.queue import order_queue_cases
from orders.selectors import order_live_marker
from orders.transitions import order_transition
from tests.factories import OrderFactory

pytestmark = pytest.mark.django_db

S = OrderStatus


@pytest.fixture
def provisioning_order(customer, gpu, pytorch):
    Host.objects.filter(gpu=gpu).update(provisioning=Host.Provisioning.SSH)
    order = OrderFactory(user=customer, gpu=gpu, environment=pytorch, status=S.PROVISIONING)
    OrderEvent.objects.create(
        order=order, old_status=S.CONFIRMING, new_status=S.PAID, actor=OrderEvent.Actor.SYSTEM
    )
    return order


def _late(now) -> set[str]:
    case = next(case for case in order_queue_cases(now=now) if case.key == "access_late")
    return set(Order.objects.filter(case.condition).values_list("number", flat=True))


def test_the_page_gives_the_usual_delay_then_says_the_team_knows_and_staff_see_it(
    client, customer, provisioning_order, settings
):
    settings.ACCESS_LATE_MINUTES = 5
    client.force_login(customer)
    url = f"/fr/account/orders/{provisioning_order.number}/"
    assert "En général moins d\u2019une minute." in client.get(url).content.decode()
    assert _late(timezone.now()) == set()

    OrderEvent.objects.filter(order=provisioning_order).update(
        created_at=timezone.now() - timedelta(minutes=6)
    )
    page = client.get(url).content.decode()
    assert "prend plus de temps que d\u2019habitude" in page
    assert _late(timezone.now()) == {provisioning_order.number}
    # Access granted: off the queue.
    Order.objects.filter(pk=provisioning_order.pk).update(access_host="127.0.0.1")
    assert _late(timezone.now()) == set()


def test_the_status_poll_brings_the_other_parts_only_after_an_event(
    client, customer, provisioning_order
):
    client.force_login(customer)
    status = f"/fr/account/orders/{provisioning_order.number}/status/"
    shown = order_live_marker(events=list(provisioning_order.events.all()))
    quiet = client.get(f"{status}?seen={shown}").content.decode()
    assert 'id="order-live"' not in quiet and 'id="order-aside"' not in quiet
    # The history only grows with events: a poll with nothing new leaves the page's in place.
    assert 'id="order-history"' not in quiet

    order_transition(
        order=provisioning_order,
        to=S.ACTIVE,
        actor=OrderEvent.Actor.SYSTEM,
        fields={"access_host": "h"},
    )
    moved = client.get(f"{status}?seen={shown}").content.decode()
    assert 'id="order-live" data-hx-swap-oob="true"' in moved
    assert 'id="order-aside" data-hx-swap-oob="true"' in moved
    assert 'id="order-history" data-hx-swap-oob="true"' in moved
    assert 'id="journal-title"' in moved

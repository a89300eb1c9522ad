"""An active rental shows its time left (kept fresh by the status poll) and can be ended early
by its owner: asked first, no refund, completed with the reason, told once by e-mail and
webhook, its units free again."""

import json
import re
from datetime import timedelta

import pytest
from django.core import mail
from django.test import Client
from django.utils import timezone

from api.webhooks.services import webhook_endpoint_create
from orders.models import OrderEvent, OrderStatus
from orders.services import OrderError, order_stop_early, orders_complete
from orders.stock import gpu_available_units
from tests.factories import OrderFactory
from tests.payments.test_lock_order import race

S = OrderStatus
REASON = "stopped early by the customer"


def _active(customer, gpu, *, left: timedelta, quantity: int = 2):
    now = timezone.now()
    return OrderFactory(
        user=customer,
        gpu=gpu,
        quantity=quantity,
        status=S.ACTIVE,
        activated_at=now - timedelta(days=1),
        ends_at=now + left,
        access_host="gpu-12.example.net",
    )


@pytest.mark.django_db
def test_an_active_rental_shows_its_time_left_and_the_poll_refreshes_it(client, customer, gpu):
    # Half an hour of margin: the words cannot change while the test runs.
    order = _active(customer, gpu, left=timedelta(days=2, hours=5, minutes=30))
    client.force_login(customer)
    page = client.get(f"/en/account/orders/{order.number}/").content.decode()
    assert 'data-testid="time-left"' in page
    assert "2\u00a0days, 5\u00a0hours" in page
    # The live part polls its own URL; that answer carries the time left, recomputed.
    poll_url = re.search(r'data-hx-get="([^"]+)"', page).group(1)
    assert poll_url.startswith(f"/en/account/orders/{order.number}/status/?seen=")
    order.ends_at = timezone.now() + timedelta(hours=3, minutes=30)
    order.save(update_fields=["ends_at"])
    poll = client.get(poll_url).content.decode()
    assert "3\u00a0hours" in poll and "2\u00a0days" not in poll
    french = client.get(poll_url.replace("/en/", "/fr/", 1)).content.decode()
    assert "Temps restant" in french and "3\u00a0heures" in french
    assert "Terminer maintenant" in french


@pytest.mark.django_db
def test_stopping_early_asks_first_and_says_there_is_no_refund(client, customer, gpu):
    order = _active(customer, gpu, left=timedelta(days=3))
    client.force_login(customer)
    question = client.get(f"/fr/account/orders/{order.number}/stop/")
    assert question.status_code == 200
    page = question.content.decode()
    assert "Aucun remboursement" in page
    assert f'action="/fr/account/orders/{order.number}/stop/"' in page
    order.refresh_from_db()
    assert order.status == S.ACTIVE  # asking changes nothing


@pytest.mark.django_db
def test_the_customer_stops_a_rental_early_once(
    client, customer, gpu, receiver, celery_eager, django_capture_on_commit_callbacks
):
    webhook_endpoint_create(
        user=customer, url=f"{receiver.url}/hook", events=["order.status_changed"]
    )
    order = _active(customer, gpu, left=timedelta(days=3))
    units_before = gpu_available_units(gpu=gpu)
    client.force_login(customer)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/en/account/orders/{order.number}/stop/", follow=True)
    page = response.content.decode()
    assert "no refund" in page.lower()

    order.refresh_from_db()
    assert order.status == S.COMPLETED
    assert order.ends_at <= timezone.now()
    event = order.events.get(kind=OrderEvent.Kind.STATUS, new_status=S.COMPLETED)
    assert (event.old_status, event.actor, event.actor_user) == (S.ACTIVE, "customer", customer)
    assert event.reason == REASON
    assert REASON in page  # on the timeline
    assert gpu_available_units(gpu=gpu) == units_before + 2
    assert [m.subject for m in mail.outbox] == [f"La commande {order.number} est terminée"]
    assert "avant son terme" in mail.outbox[0].body and "pas remboursé" in mail.outbox[0].body
    [hook] = [json.loads(r.body) for r in receiver.requests]
    assert (hook["type"], hook["event"]["new_status"]) == ("order.status_changed", "completed")

    # A second press (another tab) changes nothing and sends nothing.
    with django_capture_on_commit_callbacks(execute=True):
        again = client.post(f"/en/account/orders/{order.number}/stop/", follow=True)
    assert "Only an active rental can be ended" in again.content.decode()
    assert order.events.filter(new_status=S.COMPLETED).count() == 1
    assert len(mail.outbox) == 1 and len(receiver.requests) == 1


@pytest.mark.django_db
def test_only_the_owner_stops_and_only_an_active_rental(client, customer, outsider, gpu):
    order = _active(customer, gpu, left=timedelta(days=3))
    client.force_login(outsider)
    assert client.get(f"/en/account/orders/{order.number}/stop/").status_code == 404
    assert client.post(f"/en/account/orders/{order.number}/stop/").status_code == 404
    paid = OrderFactory(user=customer, gpu=gpu, status=S.PAID)
    with pytest.raises(OrderError):
        order_stop_early(order=paid, user=customer)
    client.force_login(customer)
    assert client.get(f"/en/account/orders/{paid.number}/stop/").status_code == 302
    for stays in (order, paid):
        stays.refresh_from_db()
    assert (order.status, paid.status) == (S.ACTIVE, S.PAID)


@pytest.mark.django_db
def test_stop_is_csrf_protected(customer, gpu):
    order = _active(customer, gpu, left=timedelta(days=3))
    client = Client(enforce_csrf_checks=True)
    client.force_login(customer)
    assert client.post(f"/en/account/orders/{order.number}/stop/").status_code == 403
    order.refresh_from_db()
    assert order.status == S.ACTIVE


@pytest.mark.django_db(transaction=True)
def test_a_stop_racing_the_end_of_the_term_completes_the_rental_once(customer, gpu):
    order = _active(customer, gpu, left=timedelta(seconds=1))
    term_end = order.ends_at

    # The beat has read the rental as due when the customer's stop commits.
    outcome = race(
        pause_after={"beat": '"orders_order"."ends_at" <='},
        beat=lambda: orders_complete(now=term_end),
        customer=lambda: order_stop_early(order=order, user=customer),
    )

    assert sorted(map(repr, outcome.values())) == ["0", "True"], outcome
    order.refresh_from_db()
    assert order.status == S.COMPLETED
    assert order.events.filter(new_status=S.COMPLETED).count() == 1

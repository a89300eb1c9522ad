import pytest
from django.test import Client

from orders.models import Order, OrderStatus
from tests.factories import OrderFactory

pytestmark = pytest.mark.django_db
S = OrderStatus


def test_order_list_shows_only_my_orders(client, customer, outsider):
    mine = OrderFactory(user=customer)
    theirs = OrderFactory(user=outsider)
    client.force_login(customer)
    page = client.get("/fr/account/orders/").content.decode()
    assert mine.number in page
    assert theirs.number not in page


def test_an_outsider_gets_404_on_another_customers_order(client, customer, outsider):
    order = OrderFactory(user=customer)
    client.force_login(outsider)
    assert client.get(f"/fr/account/orders/{order.number}/").status_code == 404
    assert client.get(f"/fr/account/orders/{order.number}/status/").status_code == 404
    assert client.post(f"/fr/account/orders/{order.number}/cancel/").status_code == 404
    order.refresh_from_db()
    assert order.status == S.AWAITING_PAYMENT


def test_order_pages_require_login(client, customer):
    order = OrderFactory(user=customer)
    for url in ("/fr/account/orders/", f"/fr/account/orders/{order.number}/"):
        response = client.get(url)
        assert response.status_code == 302
        assert "/accounts/login/" in response["Location"]


def test_customer_cancels_an_unpaid_order(client, customer):
    order = OrderFactory(user=customer)
    client.force_login(customer)
    response = client.post(f"/en/account/orders/{order.number}/cancel/")
    assert response.status_code == 302
    order.refresh_from_db()
    assert order.status == S.CANCELLED
    event = order.events.get()
    assert (event.actor, event.actor_user) == ("customer", customer)


def test_a_paid_order_cannot_be_cancelled_by_the_customer(client, customer):
    order = OrderFactory(user=customer, status=S.PAID)
    client.force_login(customer)
    response = client.post(f"/en/account/orders/{order.number}/cancel/", follow=True)
    assert "Only an unpaid order can be cancelled." in response.content.decode()
    order.refresh_from_db()
    assert order.status == S.PAID


def test_cancel_is_csrf_protected(customer):
    order = OrderFactory(user=customer)
    client = Client(enforce_csrf_checks=True)
    client.force_login(customer)
    assert client.post(f"/fr/account/orders/{order.number}/cancel/").status_code == 403
    order.refresh_from_db()
    assert order.status == S.AWAITING_PAYMENT


def test_order_page_timeline_marks_done_current_and_upcoming_steps(client, customer):
    order = OrderFactory(user=customer)
    client.force_login(customer)
    page = client.get(f"/fr/account/orders/{order.number}/").content.decode()
    assert 'step-current" data-status="awaiting_payment"' in page
    assert 'step-upcoming" data-status="paid"' in page
    assert "Paiement en attente" in page or "En attente de paiement" in page


def test_lowercase_order_number_finds_the_order(client, customer):
    OrderFactory(user=customer, number="LG-ABCD-EFGH")
    client.force_login(customer)
    assert client.get("/fr/account/orders/lg-abcd-efgh/").status_code == 200
    assert client.get("/fr/account/orders/lg-abcd-efgh/payment/status/").status_code == 200
    assert Order.objects.count() == 1

"""Answers served from the cache (rental.responsecache, orders.versions): never to another
account, never stale once a service changed what they show, never with another browser's CSRF
token."""

import threading
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.db import connection
from django.middleware.csrf import CSRF_TOKEN_LENGTH, _unmask_cipher_token
from django.test import Client
from django.utils import timezone

from accounts.services import api_key_create, api_key_revoke
from billing.services import invoice_issue
from orders.extensions import extension_create
from orders.models import OrderEvent, OrderStatus
from orders.services import order_cancel
from orders.transitions import order_event_record
from orders.versions import order_lifetime
from payments.models import ScanCursor, Transfer
from payments.watcher.scanner import confirming_orders_changed
from payments.watcher.settlement import transfer_orphan
from rental.responsecache import CSRF_PLACEHOLDER, LIFETIME
from tests.api.conftest import key_client
from tests.cache import cache_empty, cache_unreachable
from tests.factories import OrderFactory, accepted_terms
from tests.payments.helpers import (
    order_with_invoice,
    transfer_observed_and_settled,
)

pytestmark = pytest.mark.django_db


def _urls(order) -> list[str]:
    base = f"/en/account/orders/{order.number}/"
    return [base, f"{base}status/", f"{base}payment/status/"]


def _signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_an_outsider_gets_404_for_an_order_whose_pages_are_stored(customer, outsider, usdc):
    order = order_with_invoice(usdc, user=customer).order
    owner, stranger = _signed_in(customer), _signed_in(outsider)
    for url in _urls(order):
        assert owner.get(url).status_code == 200  # stored now
        assert stranger.get(url).status_code == 404
    assert key_client(_api_key(outsider)).get(f"/api/v1/orders/{order.number}/").status_code == 404


def _api_key(user) -> str:
    return api_key_create(user=user, name="k")[1]


def test_each_customer_sees_their_own_order_list_at_the_same_address(customer, outsider, usdc):
    mine = order_with_invoice(usdc, user=customer).order
    theirs = order_with_invoice(usdc, user=outsider).order
    first = _signed_in(customer).get("/en/account/orders/").content.decode()
    second = _signed_in(outsider).get("/en/account/orders/").content.decode()
    assert mine.number in first and theirs.number not in first
    assert theirs.number in second and mine.number not in second


def test_the_order_list_is_stored_its_whole_lifetime_and_shows_a_new_status_at_once(customer, usdc):
    """Nothing on the list changes by the clock: it is not rendered again at each minute (16
    customers' lists at once, the tail of the bench), only when an order on it changes."""
    order = order_with_invoice(usdc, user=customer).order
    client = _signed_in(customer)
    assert client.get("/en/account/orders/").status_code == 200  # stored
    (key,) = _stored_answer_keys()
    assert cache._cache.get_client().ttl(key) > LIFETIME - 5
    order_cancel(order=order, actor=OrderEvent.Actor.CUSTOMER, actor_user=customer)
    assert "status-cancelled" in client.get("/en/account/orders/").content.decode()


def test_a_new_event_shows_at_the_next_status_poll(customer, usdc):
    order = order_with_invoice(usdc, user=customer).order
    client = _signed_in(customer)
    url = f"/en/account/orders/{order.number}/status/"
    assert "stored-answer-check" not in client.get(url).content.decode()
    order_event_record(
        order=order,
        kind=OrderEvent.Kind.NOTE,
        actor=OrderEvent.Actor.SYSTEM,
        reason="stored-answer-check",
    )
    assert "stored-answer-check" in client.get(url).content.decode()


def test_a_transfer_and_each_new_block_show_at_the_next_payment_poll(customer, usdc):
    invoice = order_with_invoice(usdc, user=customer)
    client = _signed_in(customer)
    url = f"/en/account/orders/{invoice.order.number}/payment/status/"
    api = key_client(_api_key(customer))
    api_url = f"/api/v1/orders/{invoice.order.number}/"
    assert "Transfers seen" not in client.get(url).content.decode()
    assert api.get(api_url).json()["payment"]["transfers"] == []
    ScanCursor.objects.filter(chain=usdc.chain).update(head_block=1)
    transfer_observed_and_settled(invoice, int(invoice.amount_due))
    assert "1 of" in client.get(url).content.decode()
    assert api.get(api_url).json()["payment"]["transfers"][0]["confirmations"] == 1
    # Only the chain moved, as a scan moves it: the confirmations count from its head.
    ScanCursor.objects.filter(chain=usdc.chain).update(head_block=2)
    confirming_orders_changed(chain=usdc.chain)
    assert "2 of" in client.get(url).content.decode()
    assert api.get(api_url).json()["payment"]["transfers"][0]["confirmations"] == 2
    transfer_orphan(transfer=Transfer.objects.get(invoice=invoice))
    assert "reorganisation" in client.get(url).content.decode()


def test_each_browser_gets_its_own_csrf_token_in_a_stored_page(customer, usdc):
    order = order_with_invoice(usdc, user=customer).order
    url = f"/en/account/orders/{order.number}/"
    first, second = _signed_in(customer), _signed_in(customer)
    pages = [first.get(url), second.get(url)]  # the second is the stored page
    for client, page in zip((first, second), pages, strict=True):
        body = page.content.decode()
        assert CSRF_PLACEHOLDER not in body
        token = body.split('name="csrfmiddlewaretoken" value="', 1)[1].split('"', 1)[0]
        client.cookies["csrftoken"] = page.cookies["csrftoken"].value
        cancel = Client(enforce_csrf_checks=True)
        cancel.cookies = client.cookies
        response = cancel.post(
            f"/en/account/orders/{order.number}/cancel/", {"csrfmiddlewaretoken": token}
        )
        assert response.status_code == 302  # accepted: CSRF refusal is a 403


@pytest.mark.django_db(transaction=True)
def test_the_version_is_read_again_on_a_new_database_connection(customer, usdc):
    """The version's statement is prepared per database session (orders.versions): a
    connection opened again prepares it again."""
    order = order_with_invoice(usdc, user=customer).order
    client = _signed_in(customer)
    url = f"/en/account/orders/{order.number}/status/"
    assert client.get(url).status_code == 200
    connection.close()
    cache_empty()
    assert client.get(url).status_code == 200


@pytest.mark.django_db(transaction=True)
def test_threads_read_lifetimes_at_once_each_on_its_own_connection(customer, usdc):
    """gunicorn's threaded workers: each thread's connection prepares its own statement."""
    order = order_with_invoice(usdc, user=customer).order
    start = threading.Barrier(4)
    lifetimes: list[int | BaseException] = []

    def read():
        try:
            start.wait()
            for _ in range(5):
                lifetimes.append(order_lifetime(user_id=customer.pk, number=order.number))
        except BaseException as error:
            lifetimes.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=read) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(lifetimes) == 20 and all(isinstance(seconds, int) for seconds in lifetimes)
    assert 0 < min(lifetimes) <= LIFETIME, lifetimes


def test_with_the_cache_unreachable_pages_are_rendered_and_keys_revoked(settings, customer, usdc):
    order = order_with_invoice(usdc, user=customer).order
    api_key, _raw = api_key_create(user=customer, name="k")
    client = _signed_in(customer)
    cache_unreachable(settings)
    for url in [*_urls(order), "/en/account/orders/"]:
        assert client.get(url).status_code == 200
    assert api_key_revoke(api_key=api_key)


def test_made_up_queries_store_no_more_than_two_answers_per_page(customer, usdc):
    order = order_with_invoice(usdc, user=customer).order
    client = _signed_in(customer)
    url = f"/en/account/orders/{order.number}/payment/status/"
    for shown in ["a", "b", "c", "d", "e"]:
        assert client.get(url, {"shown": shown}).status_code == 200
    stored = [cache.get(key.decode().split(":", 2)[2]) for key in _stored_answer_keys()]
    assert [len(answers) for answers in stored] == [2]
    page = client.get(f"/en/account/orders/{order.number}/", {"x": "1"}).content.decode()
    assert f"/fr/account/orders/{order.number}/?x=1" in page  # its own language links


def _stored_answer_keys() -> list[bytes]:
    # This test's keys only: the tests before leave theirs (tests/cache.py).
    return list(cache._cache.get_client().scan_iter(match=cache.make_key("*answer:page:*")))


def test_a_new_extension_and_an_invoice_show_at_the_next_load_of_a_stored_page(customer, usdc):
    now = timezone.now()
    rental = OrderFactory(
        user=customer,
        status=OrderStatus.ACTIVE,
        activated_at=now - timedelta(days=1),
        ends_at=now + timedelta(days=2),
    )
    client = _signed_in(customer)
    url = f"/en/account/orders/{rental.number}/"
    assert 'data-testid="billing-section"' not in client.get(url).content.decode()  # stored

    extension = extension_create(rental=rental, user=customer, term_days=7, terms=accepted_terms())
    assert extension.number in client.get(url).content.decode()
    document = invoice_issue(order=rental)
    page = client.get(url).content.decode()
    assert 'data-testid="billing-section"' in page and document.number in page


def test_while_nothing_changes_a_stored_page_is_served_with_its_session_read_alone(
    customer, usdc, django_assert_num_queries
):
    invoice = order_with_invoice(usdc, user=customer)
    client = _signed_in(customer)
    for url in [*_urls(invoice.order), "/en/account/orders/"]:
        assert client.get(url).status_code == 200  # stored
        with django_assert_num_queries(1):  # the session with its account
            assert client.get(url).status_code == 200


def test_a_page_is_stored_no_longer_than_its_payment_window_stays_open(customer, usdc):
    invoice = order_with_invoice(usdc, user=customer)
    order = invoice.order
    seconds = order_lifetime(user_id=customer.pk, number=order.number)
    assert seconds <= (order.payment_deadline - timezone.now()).total_seconds()


def test_a_stored_answer_s_token_is_the_browser_s_secret_masked_afresh(customer, usdc):
    """rental.responsecache masks the browser's CSRF secret itself (one read of randomness):
    each answer a new token, every one Django's check accepts."""
    order = order_with_invoice(usdc, user=customer).order
    client = _signed_in(customer)
    url = f"/en/account/orders/{order.number}/status/"
    first = client.get(url)  # no CSRF cookie yet: Django's token, and its cookie
    secret = first.cookies["csrftoken"].value
    tokens = set()
    for _ in range(3):
        body = client.get(url).content.decode()
        token = body.split('name="csrfmiddlewaretoken" value="', 1)[1].split('"', 1)[0]
        assert len(token) == CSRF_TOKEN_LENGTH and _unmask_cipher_token(token) == secret
        tokens.add(token)
    assert len(tokens) == 3


def test_a_new_block_leaves_the_pages_of_orders_with_nothing_confirming_stored(
    customer, usdc, django_assert_num_queries
):
    """Only a transfer still confirming counts from the chain's head: other orders' pages stay
    stored across blocks."""
    invoice = order_with_invoice(usdc, user=customer)
    client = _signed_in(customer)
    url = f"/en/account/orders/{invoice.order.number}/payment/status/"
    assert client.get(url).status_code == 200  # stored
    ScanCursor.objects.filter(chain=usdc.chain).update(head_block=5)
    confirming_orders_changed(chain=usdc.chain)  # as every scan ends
    with django_assert_num_queries(1):  # the session with its account: served as stored
        assert client.get(url).status_code == 200

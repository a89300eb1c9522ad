"""Answers served from the cache (rental.responsecache, orders.versions): never to another
account, never stale once something they show changed, never with another browser's CSRF
token."""

import threading
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.db import connection
from django.db.models import F
from django.middleware.csrf import CSRF_TOKEN_LENGTH, _unmask_cipher_token
from django.test import Client
from django.utils import timezone

from accounts.services import api_key_create, api_key_revoke
from billing.services import invoice_issue
from orders.extensions import extension_create
from orders.models import OrderEvent, OrderStatus
from orders.versions import order_version
from payments.models import ScanCursor, Transfer
from rental.responsecache import CSRF_PLACEHOLDER
from tests.api.conftest import key_client
from tests.cache import cache_empty, cache_unreachable
from tests.factories import OrderFactory, accepted_terms
from tests.payments.helpers import order_with_invoice, transfer_recorded

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


def test_a_new_event_shows_at_the_next_status_poll(customer, usdc):
    order = order_with_invoice(usdc, user=customer).order
    client = _signed_in(customer)
    url = f"/en/account/orders/{order.number}/status/"
    assert "stored-answer-check" not in client.get(url).content.decode()
    OrderEvent.objects.create(
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
    transfer = transfer_recorded(invoice)
    ScanCursor.objects.filter(chain=usdc.chain).update(head_block=1)
    assert "1 of" in client.get(url).content.decode()
    assert api.get(api_url).json()["payment"]["transfers"][0]["confirmations"] == 1
    # Only the chain moved: the confirmations count from its head.
    ScanCursor.objects.filter(chain=usdc.chain).update(head_block=2)
    assert "2 of" in client.get(url).content.decode()
    assert api.get(api_url).json()["payment"]["transfers"][0]["confirmations"] == 2
    Transfer.objects.filter(pk=transfer.pk).update(status=Transfer.Status.ORPHANED)
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
def test_threads_read_versions_at_once_each_on_its_own_connection(customer, usdc):
    """gunicorn's threaded workers: each thread's connection prepares its own statement."""
    order = order_with_invoice(usdc, user=customer).order
    start = threading.Barrier(4)
    digests: list[str | BaseException] = []

    def read():
        try:
            start.wait()
            for _ in range(5):
                version = order_version(user=customer, number=order.number)
                digests.append(version.digest)
        except BaseException as error:
            digests.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=read) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(digests) == 20 and len(set(digests)) == 1, digests


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
    return list(cache._cache.get_client().scan_iter(match="*:answer:page:*"))


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


def _payment_rows(invoice) -> dict[str, object]:
    asset = invoice.asset
    return {
        "invoice": invoice,
        "rate": invoice.rate,
        "asset": asset,
        "chain": asset.chain,
        "cursor": ScanCursor.objects.get(chain=asset.chain),
    }


@pytest.mark.parametrize("row", ["invoice", "rate", "asset", "chain", "cursor"])
def test_any_write_to_a_row_the_payment_part_reads_changes_the_version(customer, usdc, row):
    """Even a second write in the same transaction (each test runs in one): a row's version
    is where it lies, not only which transaction wrote it."""
    invoice = order_with_invoice(usdc, user=customer)

    def version() -> str:
        found = order_version(user=customer, number=invoice.order.number)
        assert found is not None
        return found.digest

    target = _payment_rows(invoice)[row]
    model = type(target)
    seen = {version()}
    for _write in range(2):
        model.objects.filter(pk=target.pk).update(id=F("id"))  # the same values
        seen.add(version())
    assert len(seen) == 3


def test_the_version_stays_the_same_while_nothing_is_written(customer, usdc):
    invoice = order_with_invoice(usdc, user=customer)
    transfer_recorded(invoice, amount=1)
    number = invoice.order.number
    assert order_version(user=customer, number=number) == order_version(
        user=customer, number=number
    )


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

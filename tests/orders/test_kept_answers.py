"""Answers kept in the web process's memory (rental.responsecache.Kept, rental.changes): served
again without a round trip while nothing they show changed, and never once a change to what
they show was heard: a new event, a block confirming a transfer, the sign-out of the session,
a new password. Each test commits (a real transaction), as requests do."""

import time
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.models import Session
from accounts.services import api_key_create
from orders.models import Order, OrderEvent
from payments.models import Asset, Rate, ScanCursor
from rental import changes
from rental.responsecache import Kept
from tests.api.conftest import key_client
from tests.changes import changes_heard
from tests.factories import OrderFactory
from tests.payments.helpers import order_with_invoice, rate_fresh, transfer_recorded

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _a_minute_to_go():
    """An unpaid order's answers and the order list are read again each minute: no test
    starts in the last seconds of one."""
    second = timezone.now().second
    if second >= 55:
        time.sleep(60.5 - second)


def _signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _get(client: Client, url: str) -> tuple[int, str, int]:
    """Status, body and the number of SQL queries of one request, once the feed heard every
    change committed before it."""
    changes_heard()
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    return response.status_code, response.content.decode(), len(queries)


def _note(order, reason: str) -> None:
    OrderEvent.objects.create(
        order=order, kind=OrderEvent.Kind.NOTE, actor=OrderEvent.Actor.SYSTEM, reason=reason
    )


@pytest.mark.parametrize("part", ["", "status/", "payment/status/"])
def test_an_answer_read_again_costs_no_query_until_its_order_changes(customer, usdc, part):
    order = order_with_invoice(usdc, user=customer).order
    client = _signed_in(customer)
    url = f"/en/account/orders/{order.number}/{part}"
    assert _get(client, url)[0] == 200
    status, body, queries = _get(client, url)
    assert (status, queries) == (200, 0)
    _note(order, "kept-answer-check")
    status, body, queries = _get(client, url)
    assert status == 200 and queries > 0
    if part != "payment/status/":
        assert "kept-answer-check" in body
    assert _get(client, url)[2] == 0


def test_the_order_list_shows_a_new_order_at_once(customer, usdc):
    client = _signed_in(customer)
    url = "/en/account/orders/"
    _get(client, url)
    assert _get(client, url)[2] == 0
    order = order_with_invoice(usdc, user=customer).order
    assert order.number in _get(client, url)[1]


def test_another_account_s_change_keeps_the_answer(customer, outsider, usdc):
    mine = order_with_invoice(usdc, user=customer).order
    theirs = order_with_invoice(usdc, user=outsider).order
    client = _signed_in(customer)
    url = f"/en/account/orders/{mine.number}/status/"
    _get(client, url)
    _note(theirs, "someone else's")
    assert _get(client, url)[2] == 0


def test_each_block_shows_while_a_transfer_confirms_and_not_after(customer, usdc):
    invoice = order_with_invoice(usdc, user=customer)
    transfer = transfer_recorded(invoice)
    ScanCursor.objects.filter(chain=usdc.chain).update(head_block=1)
    client = _signed_in(customer)
    url = f"/en/account/orders/{invoice.order.number}/payment/status/"
    assert "1 of" in _get(client, url)[1]
    ScanCursor.objects.filter(chain=usdc.chain).update(head_block=2)
    assert "2 of" in _get(client, url)[1]
    assert _get(client, url)[2] == 0
    transfer.status = transfer.Status.CONFIRMED
    transfer.save(update_fields=["status"])
    _get(client, url)
    # Confirmed, the transfer no longer counts from the head: new blocks change nothing.
    ScanCursor.objects.filter(chain=usdc.chain).update(head_block=3)
    assert _get(client, url)[2] == 0


def test_the_api_answer_is_kept_and_follows_its_order(customer, usdc):
    order = order_with_invoice(usdc, user=customer).order
    api = key_client(api_key_create(user=customer, name="k")[1])
    url = f"/api/v1/orders/{order.number}/"
    changes_heard()
    assert api.get(url).json()["status"] == order.status
    order.status = "cancelled"
    order.save(update_fields=["status"])
    changes_heard()
    assert api.get(url).json()["status"] == "cancelled"


def test_a_session_signed_out_elsewhere_is_not_served_from_memory(customer, usdc):
    order = order_with_invoice(usdc, user=customer).order
    client = _signed_in(customer)
    url = f"/en/account/orders/{order.number}/status/"
    _get(client, url)
    assert _get(client, url)[2] == 0
    # "Sign out everywhere", or staff ending the session: the row goes.
    Session.objects.filter(account=customer).delete()
    status, _, _ = _get(client, url)
    assert status == 302  # to the sign-in page


def test_a_new_password_signs_the_kept_session_out(customer, usdc):
    order = order_with_invoice(usdc, user=customer).order
    client = _signed_in(customer)
    url = f"/en/account/orders/{order.number}/status/"
    _get(client, url)
    customer.set_password("an-entirely-new-password-1")
    customer.save(update_fields=["password"])
    assert _get(client, url)[0] == 302


def test_an_outsider_s_session_never_reads_a_kept_answer(customer, outsider, usdc):
    order = order_with_invoice(usdc, user=customer).order
    url = f"/en/account/orders/{order.number}/status/"
    _get(_signed_in(customer), url)
    assert _get(_signed_in(outsider), url)[0] == 404


def test_nothing_is_kept_inside_a_transaction(customer):
    changes_heard()
    with transaction.atomic():
        assert changes.now_seen() is None
    assert changes.now_seen() is not None


def test_what_was_read_before_a_change_is_not_served_after_it(customer):
    """A request reads, another commits a change before the first keeps its answer: the
    answer is kept, and never served."""
    kept = Kept()
    heard = changes_heard() and changes.now_seen()
    tags = frozenset({changes.account_tag(customer.pk)})
    customer.first_name = "Changed"
    customer.save(update_fields=["first_name"])
    changes_heard()
    kept.put(("k",), heard, tags=tags, valid_until=None, value="read before the change")
    assert kept.get(("k",), changes.now_seen()) is None


def test_an_answer_is_kept_until_its_time_only(customer):
    kept = Kept()
    heard = changes_heard() and changes.now_seen()
    tags = frozenset({changes.account_tag(customer.pk)})
    kept.put(("soon",), heard, tags=tags, valid_until=timezone.now(), value="a deadline passed")
    kept.put(("later",), heard, tags=tags, valid_until=None, value="unchanged")
    now = changes.now_seen()
    assert kept.get(("soon",), now) is None
    assert kept.get(("later",), now) == "unchanged"


def test_a_reconnected_feed_trusts_nothing_read_before(customer):
    kept = Kept()
    heard = changes_heard() and changes.now_seen()
    tags = frozenset({changes.account_tag(customer.pk)})
    kept.put(("k",), heard, tags=tags, valid_until=None, value="read before")
    feed = changes.feed()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE application_name = %s AND datname = current_database()",
            [changes.APPLICATION_NAME],
        )
    # Lost, then listening again: nothing read before counts.
    now = changes_heard()
    assert kept.get(("k",), (feed, now)) is None


def _heard_while(write) -> set[str]:
    """The tags a listener hears while `write()` commits."""
    listener = connection.get_new_connection(connection.get_connection_params())
    listener.autocommit = True
    try:
        with listener.cursor() as cursor:
            cursor.execute(f"LISTEN {changes.CHANNEL}")
        write()
        with listener.cursor() as cursor:
            cursor.execute("SELECT 1")  # what was notified meanwhile comes with the answer
        return {notify.payload for notify in listener.notifies}
    finally:
        listener.close()


def test_each_written_row_names_the_account_whose_pages_it_changes(customer, outsider, usdc):
    invoice = order_with_invoice(usdc, user=customer)
    mine = changes.account_tag(customer.pk)
    assert _heard_while(lambda: transfer_recorded(invoice)) == {mine}
    assert _heard_while(lambda: _note(invoice.order, "a note")) == {mine}
    assert _heard_while(lambda: OrderFactory(user=outsider)) >= {changes.account_tag(outsider.pk)}
    cursor = ScanCursor.objects.filter(chain=usdc.chain)
    assert _heard_while(lambda: cursor.update(head_block=5)) == {f"c{usdc.chain_id}"}
    # A new rate, or a rate valid for longer, changes what unpaid orders offer.
    assert _heard_while(lambda: rate_fresh(usdc, "0.99")) == {changes.RATES}
    later = timezone.now() + timedelta(hours=1)
    rates = Rate.objects.all()
    assert _heard_while(lambda: rates.update(expires_at=later)) == {changes.RATES}
    # The minute's rates refresh writes when it checked: no page shows it.
    assets = Asset.objects.filter(pk=usdc.pk)
    assert _heard_while(lambda: assets.update(rate_checked_at=timezone.now())) == set()
    # An update that changes nothing changes no page.
    orders = Order.objects.filter(pk=invoice.order_id)
    assert _heard_while(lambda: orders.update(status=invoice.order.status)) == set()
    session = Session.objects.filter(account=customer)
    assert _heard_while(lambda: _signed_in(customer) and session.delete()) == {mine}


def test_memory_kept_is_bounded_by_weight_dropping_the_least_recently_used(customer):
    kept = Kept(10, weight=len)
    heard = changes_heard() and changes.now_seen()
    tags = frozenset({changes.account_tag(customer.pk)})
    for key in ("a", "b", "c"):
        kept.put((key,), heard, tags=tags, valid_until=None, value=key * 4)
    # 12 > 10: the oldest went.
    assert kept.get(("a",), heard) is None
    assert kept.get(("b",), heard) == "bbbb"  # now the latest used
    kept.put(("d",), heard, tags=tags, valid_until=None, value="ddd")
    assert kept.get(("c",), heard) is None
    assert kept.get(("b",), heard) == "bbbb" and kept.get(("d",), heard) == "ddd"
    kept.put(("huge",), heard, tags=tags, valid_until=None, value="x" * 11)
    assert kept.get(("huge",), heard) is None and kept.get(("b",), heard) == "bbbb"


def test_an_unpaid_order_offers_the_currencies_a_new_rate_prices(customer, usdc):
    order = OrderFactory(user=customer)
    client = _signed_in(customer)
    url = f"/en/account/orders/{order.number}/"
    _get(client, url)
    assert _get(client, url)[2] == 0
    rate_fresh(usdc, "1.00")
    assert _get(client, url)[2] > 0


def test_the_french_and_the_english_page_are_kept_apart(customer, usdc):
    """The same order read in both languages: each is kept, and neither is served for the
    other."""
    order = order_with_invoice(usdc, user=customer).order
    client = _signed_in(customer)
    pages = {lang: f"/{lang}/account/orders/{order.number}/" for lang in ("fr", "en")}
    for lang, url in pages.items():
        _get(client, url)
        status, body, queries = _get(client, url)
        assert (status, queries) == (200, 0)
        assert f'<html lang="{lang}"' in body

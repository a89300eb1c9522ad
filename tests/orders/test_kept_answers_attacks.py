"""What an outside review of the answers kept in memory found (rental.changes,
rental.responsecache.Kept, accounts.sessions), each a test that failed on a492fde."""

import time
from datetime import timedelta
from decimal import Decimal

import pytest
from django.conf import settings
from django.contrib.sites.models import Site
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.models import Session
from orders.models import OrderStatus
from payments.models import Rate
from payments.rates import FeedRate, _feed_rate_record, rate_set_manually
from rental import changes, responsecache
from rental.middleware import JUST_WROTE_COOKIE
from rental.responsecache import MAX_QUERIES, Kept
from tests.changes import changes_heard
from tests.factories import OrderFactory
from tests.payments.helpers import order_with_invoice

pytestmark = pytest.mark.django_db(transaction=True)


def _signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _get(client: Client, url: str) -> tuple[int, str, int]:
    """Status, body and SQL queries of one request, once the feed heard every commit."""
    changes_heard()
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    return response.status_code, response.content.decode(), len(queries)


def test_kept_under_an_earlier_feed_is_not_trusted_by_a_new_one(customer):
    """A new feed (a forked worker, or one stopped and started again) never takes what was
    read under the old one for current."""
    for _ in range(20):  # a process that has served a while: its feed heard a lot
        changes_heard()
    kept = Kept()
    tags = frozenset({changes.account_tag(customer.pk)})
    kept.put(("k",), changes.now_seen(), tags=tags, valid_until=None, value="read before")
    changes.feed_stop()
    changes_heard()
    customer.is_active = False  # the account changes after the new feed listens
    customer.save(update_fields=["is_active"])
    changes_heard()
    assert kept.get(("k",), changes.now_seen()) is None


def test_an_overflow_between_now_seen_and_get_does_not_revive_a_changed_answer(
    customer, monkeypatch
):
    changes_heard()
    feed = changes.feed()
    kept = Kept()
    tags = frozenset({changes.account_tag(customer.pk)})
    kept.put(("k",), changes.now_seen(), tags=tags, valid_until=None, value="read before")
    customer.first_name = "Changed"
    customer.save(update_fields=["first_name"])
    changes_heard()
    now = changes.now_seen()  # a request's now_seen()...
    # ...then, before it calls Kept.get, the listening thread hears one tag too many.
    monkeypatch.setattr(changes, "MAX_TAGS", 1)
    changes_heard()
    assert feed.seen().epoch != now[1].epoch  # the overflow happened
    assert kept.get(("k",), now) is None


def test_a_rate_set_by_staff_reaches_the_order_page(customer, staff, usdc):
    Rate.objects.filter(asset=usdc).update(expires_at=timezone.now() - timedelta(minutes=1))
    order = OrderFactory(user=customer)
    client = _signed_in(customer)
    url = f"/en/account/orders/{order.number}/"
    status, body, _ = _get(client, url)
    assert status == 200 and "temporarily unavailable" in body
    assert _get(client, url)[2] == 0  # kept
    rate_set_manually(
        asset=usdc,
        rate=Decimal("0.93"),
        currency=settings.STORE_CURRENCY,
        reason="feeds down",
        expires_at=timezone.now() + timedelta(hours=1),
        staff_user=staff,
    )
    assert "temporarily unavailable" not in _get(client, url)[1]


def test_a_rate_expiring_reaches_the_order_page(customer, usdc):
    Rate.objects.filter(asset=usdc).update(expires_at=timezone.now() + timedelta(seconds=2))
    order = OrderFactory(user=customer)
    client = _signed_in(customer)
    url = f"/en/account/orders/{order.number}/"
    status, body, _ = _get(client, url)
    assert status == 200 and "temporarily unavailable" not in body
    time.sleep(2.5)
    assert "temporarily unavailable" in _get(client, url)[1]


def test_the_minute_s_rates_read_keeps_what_only_an_unpaid_order_shows(customer, usdc):
    """The rates task writes every minute, for every asset, when it checked and how long the
    latest rate holds: the answers of everything but an unpaid order stay kept."""
    now = timezone.now()
    priced = FeedRate(
        rate=Decimal("0.92000000"),
        source="Chainlink USDC/USD",
        feed_updated_at=now - timedelta(minutes=1),
        expires_at=now + timedelta(minutes=30),
    )
    _feed_rate_record(asset=usdc, priced=priced, now=now)
    paid = order_with_invoice(usdc, user=customer).order
    paid.status = OrderStatus.PAID
    paid.save(update_fields=["status"])
    client = _signed_in(customer)
    urls = ["/en/account/orders/", f"/en/account/orders/{paid.number}/status/"]
    for url in urls:
        _get(client, url)
        assert _get(client, url)[2] == 0
    # The next minute's read: same price, same feed reading, valid a minute longer.
    later = FeedRate(
        rate=priced.rate,
        source=priced.source,
        feed_updated_at=priced.feed_updated_at,
        expires_at=priced.expires_at + timedelta(minutes=1),
    )
    _feed_rate_record(asset=usdc, priced=later, now=now + timedelta(minutes=1))
    for url in urls:
        assert _get(client, url)[2] == 0


def test_made_up_queries_keep_no_more_than_a_few_answers_per_path(customer, usdc):
    order = order_with_invoice(usdc, user=customer).order
    client = _signed_in(customer)
    before = len(responsecache._kept_pages._entries)
    for n in range(6):
        assert _get(client, f"/en/account/orders/{order.number}/?junk={n}")[0] == 200
    assert len(responsecache._kept_pages._entries) - before <= MAX_QUERIES


def test_a_browser_s_own_change_shows_at_once_without_waiting_for_the_feed(customer, usdc):
    """A commit returns before PostgreSQL has sent its notification: the browser that wrote
    reads the database for a moment after (rental.middleware.KeptReadsMiddleware), so the page
    it goes to next shows its change even when no process has heard of it yet."""
    client = _signed_in(customer)
    for attempt in range(20):
        client.cookies.pop(JUST_WROTE_COOKIE, None)  # the mark of the last round's write
        order = OrderFactory(user=customer)
        url = f"/en/account/orders/{order.number}/"
        _get(client, url)
        assert _get(client, url)[2] == 0, f"attempt {attempt}: not kept"
        response = client.post(f"{url}cancel/")
        assert response.status_code == 302 and JUST_WROTE_COOKIE in response.cookies
        # The page the form leads to, at once: no waiting for the feed.
        body = client.get(response["Location"]).content.decode()
        assert "is cancelled" in body and "Cancel this order" not in body, f"attempt {attempt}"


def _unheard(write) -> None:
    """`write()` as if its notification were still on its way: committed with no trigger."""
    with connection.cursor() as cursor:
        cursor.execute("SET session_replication_role = replica")
    try:
        write()
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SET session_replication_role = DEFAULT")


def test_a_write_never_uses_a_session_kept_in_memory(customer, usdc):
    """A session ended elsewhere ("sign out everywhere") cannot write in the instant before
    the process hears of it: a write reads its session from the database."""
    order = order_with_invoice(usdc, user=customer).order
    client = _signed_in(customer)
    url = f"/en/account/orders/{order.number}/status/"
    _get(client, url)
    assert _get(client, url)[2] == 0  # the session and the answer are kept
    _unheard(lambda: Session.objects.filter(account=customer).delete())
    response = client.post(f"/en/account/orders/{order.number}/cancel/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    order.refresh_from_db()
    assert order.status == OrderStatus.AWAITING_PAYMENT


def test_a_feed_that_hears_no_notification_is_not_trusted(customer, monkeypatch):
    """A connection that answers queries but brings no notification (a pooler that does not
    pass LISTEN on, say) leaves nothing trusted: the feed's own beats do not come back."""
    monkeypatch.setattr(changes, "HEALTHY_SECONDS", 0.5)
    changes_heard()
    feed = changes.feed()
    try:
        with feed._lock, feed._connection.cursor() as cursor:  # what such a pooler does
            cursor.execute("UNLISTEN *")
        time.sleep(1.5)
        assert feed.seen() is None and changes.now_seen() is None
    finally:
        changes.feed_stop()  # the next test's feed listens again


# A second review, of 812c3eb, 163fd85, f0820d8 and e72d216: each failed on 0dff336.


def test_a_session_ended_while_migrations_run_is_not_served_from_memory(customer, usdc):
    """Migrations run without the triggers: nothing written meanwhile is heard, so no process
    trusts what it keeps until they are back."""
    order = order_with_invoice(usdc, user=customer).order
    client = _signed_in(customer)
    url = f"/en/account/orders/{order.number}/status/"
    _get(client, url)
    assert _get(client, url)[2] == 0  # session and answer kept
    changes.triggers_uninstall()  # what `migrate` does first (pre_migrate)
    try:
        deadline = time.monotonic() + 10
        while changes.now_seen() is not None:  # until the feed hears of it
            assert time.monotonic() < deadline, "the feed still trusts what it keeps"
            time.sleep(0.005)
        Session.objects.filter(account=customer).delete()  # "sign out everywhere", unheard
        assert client.get(url).status_code == 302
    finally:
        changes.triggers_install()
    changes_heard()
    assert changes.now_seen() is not None  # trusted again once the triggers are back


def test_a_get_that_writes_the_session_sees_its_own_write_next(client, customer, gpu):
    """The configurator's GET writes the session: the browser is marked as having written,
    so its next GET reads the session it saved, heard or not."""
    client.force_login(customer)
    url = f"/en/gpus/{gpu.slug}/configure/"
    changes_heard()
    client.get(url)  # the session is read from the database and kept
    details = "my-own-image:1.0 remembered"
    query = {"environment": "custom", "quantity": "1", "term": "7"}
    _unheard(lambda: client.get(url, {**query, "environment_details": details}))
    response = client.get(url, query)  # no details in the URL: the session's are shown
    assert details in response.content.decode()


def test_a_page_rendered_afresh_renews_the_csrf_cookie(customer, usdc):
    order = order_with_invoice(usdc, user=customer).order
    client = _signed_in(customer)
    client.get(f"/en/account/orders/{order.number}/status/")  # the CSRF cookie is set
    fresh = order_with_invoice(usdc, user=customer).order  # never rendered: rendered afresh
    response = client.get(f"/en/account/orders/{fresh.number}/status/")
    assert 'name="csrfmiddlewaretoken"' in response.content.decode()
    assert "csrftoken" in response.cookies


def test_reading_pages_writes_nothing_so_a_browser_keeps_reading_from_memory(customer, usdc):
    """Were any of these GETs to write, the browser would be marked as having written on each
    and never read from memory again."""
    order = order_with_invoice(usdc, user=customer).order
    client = _signed_in(customer)
    base = f"/en/account/orders/{order.number}/"
    for url in [base, f"{base}status/", f"{base}payment/status/", "/en/account/orders/"]:
        for _ in range(2):
            assert JUST_WROTE_COOKIE not in client.get(url).cookies


def test_a_process_whose_code_watches_a_table_without_its_trigger_keeps_nothing(customer):
    """A deploy starts the new code before `migrate` writes its triggers (or the old code runs
    on after): a table only the new code watches is not heard yet, so the new processes trust
    nothing they keep until the triggers of their own code are in the database."""
    changes_heard()
    watched = dict(changes._watched)
    changes.watch(Site, changes.GLOBAL_TAG_SQL)  # the new code watches one more table
    try:
        changes.feed_stop()  # a process started with it
        started = changes.feed()
        deadline = time.monotonic() + 10
        while started._connection is None:
            assert time.monotonic() < deadline, "the feed does not connect"
            time.sleep(0.01)
        assert started.seen() is None
        changes.triggers_install()  # `migrate`, by the new code
        changes_heard()
        assert changes.now_seen() is not None
    finally:
        changes._watched.clear()
        changes._watched.update(watched)
        changes.triggers_install()
        changes.feed_stop()  # the next test's feed listens under the triggers put back

"""What a signed-in customer opens most (the order page, its two polls every 3 seconds, the
order list, the API keys page) runs a fixed number of queries, however long the order's
history, however many transfers or orders there are."""

from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.services import MAX_API_KEYS_PER_USER, api_key_create, api_key_revoke
from orders.models import OrderEvent
from orders.selectors import order_live_marker
from payments.models import Transfer
from tests.cache import cache_empty
from tests.factories import OrderFactory
from tests.payments.helpers import order_with_invoice

pytestmark = pytest.mark.django_db

# Ceilings: the session with its account and whether it has a second factor (one query,
# accounts.sessions), how long the page holds by the clock (orders.versions.order_lifetime),
# then what the page itself reads when it is rendered afresh.
CEILINGS = {
    # The page: its payment (with the currencies a feed prices now, and the latest "I've paid"
    # the page answers), refund, invoice, journal and SSH-key sections each read their rows once.
    "order page": 12,
    "status poll": 4,
    # The poll rebuilds the instructions (QR, rate) when what is left changed; it reads the
    # latest "I've paid" too (the address watched until when).
    "payment poll": 8,
    "order list": 4,
    "API keys page": 3,
}
# Served again while nothing changed: no query (the session with its account comes from Redis,
# accounts.sessioncache; the versions of what the page shows with the page, rental.responsecache).
STORED = {"order page": 0, "status poll": 0, "payment poll": 0, "order list": 0}


def _pages(order) -> dict[str, str]:
    base = f"/fr/account/orders/{order.number}/"
    return {
        "order page": base,
        # As the page polls it: with the marker of what it shows (orders.views.order_status).
        "status poll": f"{base}status/?seen={order_live_marker(events=list(order.events.all()))}",
        "payment poll": f"{base}payment/status/",
        "order list": "/fr/account/orders/",
        "API keys page": "/fr/account/api-keys/",
    }


def _count(client, url: str) -> tuple[int, int]:
    """Queries of the page rendered afresh, then of the same page again."""
    cache_empty()
    counts = []
    for _time in ("fresh", "stored"):
        with CaptureQueriesContext(connection) as queries:
            response = client.get(url)
        assert response.status_code == 200
        counts.append(len(queries))
    return counts[0], counts[1]


def _grow(invoice, customer, *, by: int) -> None:
    """`by` more events and transfers on the order, orders and API keys for the customer."""
    order = invoice.order
    start = Transfer.objects.filter(invoice=invoice).count()
    for index in range(start, start + by):
        OrderEvent.objects.create(
            order=order, kind=OrderEvent.Kind.NOTE, actor=OrderEvent.Actor.SYSTEM, reason="r"
        )
        Transfer.objects.create(
            chain=invoice.asset.chain,
            asset=invoice.asset,
            invoice=invoice,
            tx_hash=f"0x{index:064x}",
            log_index=0,
            block_number=index + 1,
            block_hash=f"0x{index:064x}",
            block_time=timezone.now(),
            from_address="0x" + "1" * 40,
            to_address=invoice.deposit_address,
            amount=Decimal(1),
        )
        OrderFactory(user=customer, gpu=order.gpu, environment=order.environment)
        api_key, _raw = api_key_create(user=customer, name=f"key {index}")
        if index >= MAX_API_KEYS_PER_USER // 2:
            api_key_revoke(api_key=api_key)  # revoked keys stay listed


def test_account_pages_run_the_same_queries_with_1_and_30_of_everything(client, customer, usdc):
    invoice = order_with_invoice(usdc, user=customer)
    _grow(invoice, customer, by=1)
    client.force_login(customer)
    pages = _pages(invoice.order)
    for url in pages.values():
        client.get(url)  # templates and translations load once per process
    few = {name: _count(client, url) for name, url in pages.items()}
    _grow(invoice, customer, by=29)
    many = {name: _count(client, url) for name, url in _pages(invoice.order).items()}
    assert many == few
    assert all(few[name][0] <= ceiling for name, ceiling in CEILINGS.items()), few
    assert all(few[name][1] == stored for name, stored in STORED.items()), few

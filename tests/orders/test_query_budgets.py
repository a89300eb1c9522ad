"""Every signed-in page and every API answer runs a fixed number of queries, read from the
database on realistic data (a rental with two invoices, transfers, events, an extension, SSH
keys, a facture), and the same number once its history is three times longer: speed is kept by
queries that do not grow, not by a cache. A poll that finds nothing new answers with less."""

import base64
from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.services import api_key_create, ssh_key_add
from billing.services import invoice_issue as facture_issue
from orders.extensions import extension_create
from orders.models import Order, OrderEvent, OrderStatus
from orders.selectors import order_live_marker
from payments.models import Asset, Invoice
from payments.services import invoice_issue
from payments.views import payment_status_context
from tests.api.conftest import key_client
from tests.factories import OrderFactory, accepted_terms
from tests.payments.helpers import transfer_recorded

pytestmark = pytest.mark.django_db

# The session, then the account with its second factor: every signed-in page starts with them.
# API answers start with the key and its account instead (one query).
BUDGETS = {
    "account page": 2,
    "order list": 4,
    # The order, its events, extensions, keys, slots; payment (invoices with transfers, the
    # currencies priced now, the latest "I've paid"), refund, facture and journal sections.
    "order page": 16,
    "status poll, nothing new": 4,
    # Something happened: the parts of the page the event may have changed come along.
    "status poll, something new": 16,
    "payment poll, nothing new": 5,
    "payment poll, something new": 5,
    # Awaiting its payment: no facture to read yet (billing.sections).
    "extension's order page": 10,
    "stop page": 3,
    "API keys page": 4,
    "SSH keys page": 4,
    "security page": 3,
    "factures page": 3,
    "facture page": 3,
    "journal": 5,
    "API orders": 10,
    "API order": 9,
    "API invoices": 3,
    "API SSH keys": 2,
    "API webhooks": 2,
    "API GPUs": 3,
    "API environments": 2,
    "API payment assets": 3,
    "API quote": 4,
}


def _key(user, index: int) -> None:
    ssh_key_add(user=user, name=f"laptop {index}", public_key=_public_key(index))


def _public_key(index: int) -> str:
    blob = b"\x00\x00\x00\x0bssh-ed25519\x00\x00\x00\x20" + index.to_bytes(32, "big")
    return f"ssh-ed25519 {base64.b64encode(blob).decode()} key{index}"


def _grow(rental: Order, *, by: int, start: int) -> None:
    """`by` more events, transfers on each invoice, SSH keys and orders for the customer."""
    invoices = list(Invoice.objects.filter(order=rental))
    for index in range(start, start + by):
        OrderEvent.objects.create(
            order=rental, kind=OrderEvent.Kind.NOTE, actor=OrderEvent.Actor.SYSTEM, reason="r"
        )
        for position, invoice in enumerate(invoices):
            transfer_recorded(invoice, amount=1, index=1000 * position + index)
        _key(rental.user, index)
        OrderFactory(user=rental.user, gpu=rental.gpu, environment=rental.environment)


@pytest.fixture
def rental(customer, usdc):
    """An active rental paid after a change of currency (two invoices), with its facture and
    an extension waiting for its payment."""
    order = OrderFactory(user=customer, total=Decimal("504.00"))
    first = invoice_issue(order=order, asset=usdc)
    second = invoice_issue(order=order, asset=Asset.objects.get(slug="eth-devnet"))
    assert first.pk != second.pk
    now = timezone.now()
    Order.objects.filter(pk=order.pk).update(
        status=OrderStatus.ACTIVE, activated_at=now - timedelta(days=1), ends_at=now + timedelta(2)
    )
    order.refresh_from_db()
    facture_issue(order=order)
    extension_create(rental=order, user=customer, term_days=7, terms=accepted_terms())
    _grow(order, by=2, start=0)
    return order


def _requests(rental: Order, client, api) -> dict:
    """Name -> a request that answers 200."""
    base = f"/fr/account/orders/{rental.number}/"
    facture = rental.billing_documents.get()
    extension = rental.extensions.get()
    marker = order_live_marker(events=list(rental.events.all()))
    shown = payment_status_context(order=rental, now=timezone.now())["shown"]
    quote = {"gpu": rental.gpu.slug, "environment": "pytorch", "quantity": 1, "term_days": 7}
    return {
        "account page": lambda: client.get("/fr/account/"),
        "order list": lambda: client.get("/fr/account/orders/"),
        "order page": lambda: client.get(base),
        "status poll, nothing new": lambda: client.get(f"{base}status/?seen={marker}"),
        "status poll, something new": lambda: client.get(f"{base}status/?seen=old"),
        "payment poll, nothing new": lambda: client.get(f"{base}payment/status/?shown={shown}"),
        "payment poll, something new": lambda: client.get(f"{base}payment/status/?shown=old"),
        "extension's order page": lambda: client.get(f"/fr/account/orders/{extension.number}/"),
        "stop page": lambda: client.get(f"{base}stop/"),
        "API keys page": lambda: client.get("/fr/account/api-keys/"),
        "SSH keys page": lambda: client.get("/fr/account/ssh-keys/"),
        "security page": lambda: client.get("/fr/account/security/"),
        "factures page": lambda: client.get("/fr/account/invoices/"),
        "facture page": lambda: client.get(f"/fr/account/invoices/{facture.number}/"),
        "journal": lambda: client.get(f"{base}journal.json"),
        "API orders": lambda: api.get("/api/v1/orders/"),
        "API order": lambda: api.get(f"/api/v1/orders/{rental.number}/"),
        "API invoices": lambda: api.get("/api/v1/invoices/"),
        "API SSH keys": lambda: api.get("/api/v1/ssh-keys/"),
        "API webhooks": lambda: api.get("/api/v1/webhooks/"),
        "API GPUs": lambda: api.get("/api/v1/gpus/"),
        "API environments": lambda: api.get("/api/v1/environments/"),
        "API payment assets": lambda: api.get("/api/v1/payment-assets/"),
        "API quote": lambda: api.post("/api/v1/quotes/", quote, format="json"),
    }


def _counts(requests: dict) -> dict[str, int]:
    counts = {}
    for name, request in requests.items():
        with CaptureQueriesContext(connection) as queries:
            response = request()
        assert response.status_code == 200, (name, response.status_code)
        counts[name] = len(queries)
    return counts


def test_every_signed_in_page_and_api_answer_holds_its_budget_as_history_grows(
    client, customer, rental, pytorch
):
    client.force_login(customer)
    api = key_client(api_key_create(user=customer, name="partner")[1])
    requests = _requests(rental, client, api)
    assert set(requests) == set(BUDGETS)
    _counts(requests)  # templates and translations load once per process
    few = _counts(requests)
    _grow(rental, by=4, start=2)
    many = _counts(_requests(rental, client, api))
    assert many == few
    assert few == BUDGETS  # a page that gains or loses a query says so here


def test_the_status_poll_reads_the_order_alone_when_nothing_happened(client, customer, rental):
    """Every open page asks every 3 s: with nothing new it shows no GPU nor environment, so
    its order query joins no other table; after an event it brings the parts that show them."""
    client.force_login(customer)
    base = f"/fr/account/orders/{rental.number}/status/"
    marker = order_live_marker(events=list(rental.events.all()))

    def order_query(url: str) -> str:
        client.get(url)
        with CaptureQueriesContext(connection) as queries:
            assert client.get(url).status_code == 200
        # The order itself: the first read of its table (its extensions are read later).
        return next(
            q["sql"] for q in queries if q["sql"].split(" FROM ")[1].startswith('"orders_order"')
        )

    assert " JOIN " not in order_query(f"{base}?seen={marker}")
    assert '"catalog_gpumodel"' in order_query(f"{base}?seen=old")

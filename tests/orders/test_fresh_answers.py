"""Pages and answers come from the database: whatever writes a change, with or without a
service, shows at the next request, and never to another account. The first three cases are
the outside review's: writers that forgot their cache bump left a refused rate, a chain
switched off and a cleared `review` flag on the pages for ten minutes."""

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from accounts.services import api_key_create
from billing.services import invoice_issue
from orders.extensions import extension_create
from orders.models import OrderEvent, OrderStatus
from orders.services import order_cancel
from orders.transitions import order_event_record
from payments.models import Chain, Invoice, ScanCursor, Transfer
from payments.rates import _refuse as rate_refuse
from payments.watcher.settlement import transfer_orphan
from tests.api.conftest import key_client
from tests.cache import cache_unreachable
from tests.factories import OrderFactory, accepted_terms
from tests.payments.helpers import order_with_invoice, transfer_observed_and_settled

pytestmark = pytest.mark.django_db


def _urls(order) -> list[str]:
    base = f"/en/account/orders/{order.number}/"
    return [base, f"{base}status/", f"{base}payment/status/"]


def _signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _api(user):
    return key_client(api_key_create(user=user, name="k")[1])


def _offered(page: str, asset) -> bool:
    """The order page offers `asset` to pay with (an unpriced one shows, disabled)."""
    unavailable = f"{asset.symbol} on {asset.chain.name}: this payment method is temporarily"
    return f'name="asset" value="{asset.slug}"' in page and unavailable not in page


def test_a_rate_the_beat_refuses_stops_being_offered_at_the_next_load(customer, usdc):
    order = OrderFactory(user=customer)
    client = _signed_in(customer)
    url = f"/en/account/orders/{order.number}/"
    assert _offered(client.get(url).content.decode(), usdc)
    rate_refuse(asset=usdc, reason="feed answered 0", now=timezone.now())
    assert not _offered(client.get(url).content.decode(), usdc)


def test_a_chain_switched_off_stops_being_offered_at_the_next_load(customer, usdc):
    order = OrderFactory(user=customer)
    client = _signed_in(customer)
    url = f"/en/account/orders/{order.number}/"
    assert _offered(client.get(url).content.decode(), usdc)
    Chain.objects.filter(pk=usdc.chain_id).update(is_active=False)  # as load_networks does
    assert not _offered(client.get(url).content.decode(), usdc)


def test_staff_clearing_review_shows_in_the_api_at_the_next_request(customer, usdc):
    invoice = order_with_invoice(usdc, user=customer)
    Invoice.objects.filter(pk=invoice.pk).update(review=True)
    api, url = _api(customer), f"/api/v1/orders/{invoice.order.number}/"
    assert "review" in api.get(url).json()["payment"]["flags"]
    Invoice.objects.filter(pk=invoice.pk).update(review=False)  # the invoice admin's save
    assert "review" not in api.get(url).json()["payment"]["flags"]


def test_an_outsider_gets_404_for_every_page_and_answer_of_an_order(customer, outsider, usdc):
    order = order_with_invoice(usdc, user=customer).order
    owner, stranger = _signed_in(customer), _signed_in(outsider)
    for url in _urls(order):
        assert owner.get(url).status_code == 200
        assert stranger.get(url).status_code == 404
    assert _api(outsider).get(f"/api/v1/orders/{order.number}/").status_code == 404


def test_each_customer_sees_their_own_order_list_at_the_same_address(customer, outsider, usdc):
    mine = order_with_invoice(usdc, user=customer).order
    theirs = order_with_invoice(usdc, user=outsider).order
    first = _signed_in(customer).get("/en/account/orders/").content.decode()
    second = _signed_in(outsider).get("/en/account/orders/").content.decode()
    assert mine.number in first and theirs.number not in first
    assert theirs.number in second and mine.number not in second


def test_a_new_status_shows_on_the_list_at_once(customer, usdc):
    order = order_with_invoice(usdc, user=customer).order
    client = _signed_in(customer)
    assert "status-cancelled" not in client.get("/en/account/orders/").content.decode()
    order_cancel(order=order, actor=OrderEvent.Actor.CUSTOMER, actor_user=customer)
    assert "status-cancelled" in client.get("/en/account/orders/").content.decode()


def test_a_new_event_shows_at_the_next_status_poll(customer, usdc):
    order = order_with_invoice(usdc, user=customer).order
    client = _signed_in(customer)
    url = f"/en/account/orders/{order.number}/status/"
    assert "fresh-answer-check" not in client.get(url).content.decode()
    order_event_record(
        order=order,
        kind=OrderEvent.Kind.NOTE,
        actor=OrderEvent.Actor.SYSTEM,
        reason="fresh-answer-check",
    )
    assert "fresh-answer-check" in client.get(url).content.decode()


def test_a_transfer_and_each_new_block_show_at_the_next_payment_poll(customer, usdc):
    invoice = order_with_invoice(usdc, user=customer)
    client = _signed_in(customer)
    url = f"/en/account/orders/{invoice.order.number}/payment/status/"
    api, api_url = _api(customer), f"/api/v1/orders/{invoice.order.number}/"
    assert "Transfers seen" not in client.get(url).content.decode()
    assert api.get(api_url).json()["payment"]["transfers"] == []
    ScanCursor.objects.filter(chain=usdc.chain).update(head_block=1)
    transfer_observed_and_settled(invoice, int(invoice.amount_due))
    assert "1 of" in client.get(url).content.decode()
    assert api.get(api_url).json()["payment"]["transfers"][0]["confirmations"] == 1
    ScanCursor.objects.filter(chain=usdc.chain).update(head_block=2)  # only the chain moved
    assert "2 of" in client.get(url).content.decode()
    assert api.get(api_url).json()["payment"]["transfers"][0]["confirmations"] == 2
    transfer_orphan(transfer=Transfer.objects.get(invoice=invoice))
    assert "reorganisation" in client.get(url).content.decode()


def test_a_new_extension_and_a_facture_show_at_the_next_load(customer, usdc):
    now = timezone.now()
    rental = OrderFactory(
        user=customer,
        status=OrderStatus.ACTIVE,
        activated_at=now - timedelta(days=1),
        ends_at=now + timedelta(days=2),
    )
    client = _signed_in(customer)
    url = f"/en/account/orders/{rental.number}/"
    assert 'data-testid="billing-section"' not in client.get(url).content.decode()
    extension = extension_create(rental=rental, user=customer, term_days=7, terms=accepted_terms())
    assert extension.number in client.get(url).content.decode()
    document = invoice_issue(order=rental)
    page = client.get(url).content.decode()
    assert 'data-testid="billing-section"' in page and document.number in page


def test_with_the_cache_unreachable_signed_in_pages_and_the_catalog_answer(
    settings, client, customer, usdc
):
    order = order_with_invoice(usdc, user=customer).order
    signed_in = _signed_in(customer)
    cache_unreachable(settings)
    for url in [*_urls(order), "/en/account/orders/", "/en/"]:
        assert signed_in.get(url).status_code == 200
    assert client.get("/en/").status_code == 200  # an anonymous visitor's, uncached

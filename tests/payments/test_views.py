"""The payment section as the customer sees it."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils import timezone

from orders.models import Order, OrderEvent
from payments.models import Invoice, PaymentClaim, Rate
from tests.factories import OrderFactory
from tests.payments.helpers import deadline_at, order_with_invoice, transfer_recorded

pytestmark = [pytest.mark.chain]


def url(name, order, lang="en"):
    from django.utils import translation

    with translation.override(lang):
        return reverse(f"payments:{name}", args=[order.number])


@pytest.fixture
def logged_in(client, customer):
    client.force_login(customer)
    return client


def test_the_customer_picks_a_currency_and_sees_how_to_pay(devnet, logged_in, customer):
    order = OrderFactory(user=customer, total=Decimal("504.00"))
    page = logged_in.get(url("page", order))
    assert page.status_code == 200
    assert b'name="asset"' in page.content and b"csrfmiddlewaretoken" in page.content

    response = logged_in.post(url("issue", order), {"asset": "usdc-devnet"})
    assert response.status_code == 302
    invoice = Invoice.objects.get(order=order)
    page = logged_in.get(url("page", order)).content.decode()
    assert "547.826087" in page
    assert "Send only on <strong>Anvil devnet</strong> (chain id 31337)" in page
    assert devnet.w3.to_checksum_address(invoice.deposit_address) in page
    assert devnet.w3.to_checksum_address(devnet.node.usdc) in page
    token = devnet.w3.to_checksum_address(devnet.node.usdc)
    address = devnet.w3.to_checksum_address(invoice.deposit_address)
    assert f"ethereum:{token}@31337/transfer?address={address}&amp;uint256=547826087" in page
    assert (
        "<svg" in page
        and "data-countdown" in page
        and ("I&#x27;ve paid" in page or "I've paid" in page)
    )


def test_the_section_speaks_french_first(devnet, logged_in, customer):
    invoice = order_with_invoice(devnet.eth, user=customer, total=Decimal("300.00"))
    page = logged_in.get(url("page", invoice.order, "fr")).content.decode()
    assert "J\u2019ai payé" in page  # typographic apostrophe
    assert (
        f"ethereum:{devnet.w3.to_checksum_address(invoice.deposit_address)}@31337?value={10**17}"
        in page
    )


def test_a_stale_rate_refuses_the_invoice_with_a_clear_message(devnet, logged_in, customer):
    Rate.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    order = OrderFactory(user=customer)
    response = logged_in.post(url("issue", order), {"asset": "eth-devnet"})
    assert response.status_code == 400
    assert b"ETH on Anvil devnet: this payment method is temporarily unavailable" in (
        response.content
    )
    assert not Invoice.objects.exists()


def test_ive_paid_with_a_malformed_hash_explains_the_format(devnet, logged_in, customer):
    invoice = order_with_invoice(devnet.usdc, user=customer)
    response = logged_in.post(url("claim", invoice.order), {"tx_hash": "0x1234"})
    assert response.status_code == 400
    assert b"0x followed by 64 hexadecimal characters" in response.content
    assert not PaymentClaim.objects.exists()


def test_ive_paid_on_someone_elses_order_is_404(devnet, client, outsider, customer):
    invoice = order_with_invoice(devnet.usdc, user=customer)
    client.force_login(outsider)
    assert client.post(url("claim", invoice.order), {"tx_hash": ""}).status_code == 404
    assert client.get(url("page", invoice.order)).status_code == 404
    assert client.get(url("status", invoice.order)).status_code == 404
    assert client.post(url("issue", invoice.order), {"asset": "eth-devnet"}).status_code == 404


def test_the_payment_pages_need_a_login(devnet, client, customer):
    order = OrderFactory(user=customer)
    response = client.get(url("page", order))
    assert response.status_code == 302 and "login" in response["Location"]


def test_pressing_ive_paid_twice_makes_one_claim_event_and_checks_at_once(
    devnet, logged_in, customer, django_capture_on_commit_callbacks
):
    invoice = order_with_invoice(devnet.usdc, user=customer)
    tx = devnet.pay_token(invoice.deposit_address, int(invoice.amount_due))
    with django_capture_on_commit_callbacks(execute=True):
        first = logged_in.post(url("claim", invoice.order), {"tx_hash": tx}, HTTP_HX_REQUEST="true")
        logged_in.post(url("claim", invoice.order), {"tx_hash": tx}, HTTP_HX_REQUEST="true")
    assert first.status_code == 200 and b"checking the network" in first.content
    order = invoice.order
    assert order.events.filter(kind=OrderEvent.Kind.PAYMENT_CLAIMED).count() == 1
    assert PaymentClaim.objects.filter(order=order).count() == 1
    # The immediate check read the receipt: the transfer is seen before any scan.
    order.refresh_from_db()
    assert invoice.transfers.count() == 1 and order.status == "confirming"


def test_the_status_partial_shows_confirmations_and_stops_polling_when_paid(
    devnet, logged_in, customer
):
    invoice = order_with_invoice(devnet.usdc, user=customer)
    devnet.pay_token(invoice.deposit_address, int(invoice.amount_due))
    devnet.scan()
    partial = logged_in.get(url("status", invoice.order)).content.decode()
    assert "1 of 3 confirmations" in partial and 'data-hx-trigger="every 3s"' in partial
    devnet.mine(2)
    devnet.scan()
    partial = logged_in.get(url("status", invoice.order)).content.decode()
    assert "3 of 3 confirmations" in partial and "data-hx-trigger" not in partial
    # The order's own live part (status and history) shows the outcome.
    status = logged_in.get(f"/en/account/orders/{invoice.order.number}/status/").content.decode()
    assert "Paid" in status and "Transfer confirmed" in status


def test_an_underpaying_customer_sees_what_is_left_to_send(devnet, logged_in, customer):
    invoice = order_with_invoice(devnet.usdc, user=customer)
    devnet.pay_token(invoice.deposit_address, int(invoice.amount_due) - 7_500_000)
    devnet.mine(3)
    devnet.scan()
    page = logged_in.get(url("page", invoice.order)).content.decode()
    assert "Amount left to send" in page and "7.5</span> USDC" in page
    assert "send 7.5 USDC more to the same address" in page


def test_ive_paid_without_a_hash_checks_the_balance_and_scans_at_once(
    devnet, logged_in, customer, django_capture_on_commit_callbacks
):
    invoice = order_with_invoice(devnet.eth, user=customer, total=Decimal("300.00"))
    devnet.pay_native(invoice.deposit_address, int(invoice.amount_due))
    with django_capture_on_commit_callbacks(execute=True):
        response = logged_in.post(url("claim", invoice.order), {"tx_hash": ""})
    assert response.status_code == 302
    invoice.order.refresh_from_db()
    assert invoice.order.status == "confirming"
    claimed = invoice.order.events.get(kind=OrderEvent.Kind.PAYMENT_CLAIMED)
    assert claimed.actor == "customer" and claimed.actor_user == customer


def test_an_underpaid_order_can_no_longer_be_cancelled(devnet, logged_in, customer):
    invoice = order_with_invoice(devnet.usdc, user=customer)
    devnet.pay_token(invoice.deposit_address, int(invoice.amount_due) // 2)
    devnet.mine(3)
    devnet.scan()
    invoice.order.refresh_from_db()
    assert invoice.order.status == "awaiting_payment"
    response = logged_in.post(f"/en/account/orders/{invoice.order.number}/cancel/", follow=True)
    assert "A payment has reached this order" in response.content.decode()
    invoice.order.refresh_from_db()
    assert invoice.order.status == "awaiting_payment"


def test_ive_paid_before_the_transfer_is_seen_says_the_address_is_watched_and_writes_no_alarm(
    devnet, logged_in, customer, django_capture_on_commit_callbacks
):
    invoice = order_with_invoice(devnet.usdc, user=customer)
    with django_capture_on_commit_callbacks(execute=True):
        logged_in.post(url("claim", invoice.order), {"tx_hash": ""}, HTTP_HX_REQUEST="true")
    claim = PaymentClaim.objects.get(order=invoice.order)
    until = timezone.localtime(claim.created_at + timedelta(minutes=30)).strftime("%H:%M")
    status = url("status", invoice.order, "fr")
    page = logged_in.get(status).content.decode()
    assert "Nous surveillons l\u2019adresse de paiement jusqu\u2019à " + until in page
    assert "nothing has reached" not in page and "rien n\u2019est encore arrivé" not in page
    # The permanent history holds the claim only: nothing alarming for the one who just paid.
    kinds = set(invoice.order.events.values_list("kind", flat=True))
    assert OrderEvent.Kind.NOTE not in kinds and OrderEvent.Kind.PAYMENT_CLAIMED in kinds
    history = logged_in.get(url("page", invoice.order, "fr")).content.decode()
    assert "rien n\u2019est encore arrivé" not in history


def test_an_unmatched_claim_after_the_window_goes_to_staff_not_to_the_history(
    devnet, logged_in, customer, django_capture_on_commit_callbacks
):
    invoice = order_with_invoice(devnet.usdc, user=customer)
    with django_capture_on_commit_callbacks(execute=True):
        logged_in.post(url("claim", invoice.order), {"tx_hash": ""}, HTTP_HX_REQUEST="true")
    PaymentClaim.objects.filter(order=invoice.order).update(
        created_at=timezone.now() - timedelta(minutes=31)
    )
    page = logged_in.get(url("status", invoice.order, "fr")).content.decode()
    assert "Nous surveillons" not in page
    assert "notre équipe vérifie" in page
    assert not invoice.order.events.filter(kind=OrderEvent.Kind.NOTE).exists()
    from backoffice.selectors import queue_entries

    counts = {entry.key: entry.count for entry in queue_entries()}
    assert counts["claim_unanswered"] == 1


def test_past_the_deadline_before_expiry_the_page_says_the_gpus_stay_reserved(
    devnet, logged_in, customer
):
    invoice = order_with_invoice(devnet.usdc, user=customer)
    deadline_at(invoice, timezone.now() - timedelta(minutes=1))
    page = logged_in.get(url("page", invoice.order, "fr")).content.decode()
    assert "Nous lisons encore le réseau pour trouver un paiement envoyé à temps" in page
    assert "vos GPU restent réservés" in page
    assert 'data-testid="payment-instructions"' not in page  # no invitation to pay late
    assert "J\u2019ai payé" in page  # a payment sent in time can still be reported


@pytest.mark.parametrize("status", ["cancelled", "expired"])
def test_a_closed_order_without_money_shows_no_payment_panel_one_with_money_does(
    usdc, client, customer, status
):
    quiet, paid = (order_with_invoice(usdc, user=customer) for _ in range(2))
    transfer_recorded(paid)
    Order.objects.filter(pk__in=[quiet.order_id, paid.order_id]).update(status=status)
    client.force_login(customer)
    pages = {
        invoice: client.get(f"/fr/account/orders/{invoice.order.number}/").content.decode()
        for invoice in (quiet, paid)
    }
    assert 'data-testid="payment-section"' not in pages[quiet]
    assert 'data-testid="payment-section"' in pages[paid]

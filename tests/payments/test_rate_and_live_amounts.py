"""The locked rate is shown (page, poll, e-mail, API), and the payment poll swaps the
instructions only when what is left to send changed."""

import re
from decimal import Decimal
from urllib.parse import unquote

import pytest
from django.core import mail
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import translation
from django.utils.formats import date_format
from django.utils.timezone import localtime

from payments.models import Invoice
from payments.selectors import in_asset_units
from payments.services import invoice_issue, invoice_mark_paid
from tests.payments.helpers import (
    order_with_invoice,
    rate_fresh,
    transfer_observed_and_settled,
    transfer_recorded,
)

pytestmark = [pytest.mark.chain, pytest.mark.django_db]


def url(name: str, order, lang: str = "en") -> str:
    with translation.override(lang):
        return reverse(name, args=[order.number])


@pytest.fixture
def usdc_at_0_9203(devnet):
    rate_fresh(devnet.usdc, "0.9203", source="Chainlink")
    return devnet.usdc


def test_the_page_shows_the_rate_its_lock_time_and_the_euro_total_in_french(
    usdc_at_0_9203, customer, client
):
    invoice = order_with_invoice(usdc_at_0_9203, user=customer, total=Decimal("1008.00"))
    client.force_login(customer)
    page = client.get(url("orders:detail", invoice.order, "fr")).content.decode()
    section = page[page.index('id="payment-section"') :]
    section = section.replace("\u202f", " ").replace("\xa0", " ").replace("&nbsp;", " ")
    assert "1 USDC = 0,9203 €" in section and "Chainlink" in section
    assert "1 008,00 €" in section
    with translation.override("fr"):
        assert date_format(localtime(invoice.expires_at), "TIME_FORMAT") in section


def test_a_rate_above_ten_shows_two_decimals(devnet, customer, client):
    rate_fresh(devnet.eth, "2941.1734", source="Chainlink")
    invoice = order_with_invoice(devnet.eth, user=customer)
    client.force_login(customer)
    page = client.get(url("orders:detail", invoice.order, "fr")).content.decode()
    page = page.replace("\u202f", " ").replace("\xa0", " ").replace("&nbsp;", " ")
    assert "1 ETH = 2 941,17 €" in page


def test_a_new_rate_reprices_the_next_invoice_only(usdc_at_0_9203, devnet, customer):
    invoice = order_with_invoice(usdc_at_0_9203, user=customer, total=Decimal("1008.00"))
    rate_fresh(devnet.usdc, "1.0000", source="Chainlink")
    # The open invoice keeps the amount of its locked rate...
    same = invoice_issue(order=invoice.order, asset=devnet.usdc)
    assert same.pk == invoice.pk and same.amount_due == invoice.amount_due
    assert same.locked_rate == Decimal("0.9203")
    # ... and the next one (another currency, then back) takes the current rate.
    invoice_issue(order=invoice.order, asset=devnet.eth)
    repriced = invoice_issue(order=invoice.order, asset=devnet.usdc)
    assert repriced.pk != invoice.pk
    assert repriced.locked_rate == Decimal("1.0000")
    assert repriced.amount_due == Decimal("1008000000")


def shown_version(html: str) -> str:
    return re.search(r'data-shown="([^"]+)"', html).group(1)


def polled_version(html: str) -> str:
    """The version the next poll sends: what the page shows after this answer."""
    return unquote(re.search(r'\?shown=([^"]+)"', html).group(1))


def test_the_poll_brings_the_instructions_only_when_what_is_left_changed(devnet, customer, client):
    invoice = order_with_invoice(devnet.usdc, user=customer)
    client.force_login(customer)
    page = client.get(url("orders:detail", invoice.order)).content.decode()
    shown = shown_version(page)
    poll_url = url("payments:status", invoice.order)

    unchanged = client.get(poll_url, {"shown": shown}).content.decode()
    assert 'id="payment-instructions"' not in unchanged

    transfer_observed_and_settled(invoice, int(invoice.amount_due) // 4)  # as the watcher does
    changed = client.get(poll_url, {"shown": shown}).content.decode()
    assert 'id="payment-instructions"' in changed and 'data-hx-swap-oob="true"' in changed
    left = Invoice.objects.get(pk=invoice.pk).amount_left
    assert f"uint256={int(left)}" in changed
    # The next poll carries the new version: nothing to swap again.
    assert shown_version(changed) == polled_version(changed)
    assert (
        'id="payment-instructions"'
        not in client.get(poll_url, {"shown": polled_version(changed)}).content.decode()
    )


def test_an_unchanged_poll_costs_the_same_queries_with_more_transfers(devnet, customer, client):
    invoice = order_with_invoice(devnet.usdc, user=customer)
    client.force_login(customer)
    poll_url = url("payments:status", invoice.order)
    shown = polled_version(client.get(poll_url, {"shown": "x"}).content.decode())
    with CaptureQueriesContext(connection) as one:
        client.get(poll_url, {"shown": shown})
    for index in range(3):
        transfer = transfer_recorded(invoice, amount=1)
        transfer.tx_hash = f"0x{index:064x}"
        transfer.save(update_fields=["tx_hash"])
    shown = polled_version(client.get(poll_url, {"shown": shown}).content.decode())
    with CaptureQueriesContext(connection) as four:
        client.get(poll_url, {"shown": shown})
    assert len(one) > 0 and len(four) == len(one)


def test_the_paid_email_gives_the_amount_received_the_rate_and_the_euro_total(
    usdc_at_0_9203, devnet, customer, django_capture_on_commit_callbacks
):
    invoice = order_with_invoice(usdc_at_0_9203, user=customer, total=Decimal("1008.00"))
    tx_hash = devnet.pay_token(invoice.deposit_address, int(invoice.amount_due))
    devnet.mine(devnet.chain.confirmations)
    with django_capture_on_commit_callbacks(execute=True):
        devnet.scan()
    paid = [m for m in mail.outbox if invoice.order.number in m.subject and "Paiement" in m.subject]
    assert len(paid) == 1, [m.subject for m in mail.outbox]
    body = paid[0].body.replace("\u202f", " ").replace("\xa0", " ")
    assert f"{in_asset_units(invoice.amount_due, asset=devnet.usdc)} USDC" in body
    assert "1 USDC = 0,9203 €" in body and "Chainlink" in body and "1 008,00 €" in body
    assert tx_hash in body


def test_an_invoice_settled_by_staff_gets_a_receipt_that_says_so(devnet, customer, staff, client):
    invoice = order_with_invoice(devnet.usdc, user=customer)
    invoice_mark_paid(invoice=invoice, staff_user=staff, reason="Paid by bank transfer")
    client.force_login(customer)
    page = client.get(url("orders:detail", invoice.order)).content.decode()
    receipt = page[page.index('data-testid="payment-receipt"') :]
    assert "Payment settled by our team." in receipt
    assert "Received" not in receipt.split("</dl>")[0]

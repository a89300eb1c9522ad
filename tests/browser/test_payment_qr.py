"""The payment section as a customer sees it: a QR code a third-party reader decodes to the very
request the page and the API give, amounts that follow a partial payment without a reload, the
payment first on a phone, and a receipt once paid."""

import json
import time
import urllib.request
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import expect

from accounts.services import api_key_create
from payments.selectors import in_asset_units
from tests.browser.conftest import ARTIFACTS, displayed_qr, log_in, screenshot
from tests.factories import UserFactory
from tests.payments.helpers import order_with_invoice

pytestmark = [pytest.mark.browser, pytest.mark.chain, pytest.mark.django_db(transaction=True)]
PASSWORD = "correct-Horse-battery-9"


def eip681(uri: str) -> dict:
    """An ERC-20 transfer request: ethereum:<token>@<chain id>/transfer?address=..&uint256=.."""
    parsed = urlparse(uri)
    assert parsed.scheme == "ethereum", uri
    target, _, rest = parsed.path.partition("@")
    chain_id, _, function = rest.partition("/")
    query = parse_qs(parsed.query)
    return {
        "token": target.lower(),
        "chain_id": int(chain_id),
        "function": function,
        "address": query["address"][0].lower(),
        "amount": int(query["uint256"][0]),
    }


def api_payment(live_server, raw_key: str, number: str) -> dict:
    request = urllib.request.Request(
        f"{live_server.url}/api/v1/orders/{number}/",
        headers={"Authorization": f"Api-Key {raw_key}"},
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.load(answer)["payment"]


def assert_everything_asks_for(page, payment: dict, amount: int) -> None:
    """The QR, the wallet link, the copy values and the API all request `amount` base units."""
    request = eip681(displayed_qr(page, ".payment-qr svg"))
    assert request == {
        "token": payment["token_address"].lower(),
        "chain_id": payment["chain_id"],
        "function": "transfer",
        "address": payment["address"].lower(),
        "amount": amount,
    }
    assert eip681(page.get_by_test_id("payment-link").get_attribute("href")) == request
    assert eip681(payment["uri"]) == request
    assert page.locator("[data-wallet]").get_attribute("data-amount") == str(amount)


def paying_customer(page, live_server, devnet):
    customer = UserFactory(password=PASSWORD, language="fr")
    invoice = order_with_invoice(devnet.usdc, user=customer)
    raw_key = api_key_create(user=customer, name="Test")[1]
    log_in(page, customer.email, PASSWORD)
    page.goto(f"/fr/account/orders/{invoice.order.number}/")
    expect(page.get_by_test_id("payment-address")).to_be_visible()
    return invoice, raw_key


def test_the_displayed_qr_decodes_to_the_request_before_and_after_a_partial_payment(
    desktop, live_server, devnet
):
    page = desktop
    invoice, raw_key = paying_customer(page, live_server, devnet)
    number, due = invoice.order.number, int(invoice.amount_due)

    before = api_payment(live_server, raw_key, number)
    assert int(before["left"]) == due
    assert_everything_asks_for(page, before, due)

    devnet.pay_token(invoice.deposit_address, due // 3)
    devnet.scan()
    left = due - due // 3
    shown = in_asset_units(left, asset=devnet.usdc)
    # No reload: the next poll brings what is left, QR and copy values included.
    expect(page.get_by_test_id("payment-amount")).to_have_text(shown, timeout=10_000)
    after = api_payment(live_server, raw_key, number)
    assert int(after["left"]) == left
    assert_everything_asks_for(page, after, left)
    screenshot(page, "payment-partly-paid")


def test_on_a_phone_the_amount_network_and_address_copy_are_on_the_first_screen(
    phone, live_server, devnet
):
    page = phone
    paying_customer(page, live_server, devnet)
    screenshot(page, "payment-phone-first-screen")
    height = page.viewport_size["height"]
    for element in (
        page.get_by_test_id("payment-amount"),
        page.locator(".payment-network"),
        page.locator("[data-copy='#payment-address']"),
    ):
        box = element.bounding_box()
        assert box is not None and box["y"] + box["height"] <= height, element
    # The offer to cancel comes after the payment, not before it.
    payment_top = page.get_by_test_id("payment-section").bounding_box()["y"]
    assert page.locator("form.cancel-order").bounding_box()["y"] > payment_top


def test_once_paid_a_receipt_replaces_the_instructions(desktop, live_server, devnet):
    page = desktop
    invoice, _raw_key = paying_customer(page, live_server, devnet)
    tx_hash = devnet.pay_token(invoice.deposit_address, int(invoice.amount_due))
    devnet.scan()
    # Within a few 3 s polls; generous, since a loaded machine can delay one.
    expect(page.get_by_test_id("payment-instructions")).to_be_hidden(timeout=20_000)

    devnet.mine(devnet.chain.confirmations - 1)  # the block of the last confirmation
    mined = time.monotonic()
    devnet.scan()
    expect(page.get_by_test_id("order-status")).to_contain_text("Payée", timeout=15_000)
    seconds = time.monotonic() - mined
    # Measured, not asserted: the time from the last confirmation's block to "paid" on screen.
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "confirmation-to-paid.txt").write_text(f"{seconds:.1f} s\n")
    print(f"last confirmation -> paid on screen: {seconds:.1f} s")

    receipt = page.get_by_test_id("payment-receipt")
    expect(receipt).to_be_visible(timeout=10_000)
    expect(receipt).to_contain_text(in_asset_units(invoice.amount_due, asset=devnet.usdc))
    expect(receipt).to_contain_text(tx_hash)
    screenshot(page, "payment-receipt")

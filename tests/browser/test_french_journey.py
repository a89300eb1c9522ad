import re

import pytest
from django.utils import translation
from playwright.sync_api import expect

from catalog.formatting import money
from catalog.models import TermPrice
from orders.models import Order, OrderStatus
from payments.models import Invoice
from tests.accounts.helpers import code_in, last_mail_to
from tests.browser.conftest import count_page_loads, order_now, screenshot, sign_up

pytestmark = [pytest.mark.browser, pytest.mark.chain, pytest.mark.django_db(transaction=True)]
PASSWORD = "correct-Horse-battery-9"


def test_french_visitor_rents_two_h100_and_pays_on_chain(desktop, catalog, devnet):
    page = desktop
    page.goto("/")
    expect(page).to_have_url(re.compile(r"/fr/$"))
    loads = count_page_loads(page)  # from the catalog to the payment instructions
    page.click("a[href='/fr/gpus/h100-sxm/']")
    expect(page.locator("h1")).to_contain_text("H100 SXM")
    page.locator("a[href^='/fr/gpus/h100-sxm/configure/']").first.click()

    page.check("input[name=environment][value=pytorch]")
    page.fill("input[name=quantity]", "2")
    page.check("input[name=term][value='7']")
    rate = TermPrice.objects.get(gpu__slug="h100-sxm", term_days=7).daily_rate
    with translation.override("fr"):
        expected_total = money(rate * 7 * 2)
    # The price follows the form without a reload.
    expect(page.get_by_test_id("quote-total")).to_contain_text(expected_total)
    screenshot(page, "journey-fr-configurator")
    order_now(page)

    page.wait_for_url("**/fr/accounts/signup/**")
    sign_up(
        page,
        first_name="Émilie",
        last_name="du Châtelet",
        email="emilie@example.fr",
        password=PASSWORD,
    )

    # The code from the mailbox (the live server runs in this process: its outbox).
    expect(page.locator("h1")).to_have_text("Confirmez votre adresse e-mail")
    screenshot(page, "journey-fr-email-code")
    page.get_by_test_id("verification-code").fill(code_in(last_mail_to("emilie@example.fr")))
    page.get_by_test_id("verification-submit").click()

    # The order they pressed « Commander » for is placed as soon as the address is confirmed.
    page.wait_for_url(re.compile(r"/fr/account/orders/LG-[A-Z0-9-]+/$"))
    order = Order.objects.get(user__email="emilie@example.fr")
    expect(page.get_by_test_id("order-number")).to_have_text(order.number)
    expect(page.get_by_test_id("order-total")).to_contain_text(expected_total)

    page.check(f"input[name=asset][value='{devnet.usdc.slug}']")
    page.click("text=Afficher les instructions de paiement")
    expect(page.get_by_test_id("payment-address")).to_be_visible()
    expect(page.locator(".payment-qr svg")).to_be_visible()
    # GPU page, configurator, sign-up, e-mail code, order page with its instructions.
    assert len(loads) <= 5, loads
    invoice = Invoice.objects.get(order=order)
    address = page.get_by_test_id("payment-address").inner_text()
    assert address.lower() == invoice.deposit_address.lower()
    amount = page.get_by_test_id("payment-amount").inner_text()
    assert (
        amount.replace(",", ".")
        == str(invoice.amount_due / 10**devnet.usdc.decimals).rstrip("0").rstrip(".")
        or amount
    )
    screenshot(page, "journey-fr-payment")

    page.fill("input[name=tx_hash]", "0x1234")
    page.get_by_test_id("claim-button").click()
    expect(page.get_by_test_id("claim-error")).to_be_visible()
    page.problems.clear()  # Chromium logs the 400 that carried the form error

    tx_hash = devnet.pay_token(invoice.deposit_address, int(invoice.amount_due))
    page.fill("input[name=tx_hash]", tx_hash)
    page.get_by_test_id("claim-button").click()
    expect(page.get_by_test_id("order-status")).to_contain_text("Paiement en confirmation")
    # Money seen: the instructions and the "I've paid" button give way, without a reload.
    expect(page.get_by_test_id("payment-instructions")).to_be_hidden()

    devnet.mine(devnet.chain.confirmations)
    devnet.scan()
    # No reload: the status part of the page polls and reaches "paid".
    expect(page.get_by_test_id("order-status")).to_contain_text("Payée", timeout=15_000)
    expect(page.locator(".timeline-step[data-status=paid]")).to_have_class(
        re.compile("step-(done|current)")
    )
    expect(page.get_by_test_id("payment-status")).to_contain_text("3 confirmations sur 3")
    screenshot(page, "journey-fr-paid")
    order.refresh_from_db()
    assert order.status == OrderStatus.PAID

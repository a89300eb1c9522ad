"""The payment countdown while an order awaits payment (issue 26: "the countdown froze after
« J'ai payé »"). htmx swaps the payment section in again after « J'ai payé » and after each
event of the order: the countdown it brings shows the time left at once and goes on ticking;
once the order is paid no countdown is left."""

import re

import pytest
from playwright.sync_api import expect

from payments.models import Transfer
from payments.watcher.settlement import invoice_settle
from tests.browser.conftest import open_unpaid_order
from tests.payments.helpers import transfer_recorded

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PASSWORD = "correct-Horse-battery-9"
TIME_LEFT = re.compile(r"\d+(:\d\d){1,2}")

# Each text a countdown shows, as the browser paints it (a frame callback runs just before the
# paint): one entry per change.
RECORD_PAINTED = """() => {
  window.paintedCountdowns = [];
  (function frame() {
    var texts = Array.from(document.querySelectorAll("[data-countdown]"), (el) => el.textContent);
    var last = window.paintedCountdowns[window.paintedCountdowns.length - 1];
    if (texts.length && texts.join() !== last) window.paintedCountdowns.push(texts.join());
    requestAnimationFrame(frame);
  })();
}"""


def expect_ticking(page) -> None:
    countdown = page.locator(".payment-countdown")
    expect(countdown).to_have_text(TIME_LEFT)
    expect(countdown).not_to_have_text(countdown.inner_text())


def test_the_countdown_ticks_on_after_i_have_paid_and_goes_once_paid(desktop, usdc):
    page = desktop
    invoice = open_unpaid_order(page, usdc, PASSWORD)
    expect_ticking(page)
    page.evaluate(RECORD_PAINTED)

    with page.expect_response(lambda answer: "/payment/claim/" in answer.url):
        page.get_by_test_id("claim-button").click()
    # The claim is an event of the order: its status poll brings the payment section again.
    expect(page.locator("#order-history")).to_contain_text("Le client a signalé un paiement")
    expect_ticking(page)
    painted = page.evaluate("window.paintedCountdowns")
    assert all(TIME_LEFT.fullmatch(text) for text in painted), painted

    transfer_recorded(invoice, status=Transfer.Status.CONFIRMED)
    invoice_settle(invoice_id=invoice.pk)
    expect(page.get_by_test_id("order-status")).to_contain_text("Payée")
    expect(page.locator("[data-countdown]")).to_have_count(0)
    expect(page.get_by_text("Réglez avant cette heure")).to_have_count(0)

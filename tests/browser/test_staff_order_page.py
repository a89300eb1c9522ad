"""The order's admin page as staff read it in Chromium: the payment block's captions readable
and its tables whole inside their row (the admin clips what overflows a form row)."""

import pytest

from orders.models import Order, OrderStatus
from payments.models import Chain, PaymentClaim
from tests.browser.conftest import screenshot, staff_log_in
from tests.factories import UserFactory
from tests.payments.refund_helpers import overpaid_refund

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PASSWORD = "correct-Horse-battery-9"

# Per table of the payment block: whether it overflows its form row, whether a header cell is
# cut, and whether a link sits in the caption (blue on the caption's blue bar).
LAYOUT = """() => [...document.querySelectorAll('[data-testid=order-payments] table')].map(t => {
  const row = t.closest('.form-row').getBoundingClientRect();
  return {
    caption: t.caption ? t.caption.textContent.trim() : '',
    overflows: t.getBoundingClientRect().right > row.right + 0.5,
    cut: [...t.querySelectorAll('th')].some(th => th.scrollWidth > th.clientWidth + 1),
    captionLink: !!(t.caption && t.caption.querySelector('a')),
  };
})"""


def test_the_payment_block_is_readable_and_whole(desktop, usdc):
    Chain.objects.update(explorer_tx_url="https://explorer.example/tx/{tx}")
    refund = overpaid_refund(usdc)
    order = refund.order
    PaymentClaim.objects.create(
        order=order, invoice=refund.invoice, user=order.user, tx_hash="0x" + "12" * 32
    )
    Order.objects.filter(pk=order.pk).update(status=OrderStatus.PAID)
    staff = UserFactory(password=PASSWORD, is_staff=True, is_superuser=True)
    page = desktop
    staff_log_in(page, staff, PASSWORD)

    page.goto(f"/admin/orders/order/{order.pk}/change/")
    tables = page.evaluate(LAYOUT)
    screenshot(page, "staff-order-payments")
    assert len(tables) >= 3  # the payment request, its transfers, the claims
    for table in tables:
        assert not table["overflows"] and not table["cut"], table
        assert not table["captionLink"], table
    captions = [table["caption"] for table in tables]
    assert "DÉCLARATIONS « J\u2019AI PAYÉ »" in [caption.upper() for caption in captions]
    text = page.locator("[data-testid=order-payments]").inner_text()
    assert "Signalements « J" not in text and "signalements" in text.lower()

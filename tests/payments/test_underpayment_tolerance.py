"""PAYMENTS_UNDERPAYMENT_TOLERANCE is a fraction of the amount due (checked to lie within
0-5 % at start-up): a small shortfall counts as paid, an empty or short address never does."""

from decimal import Decimal

import pytest

from orders.models import OrderStatus
from payments.models import Transfer
from payments.watcher.settlement import invoice_settle
from tests.payments.helpers import order_with_invoice, reload, transfer_recorded

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("fraction_received", "status"),
    [("0.995", OrderStatus.PAID), ("0.98", OrderStatus.AWAITING_PAYMENT)],
)
def test_a_shortfall_within_the_tolerance_counts_as_paid(usdc, settings, fraction_received, status):
    settings.PAYMENTS_UNDERPAYMENT_TOLERANCE = Decimal("0.01")
    invoice = order_with_invoice(usdc)
    transfer_recorded(
        invoice,
        amount=(invoice.amount_due * Decimal(fraction_received)).to_integral_value(),
        status=Transfer.Status.CONFIRMED,
    )
    invoice_settle(invoice_id=invoice.pk)
    invoice, order = reload(invoice)
    assert order.status == status
    assert invoice.underpaid is (status != OrderStatus.PAID)


def test_nothing_received_is_never_paid_even_at_the_highest_tolerance(usdc, settings):
    settings.PAYMENTS_UNDERPAYMENT_TOLERANCE = Decimal("0.05")
    invoice = order_with_invoice(usdc)
    invoice_settle(invoice_id=invoice.pk)
    assert reload(invoice)[1].status == OrderStatus.AWAITING_PAYMENT

"""PAYMENTS_UNDERPAYMENT_TOLERANCE is a fraction of the amount due (checked to lie within
0-5 % at start-up): a small shortfall counts as paid, an empty or short address never does."""

from decimal import Decimal

import pytest
from django.utils import timezone

from orders.models import OrderStatus
from payments.models import Transfer
from payments.settlement import invoice_settle
from tests.payments.helpers import order_with_invoice, reload

pytestmark = pytest.mark.django_db


def received(invoice, fraction: str) -> None:
    Transfer.objects.create(
        chain=invoice.asset.chain,
        tx_hash="0x" + "ab" * 32,
        log_index=0,
        block_number=1,
        block_hash="0x" + "cd" * 32,
        block_time=timezone.now(),
        from_address="0x" + "11" * 20,
        to_address=invoice.deposit_address,
        asset=invoice.asset,
        amount=(invoice.amount_due * Decimal(fraction)).to_integral_value(),
        invoice=invoice,
        status=Transfer.Status.CONFIRMED,
    )
    invoice_settle(invoice_id=invoice.pk)


@pytest.mark.parametrize(
    ("fraction_received", "status"),
    [("0.995", OrderStatus.PAID), ("0.98", OrderStatus.AWAITING_PAYMENT)],
)
def test_a_shortfall_within_the_tolerance_counts_as_paid(usdc, settings, fraction_received, status):
    settings.PAYMENTS_UNDERPAYMENT_TOLERANCE = Decimal("0.01")
    invoice = order_with_invoice(usdc)
    received(invoice, fraction_received)
    invoice, order = reload(invoice)
    assert order.status == status
    assert invoice.underpaid is (status != OrderStatus.PAID)


def test_nothing_received_is_never_paid_even_at_the_highest_tolerance(usdc, settings):
    settings.PAYMENTS_UNDERPAYMENT_TOLERANCE = Decimal("0.05")
    invoice = order_with_invoice(usdc)
    invoice_settle(invoice_id=invoice.pk)
    assert reload(invoice)[1].status == OrderStatus.AWAITING_PAYMENT

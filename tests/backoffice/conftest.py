import pytest

from billing.models import BillingDocument
from billing.services import credit_note_issue, invoice_issue
from orders.models import Order, OrderEvent
from payments.models import Invoice, PaymentClaim, Transfer
from payments.refunds.models import Refund
from tests.payments.refund_helpers import overpaid_refund


@pytest.fixture
def records(usdc, customer) -> dict[type, object]:
    """One row of each append-only model, all about one overpaid order."""
    refund = overpaid_refund(usdc, user=customer)
    order, invoice = refund.order, refund.invoice
    claim = PaymentClaim.objects.create(order=order, invoice=invoice, user=customer)
    return {
        Order: order,
        OrderEvent: order.events.first(),
        Invoice: invoice,
        Transfer: invoice.transfers.get(),
        PaymentClaim: claim,
        Refund: refund,
        BillingDocument: credit_note_issue(invoice=invoice_issue(order=order)),
    }

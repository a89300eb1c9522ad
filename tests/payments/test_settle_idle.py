"""invoice_settle runs on every scan of every invoice still confirming: a second call that
finds nothing new only reads, it writes nothing and records nothing."""

from decimal import Decimal

import pytest

from orders.models import OrderEvent, OrderStatus
from payments.models import Transfer
from payments.watcher.settlement import invoice_settle
from tests.payments.helpers import order_with_invoice, reload, transfer_recorded

pytestmark = pytest.mark.django_db

# Reads only: the invoice's order, the order locked, its invoices locked, the transfers that
# count, the ledger's two sums, the open refund, and the savepoint around them with its
# release.
IDLE_SETTLE_QUERIES = 9

WRITES = ("UPDATE", "INSERT", "DELETE")


@pytest.mark.parametrize(
    ("share_paid", "status", "transfer_status"),
    [
        ("1", OrderStatus.CONFIRMING, Transfer.Status.SEEN),
        ("0.5", OrderStatus.AWAITING_PAYMENT, Transfer.Status.SEEN),
        ("1", OrderStatus.PAID, Transfer.Status.CONFIRMED),
        ("1.5", OrderStatus.PAID, Transfer.Status.CONFIRMED),
    ],
    ids=["confirming", "underpaid", "paid", "overpaid"],
)
def test_a_second_settle_with_nothing_new_writes_nothing(
    usdc, share_paid, status, transfer_status, django_assert_max_num_queries
):
    invoice = order_with_invoice(usdc)
    amount = (invoice.amount_due * Decimal(share_paid)).to_integral_value()
    transfer_recorded(invoice, amount=amount, status=transfer_status)
    invoice_settle(invoice_id=invoice.pk)
    assert reload(invoice)[1].status == status
    events = OrderEvent.objects.count()

    with django_assert_max_num_queries(IDLE_SETTLE_QUERIES) as queries:
        invoice_settle(invoice_id=invoice.pk)

    sql = [query["sql"] for query in queries.captured_queries]
    assert [each for each in sql if each.lstrip().startswith(WRITES)] == []
    assert OrderEvent.objects.count() == events

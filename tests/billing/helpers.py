"""An order paid as the watcher pays it: a confirmed transfer, then the settlement."""

from payments.models import Transfer
from payments.watcher.settlement import invoice_settle
from tests.payments.helpers import order_with_invoice, transfer_recorded


def order_paid(asset, *, user=None, tx_hash: str = "0x" + "ab" * 32, **order_fields):
    """The order's payment settles: it is paid, and its events are dispatched (run the
    call inside `worker_runs()` for the dispatch to happen)."""
    invoice = order_with_invoice(asset, user=user, **order_fields)
    transfer = transfer_recorded(invoice, status=Transfer.Status.CONFIRMED)
    Transfer.objects.filter(pk=transfer.pk).update(tx_hash=tx_hash)
    invoice_settle(invoice_id=invoice.pk)
    invoice.order.refresh_from_db()
    return invoice.order

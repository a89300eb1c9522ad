"""Builders shared by the refund tests: an overpaid order with its refund owed, and staff's
side of the admin."""

from payments.models import Transfer
from payments.refunds.models import Refund
from payments.refunds.services import refund_address_set
from payments.watcher.settlement import invoice_settle
from tests.payments.helpers import order_with_invoice, transfer_recorded

# The customer sent 12.50 USDC too many.
EXTRA = 12_500_000
# A wallet of the customer's (checksummed, as wallets show it), and someone else's.
CUSTOMER_WALLET = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
OTHER_WALLET = "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359"


def overpaid_refund(asset, *, user=None, extra: int = EXTRA) -> Refund:
    """An order paid with `extra` base units too many, confirmed: its refund is owed."""
    invoice = order_with_invoice(asset, user=user)
    transfer = transfer_recorded(
        invoice, amount=invoice.amount_due + extra, status=Transfer.Status.CONFIRMED
    )
    # Its own transaction hash, so a test may pay several orders.
    Transfer.objects.filter(pk=transfer.pk).update(tx_hash=f"0x{transfer.pk:064x}")
    invoice_settle(invoice_id=invoice.pk)
    return Refund.objects.select_related("order", "asset", "chain").get(invoice=invoice)


def refund_to_send(asset, *, user) -> Refund:
    """A refund of 12.50 whose address the customer gave: staff may send it."""
    refund = overpaid_refund(asset, user=user)
    refund_address_set(order=refund.order, address=CUSTOMER_WALLET, user=user, actor="customer")
    return reload(refund)


def staff_pastes(client, refund: Refund, tx_hash: str, *, address: str | None = None):
    """Staff's admin action on one refund, with the transaction hash and the address the form
    showed (the refund's as it is now, unless told)."""
    return client.post(
        "/admin/payments/refund/",
        {
            "action": "record_transaction",
            "_selected_action": [refund.pk],
            "apply": "1",
            "tx_hash": tx_hash,
            "address": reload(refund).address if address is None else address,
        },
    )


def reload(refund: Refund) -> Refund:
    return Refund.objects.select_related("order", "asset", "chain").get(pk=refund.pk)

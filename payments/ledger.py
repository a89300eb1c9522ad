"""The money of one invoice, as every decision reads it: what came in, what went back, what is
owed back now.

The settlement (does the money cover the order?), the refunds (how much is owed?) and the
billing (is there money to invoice?) all read this one account, so a refund sent can never
be counted again as a payment.
"""

from dataclasses import dataclass
from decimal import Decimal

from django.db.models import Max, Q, Sum

from orders.models import Order, OrderStatus
from payments.models import Invoice, Transfer
from payments.refunds.models import Refund, RefundStatus

# The order got nothing for its money: all of it is owed back (an expired one once it cannot
# be revived any more).
GOT_NOTHING = (OrderStatus.EXPIRED, OrderStatus.CANCELLED, OrderStatus.REFUNDED)
ENDED = (OrderStatus.CANCELLED, OrderStatus.REFUNDED)
UNPAID = (OrderStatus.AWAITING_PAYMENT, OrderStatus.CONFIRMING, OrderStatus.EXPIRED)
ZERO = Decimal(0)


@dataclass(frozen=True)
class Ledger:
    received: Decimal  # confirmed transfers credited to the invoice
    pending: Decimal  # credited transfers not confirmed yet
    stray: Decimal  # confirmed, in its asset, crediting nothing (closed invoice, after the watch)
    refund_pinned: Decimal  # refunds staff opened to pay, no proof yet: may be on their way
    refund_sent: Decimal  # refunds sent, their transaction being checked
    refund_confirmed: Decimal  # refunds proven on chain
    last_block: int | None  # of the latest transfer still on the chain: owed since then

    @property
    def refunded(self) -> Decimal:
        # A pinned refund no longer follows the money and staff may have paid it already: it
        # counts as gone, or a late transfer would revive the order under it.
        return self.refund_pinned + self.refund_sent + self.refund_confirmed

    @property
    def held(self) -> Decimal:
        """What the store still holds of the money credited to the invoice."""
        return max(min(self.received, self.received + self.stray - self.refunded), ZERO)

    def owed(self, *, invoice: Invoice, order: Order) -> Decimal:
        """What is owed back now, beyond what confirmed refunds returned. `order` is the
        invoice's, read under its lock."""
        kept = min(self.received, invoice.amount_due)
        if invoice.status == Invoice.Status.CLOSED or order.status in ENDED:
            kept = ZERO
        elif order.status in UNPAID and (invoice.review or self.refunded):
            # The money can buy nothing (units sold since, the rental ended) or went back.
            kept = ZERO
        elif order.status == OrderStatus.EXPIRED:
            # A late payment may still revive the order while its units are free.
            kept = self.received
        return max(self.received + self.stray - kept - self.refund_confirmed, ZERO)


def _sum(field: str, condition: Q) -> Sum:
    return Sum(field, filter=condition, default=ZERO)


def invoice_ledger(*, invoice: Invoice) -> Ledger:
    """The invoice's account, in two queries (its transfers', its refunds')."""
    live = ~Q(status=Transfer.Status.ORPHANED)
    credit = Q(disposition=Transfer.Disposition.CREDIT) & live
    transfers = Transfer.objects.filter(invoice=invoice).aggregate(
        received=_sum("amount", credit & Q(status=Transfer.Status.CONFIRMED)),
        pending=_sum("amount", credit & Q(status=Transfer.Status.SEEN)),
        last_block=Max("block_number", filter=live),
        stray=_sum(
            "amount",
            ~Q(disposition=Transfer.Disposition.CREDIT)
            & Q(asset_id=invoice.asset_id, status=Transfer.Status.CONFIRMED),
        ),
    )
    refunds = Refund.objects.filter(invoice=invoice).aggregate(
        pinned=_sum(
            "amount",
            Q(pinned_at__isnull=False) & ~Q(status__in=[RefundStatus.SENT, RefundStatus.CONFIRMED]),
        ),
        sent=_sum("amount", Q(status=RefundStatus.SENT)),
        confirmed=_sum("amount", Q(status=RefundStatus.CONFIRMED)),
    )
    return Ledger(
        received=transfers["received"],
        pending=transfers["pending"],
        stray=transfers["stray"],
        refund_pinned=refunds["pinned"],
        refund_sent=refunds["sent"],
        refund_confirmed=refunds["confirmed"],
        last_block=transfers["last_block"],
    )

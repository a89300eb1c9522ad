"""From transfers to order statuses: recording what the chain shows and settling invoices.

Everything here runs inside the caller's transaction and never calls the RPC: the scanner
fetches first, then writes.
"""

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext_noop

from orders.errors import UnitsGone
from orders.models import Order, OrderEvent, OrderStatus
from orders.stock import order_paying_transition
from orders.transitions import order_event_record, order_transition
from payments.ledger import GOT_NOTHING, invoice_ledger
from payments.locks import order_and_invoices_locked, orders_and_invoices_locked
from payments.models import Asset, Chain, Invoice, Transfer
from payments.refunds.services import refunds_owed_sync

Actor = OrderEvent.Actor
Kind = OrderEvent.Kind
Disposition = Transfer.Disposition


@dataclass(frozen=True)
class ObservedTransfer:
    """A transfer read from the chain, before it is matched to an invoice."""

    tx_hash: str
    log_index: int
    block_number: int
    block_hash: str
    block_time: datetime
    from_address: str
    to_address: str
    asset: Asset
    amount: int


def _disposition(*, invoice: Invoice, order: Order, observed: ObservedTransfer) -> str:
    if observed.asset.pk != invoice.asset_id:
        return Disposition.WRONG_ASSET
    # A closed invoice (replaced, or its money refunded) credits nothing: what reaches it is
    # owed back in full. A cancelled order's invoice closed with it: its money counts, to be
    # flagged and owed back in full too.
    if invoice.status == Invoice.Status.CLOSED and order.status != OrderStatus.CANCELLED:
        return Disposition.CLOSED_INVOICE
    if observed.block_time > invoice.monitor_until:
        return Disposition.UNMONITORED
    return Disposition.CREDIT


def _transfer_data(transfer: Transfer) -> dict:
    return {
        "invoice": transfer.invoice_id,
        "tx_hash": transfer.tx_hash,
        "log_index": transfer.log_index,
        "block": transfer.block_number,
        "asset": transfer.asset.slug,
        "amount": str(transfer.amount),
    }


# Keyed by str: a transfer's disposition reads back from the database as a plain string.
FLAG_REASONS: dict[str, str] = {
    Disposition.WRONG_ASSET: gettext_noop("a transfer in another currency than the invoice's"),
    Disposition.CLOSED_INVOICE: gettext_noop(
        "a transfer to the address of a closed invoice: owed back in full"
    ),
    Disposition.UNMONITORED: gettext_noop("a transfer after the watch period"),
}


def transfers_record(*, chain: Chain, observed: list[ObservedTransfer]) -> set[int]:
    """Store the transfers to our deposit addresses, once each. Returns the invoices touched.

    Runs inside the caller's transaction (the scan's, or the immediate check's).

    A transfer already recorded is skipped, unless a reorganisation had orphaned it (or moved
    it to another block): then it is seen again.
    """
    addresses = {item.to_address for item in observed}
    if not addresses:
        return set()
    # Locked as invoice_issue locks them: an invoice switched to another currency while this
    # runs is either seen closed here, or sees this transfer and keeps its address.
    order_ids = Invoice.objects.filter(deposit_address__in=addresses).values_list(
        "order_id", flat=True
    )
    touched: set[int] = set()
    with orders_and_invoices_locked(set(order_ids)) as (orders, locked):
        invoices = {invoice.deposit_address: invoice for invoice in locked}
        orders_by_id = {order.pk: order for order in orders}
        for item in observed:
            invoice = invoices.get(item.to_address)
            if invoice is not None and _transfer_store(
                chain=chain, invoice=invoice, order=orders_by_id[invoice.order_id], item=item
            ):
                touched.add(invoice.pk)
    return touched


def _transfer_store(
    *, chain: Chain, invoice: Invoice, order: Order, item: ObservedTransfer
) -> bool:
    """Record one transfer to `invoice` (locked); False if it was recorded already."""
    fields = {
        "block_number": item.block_number,
        "block_hash": item.block_hash,
        "block_time": item.block_time,
        "status": Transfer.Status.SEEN,
    }
    try:
        with transaction.atomic():
            transfer = Transfer.objects.create(
                chain=chain,
                tx_hash=item.tx_hash,
                log_index=item.log_index,
                from_address=item.from_address,
                to_address=item.to_address,
                asset=item.asset,
                amount=Decimal(item.amount),
                invoice=invoice,
                disposition=_disposition(invoice=invoice, order=order, observed=item),
                **fields,
            )
    except IntegrityError:
        # Already recorded. Seen again only if it had left the canonical chain.
        revived = (
            Transfer.objects.filter(chain=chain, tx_hash=item.tx_hash, log_index=item.log_index)
            .exclude(
                status__in=[Transfer.Status.SEEN, Transfer.Status.CONFIRMED],
                block_hash=item.block_hash,
            )
            .update(**fields, confirmed_at=None)
        )
        if not revived:
            return False
        transfer = Transfer.objects.select_related("asset").get(
            chain=chain, tx_hash=item.tx_hash, log_index=item.log_index
        )
    _transfer_event(transfer=transfer, invoice=invoice, kind=Kind.TRANSFER_SEEN)
    if transfer.disposition != Disposition.CREDIT:
        _flag(
            invoice=invoice,
            flag="wrong_asset" if transfer.disposition == Disposition.WRONG_ASSET else "review",
            reason=FLAG_REASONS[transfer.disposition],
            data=_transfer_data(transfer),
            each_time=True,
        )
    return True


def _transfer_event(*, transfer: Transfer, invoice: Invoice, kind: str, reason: str = "") -> None:
    order = Order.objects.get(pk=invoice.order_id)
    order_event_record(
        order=order, kind=kind, actor=Actor.SYSTEM, reason=reason, data=_transfer_data(transfer)
    )


def _flag(
    *, invoice: Invoice, flag: str, reason: str, data: dict | None = None, each_time: bool = False
) -> None:
    """Raise a flag on the invoice, with a timeline event the first time only (`each_time`:
    every time, for a transfer staff must look at whatever flags are up already).

    `invoice` was read under its lock: a flag it shows up is up, and needs no UPDATE.
    """
    if getattr(invoice, flag) and not each_time:
        return
    raised = Invoice.objects.filter(pk=invoice.pk, **{flag: False}).update(**{flag: True})
    if not (raised or each_time):
        return
    setattr(invoice, flag, True)
    order = Order.objects.get(pk=invoice.order_id)
    order_event_record(
        order=order,
        kind=Kind.PAYMENT_FLAGGED,
        actor=Actor.SYSTEM,
        reason=reason,
        data={"flag": flag, "invoice": invoice.pk, **(data or {})},
    )


def transfer_confirm(*, transfer: Transfer) -> bool:
    """seen -> confirmed, once. Returns False if something else changed it first."""
    now = timezone.now()
    if not Transfer.objects.filter(pk=transfer.pk, status=Transfer.Status.SEEN).update(
        status=Transfer.Status.CONFIRMED, confirmed_at=now
    ):
        return False
    transfer.status = Transfer.Status.CONFIRMED
    # invoice_id None reads transfer.invoice as None without a query.
    if transfer.disposition == Disposition.CREDIT and transfer.invoice is not None:
        _transfer_event(transfer=transfer, invoice=transfer.invoice, kind=Kind.TRANSFER_CONFIRMED)
    return True


def transfer_orphan(*, transfer: Transfer) -> bool:
    """The transfer's block left the canonical chain: it no longer counts."""
    if (
        not Transfer.objects.filter(pk=transfer.pk)
        .exclude(status=Transfer.Status.ORPHANED)
        .update(status=Transfer.Status.ORPHANED, confirmed_at=None)
    ):
        return False
    transfer.status = Transfer.Status.ORPHANED
    if transfer.invoice is not None:
        _transfer_event(
            transfer=transfer,
            invoice=transfer.invoice,
            kind=Kind.TRANSFER_ORPHANED,
            reason=gettext_noop("its block was replaced by a chain reorganisation"),
        )
    return True


def _tolerance(amount_due: Decimal) -> Decimal:
    # A fraction of the amount due, checked to lie within 0-5 % at start-up.
    fraction = settings.PAYMENTS_UNDERPAYMENT_TOLERANCE
    return (amount_due * fraction).to_integral_value(rounding="ROUND_FLOOR")


def invoice_settle(*, invoice_id: int) -> None:
    """Bring the invoice's totals, flags and its order's status in line with its transfers.

    Safe to call any number of times: every write is conditional, so a second call with
    nothing new does nothing.
    """
    # An invoice never changes order: reading it unlocked first keeps the one lock order.
    order_id = Invoice.objects.values_list("order_id", flat=True).get(pk=invoice_id)
    with order_and_invoices_locked(order_id) as (order, invoices):
        invoice = next(each for each in invoices if each.pk == invoice_id)
        counted = list(
            invoice.transfers.filter(disposition=Disposition.CREDIT).exclude(
                status=Transfer.Status.ORPHANED
            )
        )
        ledger = invoice_ledger(invoice=invoice)
        confirmed, pending = ledger.received, ledger.pending
        # Only money the store still holds pays: a refund sent is never counted again.
        due = invoice.amount_due
        enough = due - _tolerance(due)
        covered = ledger.held + pending >= enough
        covered_confirmed = ledger.held >= enough

        totals = (confirmed, pending, len(counted) > 1)
        # Every scan settles every confirming invoice again: nothing new, nothing written.
        if totals != (invoice.amount_received, invoice.amount_pending, invoice.multiple):
            invoice.amount_received, invoice.amount_pending, invoice.multiple = totals
            invoice.save(update_fields=["amount_received", "amount_pending", "multiple"])
        left = {"left": str(max(due - confirmed - pending, Decimal(0)))}
        if 0 < confirmed + pending < enough:
            _flag(
                invoice=invoice,
                flag="underpaid",
                reason=gettext_noop("less than the amount due"),
                data=left,
            )
        elif invoice.underpaid and covered:
            Invoice.objects.filter(pk=invoice.pk).update(underpaid=False)
        if confirmed > due:
            owed = {"refund_owed": str(confirmed - due)}
            _flag(
                invoice=invoice,
                flag="overpaid",
                reason=gettext_noop("more than the amount due"),
                data=owed,
            )
        if any(t.block_time > invoice.expires_at for t in counted):
            _flag(
                invoice=invoice,
                flag="paid_late",
                reason=gettext_noop("received after the deadline"),
            )

        data = {"invoice": invoice.pk, "received": str(confirmed), "pending": str(pending)}
        # An order whose money went back is never revived by what reaches it afterwards.
        revivable = not ledger.refunded and invoice.status != Invoice.Status.CLOSED
        if (
            covered
            and revivable
            and order.status in (OrderStatus.AWAITING_PAYMENT, OrderStatus.EXPIRED)
        ):
            _payment_accept(order=order, invoice=invoice, data=data)
        if order.status == OrderStatus.CONFIRMING:
            if covered_confirmed:
                if _paying_transition(
                    order=order,
                    invoice=invoice,
                    to=OrderStatus.PAID,
                    reason=gettext_noop("payment confirmed on chain"),
                    data=data,
                ):
                    Invoice.objects.filter(pk=invoice.pk, status=Invoice.Status.OPEN).update(
                        status=Invoice.Status.PAID
                    )
            elif not covered and not invoice.marked:
                order_transition(
                    order=order,
                    to=OrderStatus.AWAITING_PAYMENT,
                    actor=Actor.SYSTEM,
                    reason=gettext_noop("a transfer was removed by a chain reorganisation"),
                    data=data,
                )
        elif order.status in PAID_STATUSES and not invoice.marked:
            _funds_follow(invoice=invoice, kept=covered_confirmed, data=data)
        elif order.status in GOT_NOTHING and ledger.owed(invoice=invoice, order=order):
            _flag(
                invoice=invoice,
                flag="review",
                reason=gettext_noop("payment for a closed order"),
                data=data,
            )
        # Overpaid, paid late for units sold since, paid for a closed order: owed back.
        refunds_owed_sync(order=order, invoices=[invoice], ledgers={invoice.pk: ledger})


# Once paid, the order goes on to its machines: money that leaves the chain then is a loss.
PAID_STATUSES = (OrderStatus.PAID, OrderStatus.PROVISIONING, OrderStatus.ACTIVE)


def _payment_accept(*, order: Order, invoice: Invoice, data: dict) -> None:
    """Enough money seen: to confirming, with the units (an expired order takes them back)."""
    late = order.status == OrderStatus.EXPIRED
    _paying_transition(
        order=order,
        invoice=invoice,
        to=OrderStatus.CONFIRMING,
        reason=gettext_noop("late payment seen on chain while units are free")
        if late
        else gettext_noop("payment seen on chain"),
        data=data,
    )


def _paying_transition(*, order: Order, invoice: Invoice, to: str, reason: str, data: dict):
    """The stock rule of orders.stock; money for units sold meanwhile is flagged as owed."""
    try:
        return order_paying_transition(
            order=order, to=to, actor=Actor.SYSTEM, reason=reason, data=data
        )
    except UnitsGone as gone:
        # An extension's money is late when it expired or its rental ended (ExtensionLapsed).
        received = Decimal(data["received"]) + Decimal(data["pending"])
        _flag(
            invoice=invoice,
            flag="review",
            reason=gone.reason,
            data={**data, "refund_owed": str(received)},
        )
        return False


def _funds_follow(*, invoice: Invoice, kept: bool, data: dict) -> None:
    """A paid order whose money left the chain is flagged (staff decide, provisioning waits);
    the flag goes when the money is back and confirmed."""
    if not kept:
        _flag(
            invoice=invoice,
            flag="funds_lost",
            reason=gettext_noop(
                "the payment was removed by a chain reorganisation after the order was paid: "
                "our team is looking into it and provisioning waits"
            ),
            data=data,
        )
    elif invoice.funds_lost and Invoice.objects.filter(pk=invoice.pk, funds_lost=True).update(
        funds_lost=False
    ):
        invoice.funds_lost = False
        order_event_record(
            order=Order.objects.get(pk=invoice.order_id),
            kind=Kind.NOTE,
            actor=Actor.SYSTEM,
            reason=gettext_noop("the payment is confirmed on chain again"),
            data={"flag": "funds_lost", "cleared": True, **data},
        )

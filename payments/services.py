"""Writes on payments: invoices, "I've paid" claims, staff settlement, rates."""

import re
from datetime import datetime
from decimal import ROUND_CEILING, Decimal, localcontext

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from accounts.models import User
from orders.errors import UnitsGone
from orders.extensions import ExtensionLapsed, rental_extendable
from orders.models import Order, OrderEvent, OrderStatus
from orders.stock import order_paying_transition
from orders.transitions import order_event_record
from payments.derivation import deposit_address, xpub_for
from payments.locks import order_and_invoices_locked
from payments.models import Asset, Chain, Invoice, PaymentClaim, ScanCursor
from payments.selectors import rate_current
from rental.celery import enqueue_after_commit
from rental.ratelimit import rate_limit_exceeded

Actor = OrderEvent.Actor
TX_HASH = re.compile(r"^0x[0-9a-fA-F]{64}$")
# The transitions that take an unpaid order to paid when staff mark it paid. Keyed by str:
# an order's status reads back from the database as a plain string.
_STEPS_TO_PAID: dict[str, list[str]] = {
    OrderStatus.AWAITING_PAYMENT: [OrderStatus.CONFIRMING, OrderStatus.PAID],
    OrderStatus.EXPIRED: [OrderStatus.CONFIRMING, OrderStatus.PAID],
    OrderStatus.CONFIRMING: [OrderStatus.PAID],
}


class PaymentError(Exception):
    """A payment request the store refuses, with a message for the customer."""

    def __init__(self, message, *, code: str = "invalid"):
        super().__init__(str(message))
        self.message, self.code = message, code


def amount_in_base_units(*, total: Decimal, rate: Decimal, decimals: int) -> int:
    """`total` (store currency) in the asset's base units at `rate`, rounded up."""
    with localcontext() as context:
        context.prec = 100
        units = (total * (Decimal(10) ** decimals) / rate).to_integral_value(ROUND_CEILING)
    return int(units)


def asset_unavailable_message(*, asset: Asset) -> str:
    """For the customer, when no trusted rate prices `asset` (stale or refused feed)."""
    return _(
        "%(symbol)s on %(network)s: this payment method is temporarily unavailable. Choose "
        "another currency or try again in a few minutes."
    ) % {"symbol": asset.symbol, "network": asset.chain.name}


def _next_derivation_index() -> int:
    highest = Invoice.objects.aggregate(highest=Max("derivation_index"))["highest"]
    start = settings.PAYMENTS_DERIVATION_START
    return start if highest is None or highest < start else highest + 1


def _check_payable(*, order: Order, now) -> None:
    if order.status != OrderStatus.AWAITING_PAYMENT or order.payment_deadline <= now:
        raise PaymentError(_("This order is no longer awaiting payment."), code="not_payable")
    if order.is_extension and not rental_extendable(extension=order):
        raise PaymentError(
            _("The rental this extension was for has ended: it can no longer be paid."),
            code="not_payable",
        )


def _invoice_open(invoices: list[Invoice]) -> Invoice | None:
    return next((each for each in invoices if each.status == Invoice.Status.OPEN), None)


def invoice_issue(*, order: Order, asset: Asset, now=None) -> Invoice:
    """The open invoice of `order` in `asset`; replaces an open one in another asset.

    Raises PaymentError when the order cannot be paid now or the asset's rate is stale.
    """
    now = now or timezone.now()
    _check_payable(order=order, now=now)
    if not (asset.is_active and asset.chain.is_active):
        raise PaymentError(_("This currency is not offered."), code="asset")
    cursor = ScanCursor.objects.filter(chain=asset.chain).first()
    if cursor is None:
        # Watching starts at the head the first scan sees: an address handed out before
        # could be paid in blocks the watcher never reads.
        raise PaymentError(
            _("This network is not watched yet. Try again in a minute."), code="asset"
        )
    rate = rate_current(asset=asset, currency=order.currency, now=now)
    if rate is None:
        raise PaymentError(asset_unavailable_message(asset=asset), code="stale_rate")
    xpub = xpub_for(is_devnet=asset.chain.is_devnet)
    amount_due = amount_in_base_units(total=order.total, rate=rate.rate, decimals=asset.decimals)

    with order_and_invoices_locked(order.pk) as (locked, invoices):
        # One issuer at a time per order: the open-invoice check below stays true. The order
        # may have expired (or been paid) while this waited for the lock: check it again.
        _check_payable(order=locked, now=now)
        current = _invoice_open(invoices)
        if current is not None:
            if current.asset_id == asset.pk:
                return current
            if current.transfers.exists():
                raise PaymentError(
                    _("A payment already reached the current address: it cannot be changed."),
                    code="payment_received",
                )
            current.status, current.closed_at = Invoice.Status.CLOSED, now
            current.save(update_fields=["status", "closed_at"])
        for _attempt in range(5):
            index = _next_derivation_index()
            try:
                with transaction.atomic():
                    return Invoice.objects.create(
                        order=order,
                        asset=asset,
                        deposit_address=deposit_address(xpub=xpub, index=index),
                        derivation_index=index,
                        amount_due=amount_due,
                        rate=rate,
                        locked_rate=rate.rate,
                        fiat_amount=order.total,
                        currency=order.currency,
                        created_at=now,
                        expires_at=order.payment_deadline,
                        monitor_until=order.payment_deadline + settings.PAYMENTS_MONITOR_PERIOD,
                        # A fresh address: nothing at it to explain before this block.
                        balance_explained_block=cursor.block_number,
                    )
            except IntegrityError:
                # Another invoice took this index meanwhile: take the next one.
                continue
    raise PaymentError(_("Please try again."), code="busy")


def order_invoices_close(*, order: Order, now=None) -> int:
    """The order was cancelled (orders.hooks, `order_cancel_record`, in its transaction): its open
    invoice closes with it. Its address stays watched until `monitor_until`; money reaching it
    still counts for the cancelled order, so it is flagged and owed back (settlement).

    An expired order keeps its invoice open: a late payment may still revive it while its
    units are free. Returns how many invoices closed."""
    now = now or timezone.now()
    with order_and_invoices_locked(order.pk) as (_locked, invoices):
        return Invoice.objects.filter(
            pk__in=[invoice.pk for invoice in invoices], status=Invoice.Status.OPEN
        ).update(status=Invoice.Status.CLOSED, closed_at=now)


def tx_hash_clean(value: str) -> str:
    value = (value or "").strip()
    if value and not TX_HASH.match(value):
        raise PaymentError(
            _("A transaction hash is 0x followed by 64 hexadecimal characters (0-9, a-f)."),
            code="tx_hash",
        )
    return value.lower()


def payment_claim_rate_limited(*, order: Order) -> int:
    """Count one "I've paid" press on `order`: 0 while allowed, else the seconds to wait.

    Counted per order and per account, whatever API key or browser sends it: each claim
    queues a chain check, and neither more keys nor more tabs may multiply them.
    """
    limits = (
        ("payment-claim-order", order.pk, settings.PAYMENTS_CLAIM_ORDER_RATE_LIMIT),
        ("payment-claim-account", order.user_id, settings.PAYMENTS_CLAIM_RATE_LIMIT),
    )
    for scope, key, limit in limits:
        if rate_limit_exceeded(scope=scope, key=str(key), **limit):
            return limit["period"]
    return 0


def payment_claim_record(
    *, order: Order, user: User, tx_hash: str = "", actor: str = Actor.CUSTOMER, now=None
) -> PaymentClaim:
    """The customer says they paid: a timeline event and an immediate check, never a credit.

    Presses closer than PAYMENTS_CLAIM_DEDUPE_WINDOW make one claim (and one event), unless
    the later one brings a transaction hash the first did not have.
    """
    tx_hash = tx_hash_clean(tx_hash)
    now = now or timezone.now()
    with order_and_invoices_locked(order.pk) as (order, invoices):
        invoice = _invoice_open(invoices) or max(
            invoices, key=lambda each: each.created_at, default=None
        )
        recent = (
            PaymentClaim.objects.filter(
                order=order, created_at__gte=now - settings.PAYMENTS_CLAIM_DEDUPE_WINDOW
            )
            .order_by("-created_at")
            .first()
        )
        if recent is not None and (not tx_hash or tx_hash == recent.tx_hash):
            return recent
        if recent is not None and not recent.tx_hash:
            recent.tx_hash = tx_hash
            recent.save(update_fields=["tx_hash"])
            claim = recent
        else:
            claim = PaymentClaim.objects.create(
                order=order, invoice=invoice, user=user, tx_hash=tx_hash, created_at=now
            )
        order_event_record(
            order=order,
            kind=OrderEvent.Kind.PAYMENT_CLAIMED,
            actor=actor,
            actor_user=user,
            data={"tx_hash": tx_hash} if tx_hash else {},
        )
        if invoice is not None:
            # Without a broker the next beat scan still finds the transfer.
            enqueue_after_commit("payments.tasks.invoice_check_task", invoice.pk, tx_hash)
    return claim


def invoice_mark_paid(*, invoice: Invoice, staff_user: User, reason: str) -> bool:
    """Staff settle an invoice by hand (paid off-chain, below tolerance...), with a reason."""
    reason = (reason or "").strip()
    if not reason:
        raise PaymentError(_("Give the reason for marking this order paid."), code="reason")
    with order_and_invoices_locked(invoice.order_id) as (order, invoices):
        invoice = next(each for each in invoices if each.pk == invoice.pk)
        steps = _STEPS_TO_PAID.get(order.status)
        if steps is None:
            raise PaymentError(
                _("Only an unpaid order can be marked paid (this one is %(status)s).")
                % {"status": order.get_status_display()},
                code="not_payable",
            )
        data = {"invoice": invoice.pk, "marked": True}
        for step in steps:
            try:
                moved = order_paying_transition(
                    order=order,
                    to=step,
                    actor=Actor.STAFF,
                    actor_user=staff_user,
                    reason=reason,
                    data=data,
                )
            except ExtensionLapsed:
                raise PaymentError(
                    _(
                        "This extension expired or its rental has ended: it cannot be marked "
                        "paid. Refund the customer instead."
                    ),
                    code="no_units",
                ) from None
            except UnitsGone:
                raise PaymentError(
                    _(
                        "The GPUs of this expired order went to another order: it cannot be "
                        "marked paid. Refund the customer instead."
                    ),
                    code="no_units",
                ) from None
            if not moved:
                return False
        invoice.marked, invoice.marked_by, invoice.marked_reason = True, staff_user, reason
        if invoice.status == Invoice.Status.OPEN:
            invoice.status = Invoice.Status.PAID
        invoice.save(update_fields=["marked", "marked_by", "marked_reason", "status"])
    return True


def invoice_funds_lost_clear(*, invoice: Invoice, staff_user: User, reason: str) -> bool:
    """Staff decided about a payment lost after the order was paid (paid again off-chain,
    written off...): the flag goes, provisioning may start, the reason stays in the timeline."""
    reason = (reason or "").strip()
    if not reason:
        raise PaymentError(_("Give the reason for clearing this flag."), code="reason")
    with order_and_invoices_locked(invoice.order_id) as (order, _invoices):
        if not Invoice.objects.filter(pk=invoice.pk, funds_lost=True).update(funds_lost=False):
            return False
        order_event_record(
            order=order,
            kind=OrderEvent.Kind.NOTE,
            actor=Actor.STAFF,
            actor_user=staff_user,
            reason=reason,
            data={"flag": "funds_lost", "cleared": True, "invoice": invoice.pk},
        )
    return True


def chain_cursor_start(
    *, chain: Chain, block_number: int, block_hash: str, block_time: datetime | None = None
) -> ScanCursor:
    """Start watching `chain` from this block (the next scan begins just after it)."""
    cursor, _created = ScanCursor.objects.update_or_create(
        chain=chain,
        defaults={
            "block_number": block_number,
            "block_hash": block_hash.lower(),
            "block_time": block_time,
            "scanned_at": timezone.now(),
        },
    )
    return cursor

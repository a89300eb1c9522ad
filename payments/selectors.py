"""Reads on payments: rates, offered assets, and what the order page shows."""

from decimal import Decimal

import segno
from django.conf import settings
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.safestring import mark_safe
from django.utils.translation import gettext
from eth_utils import to_checksum_address

from orders.models import Order, OrderStatus
from payments.models import Asset, Invoice, Rate, ScanCursor, Transfer


def rate_current(*, asset: Asset, currency: str) -> Rate | None:
    return Rate.objects.filter(asset=asset, currency=currency).order_by("-fetched_at").first()


def rate_is_stale(*, rate: Rate, now=None) -> bool:
    return (now or timezone.now()) - rate.fetched_at > settings.PAYMENTS_RATE_MAX_AGE


def assets_offered() -> QuerySet[Asset]:
    return (
        Asset.objects.filter(is_active=True, chain__is_active=True)
        .select_related("chain")
        .order_by("chain__name", "kind", "symbol")
    )


FINAL_STATUSES = {
    OrderStatus.PAID,
    OrderStatus.PROVISIONING,
    OrderStatus.ACTIVE,
    OrderStatus.COMPLETED,
    OrderStatus.CANCELLED,
    OrderStatus.REFUNDED,
}


def in_asset_units(amount: Decimal | int, *, asset: Asset) -> str:
    """Base units as a plain decimal string in whole units, exact, without trailing zeros."""
    value = Decimal(int(amount)).scaleb(-asset.decimals)
    text = f"{value:f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def eip681_uri(*, invoice: Invoice) -> str:
    """The payment request a wallet understands (EIP-681), amount in base units."""
    asset, chain_id = invoice.asset, invoice.asset.chain.chain_id
    address = to_checksum_address(invoice.deposit_address)
    amount = int(invoice.amount_left or invoice.amount_due)
    if asset.is_native:
        return f"ethereum:{address}@{chain_id}?value={amount}"
    token = to_checksum_address(asset.contract_address)
    return f"ethereum:{token}@{chain_id}/transfer?address={address}&uint256={amount}"


def qr_svg(data: str) -> str:
    return segno.make(data, error="m").svg_inline(scale=4, border=2, dark="#111", light="#fff")


def _transfer_rows(*, invoice: Invoice, head: int | None) -> list[dict]:
    needed = max(invoice.asset.chain.confirmations, 1)
    rows = []
    for transfer in invoice.transfers.select_related("asset").order_by("block_number", "log_index"):
        if transfer.status == Transfer.Status.CONFIRMED:
            confirmations = needed
        elif transfer.status == Transfer.Status.SEEN and head is not None:
            confirmations = min(max(head - transfer.block_number + 1, 0), needed)
        else:
            confirmations = 0
        rows.append(
            {
                "transfer": transfer,
                "amount": in_asset_units(transfer.amount, asset=transfer.asset),
                "confirmations": confirmations,
                "needed": needed,
                "percent": int(confirmations * 100 / needed),
                "explorer": invoice.asset.chain.explorer_link(transfer.tx_hash),
            }
        )
    return rows


def order_has_received_funds(*, order: Order) -> bool:
    """Whether any transfer still on chain reached one of the order's deposit addresses."""
    return (
        Transfer.objects.filter(invoice__order=order)
        .exclude(status=Transfer.Status.ORPHANED)
        .exists()
    )


def invoice_current(*, order: Order) -> Invoice | None:
    """The open invoice, else the last one that was not replaced."""
    invoices = order.invoices.select_related("asset__chain").order_by("-created_at")
    return invoices.filter(status=Invoice.Status.OPEN).first() or (
        invoices.exclude(status=Invoice.Status.CLOSED).first()
    )


def payment_progress(*, order: Order, now=None) -> dict:
    """What the polled part of the payment section shows: transfers and their confirmations.

    No RPC (confirmations come from the head the watcher last saw) and nothing the
    instructions alone need: this runs every few seconds per open order page.
    """
    now = now or timezone.now()
    invoice = invoice_current(order=order)
    payable = order.status == OrderStatus.AWAITING_PAYMENT and order.payment_deadline > now
    context: dict = {
        "order": order,
        "invoice": invoice,
        "payable": payable,
        "transfers": [],
        "polling": order.status not in FINAL_STATUSES
        and not (invoice is None and not payable)
        and (invoice is None or now < invoice.monitor_until),
    }
    if invoice is None:
        return context
    asset = invoice.asset
    cursor = ScanCursor.objects.filter(chain=asset.chain).first()
    context.update(
        {
            "asset": asset,
            "chain": asset.chain,
            "transfers": _transfer_rows(invoice=invoice, head=cursor and cursor.head_block),
            "amount_left": in_asset_units(invoice.amount_left, asset=asset),
            "waiting_for_money": invoice.status == Invoice.Status.OPEN and payable,
        }
    )
    return context


def payment_context(*, order: Order, now=None) -> dict:
    """Everything the payment section of the order page shows: the progress above, plus the
    instructions (address, amount, QR code) and the forms."""
    from payments.forms import AssetChoiceForm, PaymentClaimForm

    now = now or timezone.now()
    context = payment_progress(order=order, now=now)
    invoice, payable = context["invoice"], context["payable"]
    context.update(
        {
            "can_issue": payable and not context["transfers"],
            "issue_form": AssetChoiceForm() if payable else None,
            "claim_form": PaymentClaimForm(),
            "deadline": order.payment_deadline,
            "seconds_left": max(int((order.payment_deadline - now).total_seconds()), 0),
        }
    )
    if invoice is None:
        return context
    asset = invoice.asset
    uri = eip681_uri(invoice=invoice)
    context.update(
        {
            "deposit_address": to_checksum_address(invoice.deposit_address),
            "token_contract": ""
            if asset.is_native
            else to_checksum_address(asset.contract_address),
            "amount_due": in_asset_units(invoice.amount_due, asset=asset),
            "amount_received": in_asset_units(invoice.amount_received, asset=asset),
            "partly_paid": 0 < invoice.amount_left < invoice.amount_due,
            "payment_uri": uri,
            "qr_svg": mark_safe(qr_svg(uri)),  # segno's own SVG markup, no user input
            "confirmations_needed": asset.chain.confirmations,
            # Past the deadline, before or after the order expired: a payment may still come.
            "late_claims_possible": order.status
            in (OrderStatus.AWAITING_PAYMENT, OrderStatus.EXPIRED)
            and now < invoice.monitor_until,
        }
    )
    return context


def order_payment_watch_passed(order: Order, now) -> bool:
    """Whether the watcher read past the deadline (and the margin) on the chain of every invoice
    the order can still be paid to: until then a payment made in time may be unseen.

    A cursor whose block time is unknown has not proved anything yet. An order without an
    open invoice, on a chain switched off, or past its watch period expires at its deadline.
    """
    cutoff = order.payment_deadline + settings.PAYMENTS_EXPIRY_SCAN_MARGIN
    unread = (
        Invoice.objects.filter(
            order_id=order.pk,
            status=Invoice.Status.OPEN,
            asset__chain__is_active=True,
            monitor_until__gt=now,
        )
        .exclude(asset__chain__cursor__block_time__gte=cutoff)
        .exists()
    )
    return not unread


def order_funds_lost_hold(order: Order) -> str | None:
    """Why provisioning waits: the order's payment left the chain after it was paid."""
    if not Invoice.objects.filter(order_id=order.pk, funds_lost=True).exists():
        return None
    return gettext(
        "The payment of this order was removed from the chain after it was paid (flag "
        "“funds lost” on its invoice). Provisioning waits until the money is back or staff "
        "clear the flag with a reason."
    )

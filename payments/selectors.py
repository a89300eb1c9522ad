"""Reads on payments: rates, offered assets, payment progress. Data only: pages build their
HTML, forms and QR codes in payments.views and its template tags."""

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from functools import lru_cache

from django.conf import settings
from django.core.exceptions import ObjectDoesNotExist
from django.db.models import OuterRef, Prefetch, QuerySet, Subquery
from django.utils import timezone
from django.utils.translation import gettext
from eth_utils import to_checksum_address

from orders.models import Order, OrderStatus
from payments.models import Asset, Chain, Invoice, PaymentClaim, Rate, Transfer

# After "I've paid", how long the page says the address is watched; a claim still unmatched
# then goes to the staff's queue (payments.queue). The chain answers well within it.
CLAIM_WATCH = timedelta(minutes=30)


def rate_current(*, asset: Asset, currency: str, now=None) -> Rate | None:
    """The rate a new invoice in `asset` may use now; None refuses the asset.

    A manual rate, while it lasts, wins: staff set it because the feeds cannot be used. The
    latest feed rate counts while it lasts, the last refresh did not refuse the asset
    (Asset.rate_refusal) and no move beyond the band holds it (Asset.rate_held). An older
    rate never stands in for a newer one that expired.
    """
    now = now or timezone.now()
    rates = Rate.objects.filter(asset=asset, currency=currency).order_by("-fetched_at")
    manual = rates.filter(kind=Rate.Kind.MANUAL).first()
    if manual is not None and manual.expires_at > now:
        return manual
    feed = rates.filter(kind=Rate.Kind.FEED).first()
    if feed is None or feed.expires_at <= now or asset.rate_refusal or asset.rate_held_id:
        return None
    return feed


def _rate_usable(*, manual_until, feed_until, refused: bool, now) -> bool:
    """rate_current()'s rule, on the expiries of the latest manual and feed rates."""
    if manual_until is not None and manual_until > now:
        return True
    return not refused and feed_until is not None and feed_until > now


@lru_cache(maxsize=8)
def _offered_assets_rate_expiries(currency: str) -> QuerySet:
    """The offered assets with the expiry of their latest manual and feed rate in `currency`,
    built once per process for each currency (never evaluated itself: callers get a copy);
    building its subqueries cost as much as running the query."""
    latest = Rate.objects.filter(asset=OuterRef("pk"), currency=currency).order_by("-fetched_at")
    return (
        assets_offered()
        .annotate(
            manual_until=Subquery(latest.filter(kind=Rate.Kind.MANUAL).values("expires_at")[:1]),
            feed_until=Subquery(latest.filter(kind=Rate.Kind.FEED).values("expires_at")[:1]),
        )
        .values_list("pk", "manual_until", "feed_until", "rate_refusal", "rate_held")
    )


def assets_unpriced(*, currency: str, now=None) -> set[int]:
    """Ids of the offered assets rate_current() refuses now, in one query for a whole page."""
    now = now or timezone.now()
    return {
        pk
        for pk, manual_until, feed_until, refusal, held in _offered_assets_rate_expiries(
            currency
        ).all()
        if not _rate_usable(
            manual_until=manual_until,
            feed_until=feed_until,
            refused=bool(refusal) or held is not None,
            now=now,
        )
    }


def assets_offered() -> QuerySet[Asset]:
    return (
        Asset.objects.filter(is_active=True, chain__is_active=True)
        .select_related("chain")
        .order_by("chain__name", "kind", "symbol")
    )


def in_asset_units(amount: Decimal | int, *, asset: Asset) -> str:
    """Base units as a plain decimal string in whole units, exact, without trailing zeros."""
    value = Decimal(int(amount)).scaleb(-asset.decimals)
    text = f"{value:f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def amount_to_send(*, invoice: Invoice) -> int:
    """Base units a wallet should send now: what is left, or all of it before anything came."""
    return int(invoice.amount_left or invoice.amount_due)


def eip681_uri(*, invoice: Invoice) -> str:
    """The payment request a wallet understands (EIP-681), amount in base units."""
    asset, chain_id = invoice.asset, invoice.asset.chain.chain_id
    address = to_checksum_address(invoice.deposit_address)
    amount = amount_to_send(invoice=invoice)
    if asset.is_native:
        return f"ethereum:{address}@{chain_id}?value={amount}"
    token = to_checksum_address(asset.contract_address)
    return f"ethereum:{token}@{chain_id}/transfer?address={address}&uint256={amount}"


def order_has_received_funds(*, order: Order) -> bool:
    """Whether any transfer still on chain reached one of the order's deposit addresses."""
    return (
        Transfer.objects.filter(invoice__order=order)
        .exclude(status=Transfer.Status.ORPHANED)
        .exists()
    )


# --- Payment progress: one reader for the order page, its poll, the API and webhooks --------


@dataclass(frozen=True)
class TransferProgress:
    transfer: Transfer
    confirmations: int  # capped at the number the chain requires
    explorer_url: str  # empty when the chain has no explorer

    @property
    def counted(self) -> bool:
        """Whether it counts toward the invoice (flagged and orphaned transfers do not)."""
        return (
            self.transfer.disposition == Transfer.Disposition.CREDIT
            and self.transfer.status != Transfer.Status.ORPHANED
        )


@dataclass(frozen=True)
class PaymentProgress:
    """Where the payment of an order stands, from what the watcher recorded (no RPC)."""

    invoice: Invoice
    head_block: int | None  # the chain head the watcher last saw
    required: int  # confirmations the chain requires
    transfers: list[TransferProgress]

    @property
    def asset(self) -> Asset:
        return self.invoice.asset

    @property
    def chain(self) -> Chain:
        return self.invoice.asset.chain

    @property
    def due(self) -> Decimal:
        return self.invoice.amount_due

    @property
    def received(self) -> Decimal:
        """Confirmed."""
        return self.invoice.amount_received

    @property
    def pending(self) -> Decimal:
        """Seen, not confirmed yet."""
        return self.invoice.amount_pending

    @property
    def left(self) -> Decimal:
        return self.invoice.amount_left

    @property
    def confirmations(self) -> int:
        """Of the least-confirmed counted transfer: it decides when the payment is confirmed."""
        return min((t.confirmations for t in self.transfers if t.counted), default=0)

    @property
    def uri(self) -> str:
        return eip681_uri(invoice=self.invoice)

    # The price the invoice locked when it was issued: it holds until the payment deadline,
    # a later invoice takes the rate of its own time.
    @property
    def rate(self) -> Decimal:
        """Store currency per whole unit of the asset."""
        return self.invoice.locked_rate

    @property
    def rate_source(self) -> str:
        return self.invoice.rate.source

    @property
    def rate_expires_at(self):
        return self.invoice.expires_at

    @property
    def fiat_amount(self) -> Decimal:
        """The order total the amount due converts, in `currency`."""
        return self.invoice.fiat_amount

    @property
    def currency(self) -> str:
        return self.invoice.currency


def invoices_with_progress() -> QuerySet[Invoice]:
    """Invoices with what payment_progress reads; prefetch them as an order's `invoices` to
    read the progress of many orders in a fixed number of queries."""
    transfers = Transfer.objects.select_related("asset").order_by("block_number", "log_index")
    return Invoice.objects.select_related("asset__chain__cursor", "rate").prefetch_related(
        Prefetch("transfers", queryset=transfers)
    )


def _head_block(chain: Chain) -> int | None:
    try:
        cursor = chain.cursor
    except ObjectDoesNotExist:
        return None
    # Before the first head is recorded, the scanned block is the deepest the chain is known.
    return cursor.head_block or cursor.block_number


def _confirmations(transfer: Transfer, *, head: int | None, required: int) -> int:
    if transfer.status == Transfer.Status.CONFIRMED:
        return required
    if transfer.status == Transfer.Status.ORPHANED or head is None:
        return 0
    return min(max(head - transfer.block_number + 1, 0), required)


def payment_progress(
    *, order: Order, invoices: Iterable[Invoice] | None = None
) -> PaymentProgress | None:
    """The progress of the order's current invoice: the open one, else the latest that was not
    replaced; None without one. `invoices`: the order's, from invoices_with_progress()
    (prefetched), else they are read here."""
    if invoices is None:
        invoices = invoices_with_progress().filter(order=order)
    latest_first = sorted(invoices, key=lambda invoice: invoice.created_at, reverse=True)
    invoice = next(
        (i for i in latest_first if i.status == Invoice.Status.OPEN),
        next((i for i in latest_first if i.status != Invoice.Status.CLOSED), None),
    )
    if invoice is None:
        return None
    chain = invoice.asset.chain
    return PaymentProgress(
        invoice=invoice,
        head_block=_head_block(chain),
        required=max(chain.confirmations, 1),
        transfers=transfers_with_confirmations(invoice=invoice),
    )


def transfers_with_confirmations(*, invoice: Invoice) -> list[TransferProgress]:
    """Every transfer to the invoice's address (flagged and orphaned ones too), with its
    confirmations; the invoice from invoices_with_progress()."""
    chain = invoice.asset.chain
    head, required = _head_block(chain), max(chain.confirmations, 1)
    return [
        TransferProgress(
            transfer=transfer,
            confirmations=_confirmations(transfer, head=head, required=required),
            explorer_url=chain.explorer_link(transfer.tx_hash),
        )
        for transfer in invoice.transfers.all()
    ]


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


@dataclass(frozen=True)
class ClaimWatch:
    """The latest "I've paid" of an order nothing has reached yet: watched until `until`,
    then `lapsed` (staff look at it, the customer is told so)."""

    until: datetime
    lapsed: bool


def order_claim_watch(*, order: Order, now: datetime) -> ClaimWatch | None:
    """What the page says after "I've paid" while nothing reached the order's addresses."""
    if order.status not in (OrderStatus.AWAITING_PAYMENT, OrderStatus.EXPIRED):
        return None
    claim = PaymentClaim.objects.filter(order=order).order_by("-created_at").first()
    if claim is None or Transfer.objects.filter(invoice__order=order).exists():
        return None
    until = claim.created_at + CLAIM_WATCH
    return ClaimWatch(until=until, lapsed=until <= now)

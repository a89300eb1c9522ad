"""Reads for the API: each selector brings what its serializer needs in a fixed number of
queries."""

from dataclasses import dataclass
from decimal import Decimal

from django.core.exceptions import ObjectDoesNotExist
from django.db.models import Prefetch, QuerySet

from accounts.models import ApiKey, User
from accounts.services import api_key_hash
from catalog.models import Environment, GpuModel
from catalog.selectors import active_environments, gpus_with_availability
from orders.models import Order
from payments.models import Asset, Chain, Invoice, Transfer
from payments.selectors import assets_offered, eip681_uri, in_asset_units


def api_key_for_raw_key(*, raw_key: str) -> ApiKey | None:
    return ApiKey.objects.select_related("user").filter(key_hash=api_key_hash(raw_key)).first()


def api_gpus() -> QuerySet[GpuModel]:
    return gpus_with_availability().filter(is_active=True).prefetch_related("prices")


def api_environments() -> QuerySet[Environment]:
    return active_environments()


def api_payment_assets() -> QuerySet[Asset]:
    return assets_offered()


def api_orders_for_user(*, user: User, status: str | None = None) -> QuerySet[Order]:
    orders = (
        Order.objects.filter(user=user)
        .select_related("gpu", "environment")
        .prefetch_related(
            "events",
            Prefetch(
                "invoices",
                queryset=Invoice.objects.select_related("asset__chain__cursor").prefetch_related(
                    "transfers"
                ),
            ),
        )
    )
    if status:
        orders = orders.filter(status=status)
    return orders


def api_order_for_user(*, user: User, number: str) -> Order | None:
    """The user's order with that number, in any case as on the order page; None for anyone
    else's, so it reads as a 404."""
    return api_orders_for_user(user=user).filter(number=number.upper()).first()


# --- Payment instructions -------------------------------------------------------------------


@dataclass(frozen=True)
class TransferView:
    tx_hash: str
    log_index: int | None
    amount: Decimal
    status: str
    block_number: int
    confirmations: int
    explorer_url: str


@dataclass(frozen=True)
class PaymentView:
    """What a partner needs to pay an order and follow the payment."""

    invoice: Invoice
    asset: Asset
    chain: Chain
    confirmations: int
    transfers: list[TransferView]

    @property
    def amount_display(self) -> str:
        return in_asset_units(self.invoice.amount_due, asset=self.asset)

    @property
    def uri(self) -> str:
        # The same EIP-681 request as the order page's QR code (what is left to pay).
        return eip681_uri(invoice=self.invoice)


def _head_block(chain: Chain) -> int | None:
    try:
        return chain.cursor.head_block or chain.cursor.block_number
    except ObjectDoesNotExist:
        return None


def _confirmations(transfer: Transfer, head: int | None, required: int) -> int:
    if transfer.status == Transfer.Status.ORPHANED:
        return 0
    seen = 0 if head is None else max(head - transfer.block_number + 1, 0)
    return max(seen, required) if transfer.status == Transfer.Status.CONFIRMED else seen


def order_payment(*, order: Order) -> PaymentView | None:
    """The order's open invoice (else its latest), with on-chain progress; None without one.

    Expects `order` from api_orders_for_user (invoices, chain cursor and transfers prefetched).
    """
    # As payments.selectors.invoice_current, from the prefetched rows: the open invoice,
    # else the latest one that was not replaced.
    invoices = sorted(order.invoices.all(), key=lambda i: i.created_at, reverse=True)
    invoice = next((i for i in invoices if i.status == Invoice.Status.OPEN), None) or next(
        (i for i in invoices if i.status != Invoice.Status.CLOSED), None
    )
    if invoice is None:
        return None
    chain = invoice.asset.chain
    head = _head_block(chain)
    transfers, counted = [], []
    for transfer in invoice.transfers.all():
        confirmations = _confirmations(transfer, head, chain.confirmations)
        transfers.append(
            TransferView(
                tx_hash=transfer.tx_hash,
                log_index=None if transfer.is_native else transfer.log_index,
                amount=transfer.amount,
                status=transfer.status,
                block_number=transfer.block_number,
                confirmations=confirmations,
                explorer_url=chain.explorer_link(transfer.tx_hash),
            )
        )
        if (
            transfer.disposition == Transfer.Disposition.CREDIT
            and transfer.status != Transfer.Status.ORPHANED
        ):
            counted.append(confirmations)
    return PaymentView(
        invoice=invoice,
        asset=invoice.asset,
        chain=chain,
        # The least-confirmed transfer decides when the whole payment is confirmed.
        confirmations=min(counted, default=0),
        transfers=transfers,
    )

"""Small builders shared by the payment tests."""

from datetime import datetime
from decimal import Decimal

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from orders.models import Order, OrderEvent
from payments.models import Invoice, Rate, Transfer
from payments.services import invoice_issue
from payments.watcher.settlement import ObservedTransfer, invoice_settle, transfers_record
from tests.factories import OrderFactory


def order_with_invoice(asset, *, user=None, total=Decimal("504.00"), **order_fields) -> Invoice:
    fields = {"total": total, **order_fields}
    if user is not None:
        fields["user"] = user
    order = OrderFactory(**fields)
    return invoice_issue(order=order, asset=asset)


def rate_fresh(asset, rate, *, source: str = "test") -> Rate:
    """A rate for `asset` in the store currency, as a feed reading just taken would record it."""
    return Rate.objects.create(
        asset=asset,
        rate=Decimal(rate),
        currency=settings.STORE_CURRENCY,
        source=source,
        expires_at=timezone.now() + settings.PAYMENTS_RATE_MAX_AGE,
    )


def transfer_recorded(
    invoice: Invoice,
    *,
    amount: Decimal | int | None = None,
    status: str = Transfer.Status.SEEN,
    index: int | None = None,
) -> Transfer:
    """The watcher's record of `amount` (the whole amount due by default) reaching the
    invoice's address, without a chain; `index` makes it the index-th of many (its own
    transaction and block)."""
    return Transfer.objects.create(
        chain=invoice.asset.chain,
        tx_hash="0x" + "ab" * 32 if index is None else f"0x{index:064x}",
        log_index=0,
        block_number=1 if index is None else index + 1,
        block_hash="0x" + "cd" * 32 if index is None else f"0x{index:064x}",
        block_time=timezone.now(),
        from_address="0x" + "11" * 20,
        to_address=invoice.deposit_address,
        asset=invoice.asset,
        amount=Decimal(invoice.amount_due if amount is None else amount),
        invoice=invoice,
        status=status,
    )


def transfer_observed_and_settled(invoice: Invoice, amount: int) -> None:
    """What the watcher does on finding a transfer of `amount` to the invoice's address."""
    observed = ObservedTransfer(
        tx_hash="0x" + "ef" * 32,
        log_index=0,
        block_number=1,
        block_hash="0x" + "cd" * 32,
        block_time=timezone.now(),
        from_address="0x" + "11" * 20,
        to_address=invoice.deposit_address,
        asset=invoice.asset,
        amount=amount,
    )
    with transaction.atomic():
        for invoice_id in transfers_record(chain=invoice.asset.chain, observed=[observed]):
            invoice_settle(invoice_id=invoice_id)


def deadline_at(invoice: Invoice, deadline: datetime) -> None:
    """Move the order's payment deadline (and its invoice's) to `deadline`."""
    Order.objects.filter(pk=invoice.order_id).update(payment_deadline=deadline)
    Invoice.objects.filter(pk=invoice.pk).update(
        expires_at=deadline, monitor_until=deadline + settings.PAYMENTS_MONITOR_PERIOD
    )
    invoice.expires_at = deadline


def reload(invoice: Invoice) -> tuple[Invoice, Order]:
    invoice = Invoice.objects.select_related("order").get(pk=invoice.pk)
    return invoice, invoice.order


def timeline(order: Order) -> list[str]:
    """The order's events as short words: status changes by their new status."""
    return [
        event.new_status if event.kind == OrderEvent.Kind.STATUS else event.kind
        for event in order.events.order_by("created_at", "id")
    ]

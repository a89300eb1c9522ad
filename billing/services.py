"""Issuing invoices and credit notes. Nobody issues them by hand: the order event that marks
an order paid issues its invoice, the one that marks it refunded its credit note
(billing_on_event, subscribed to orders.events with the claim in settings.HOOKS). Both run
inside the transaction that claims the event, so a document commits with the claim or not at
all, and is made once."""

from datetime import date, datetime, timedelta
from decimal import Decimal

from django.conf import settings
from django.db import transaction
from django.utils import timezone, translation
from django.utils.translation import gettext

from billing.models import PREFIXES, BillingDocument, BillingSequence, DocumentKind
from catalog.vat import UNIT_PRICE, price_split
from orders.models import Order, OrderEvent, OrderStatus
from payments.models import Invoice, Transfer

# The legal documents are written in French, whatever the customer's language.
DOCUMENT_LANGUAGE = "fr"


def event_billed(*, event: OrderEvent) -> tuple[Order, str] | None:
    """The order `event` bills and the kind of document: a rental's invoice when it is paid,
    an extension's when the rental is extended by it (the event the extension's e-mail goes
    with: the extension's own "paid" sends none), a credit note when an order is refunded."""
    if event.kind == OrderEvent.Kind.EXTENDED:
        return Order.objects.get(number=event.data["extension"]), DocumentKind.INVOICE
    if event.kind != OrderEvent.Kind.STATUS:
        return None
    if event.new_status == OrderStatus.PAID and not event.order.is_extension:
        return event.order, DocumentKind.INVOICE
    if event.new_status == OrderStatus.REFUNDED:
        return event.order, DocumentKind.CREDIT_NOTE
    return None


def event_document(*, event: OrderEvent) -> BillingDocument | None:
    """The document `event` issued, if it issued one and it is there."""
    billed = event_billed(event=event)
    if billed is None:
        return None
    order, kind = billed
    return BillingDocument.objects.filter(order=order, kind=kind).first()


def billing_on_event(*, event: OrderEvent) -> None:
    started = event.kind == OrderEvent.Kind.STATUS and event.new_status == OrderStatus.ACTIVE
    if started and not event.order.is_extension:
        rental_periods_fix(rental=event.order)
        return
    billed = event_billed(event=event)
    if billed is None:
        return
    order, kind = billed
    if kind == DocumentKind.INVOICE:
        invoice_issue(order=order)
        return
    invoice = BillingDocument.objects.filter(order=order, kind=DocumentKind.INVOICE).first()
    if invoice is not None:
        credit_note_issue(invoice=invoice)


def _number_allocate(*, kind: str, year: int) -> tuple[str, int]:
    """The next number of the (kind, year) sequence; its row stays locked until the caller's
    transaction ends, so the next issuer waits for this document to commit or roll back."""
    BillingSequence.objects.bulk_create(
        [BillingSequence(kind=kind, year=year)], ignore_conflicts=True
    )
    sequence = BillingSequence.objects.select_for_update().get(kind=kind, year=year)
    sequence.last_number += 1
    sequence.save(update_fields=["last_number"])
    number = f"{PREFIXES[DocumentKind(kind)]}-{year}-{sequence.last_number:06d}"
    return number, sequence.last_number


def order_description(*, order: Order) -> str:
    """What the invoice line says was sold; an extension says which rental it extends."""
    values = {
        "quantity": order.quantity,
        "gpu": order.gpu.name,
        "days": order.term_days,
        "environment": order.environment.name,
        "number": order.number,
    }
    with translation.override(DOCUMENT_LANGUAGE):
        if order.extends is not None:
            return gettext(
                "Extension of rental %(rental)s: %(quantity)s GPU %(gpu)s for %(days)s more "
                "days (order %(number)s)"
            ) % {**values, "rental": order.extends.number}
        return (
            gettext(
                # The environment's name says what it is ("Custom environment").
                "Rental: %(quantity)s GPU %(gpu)s for %(days)s days, %(environment)s "
                "(order %(number)s)"
            )
            % values
        )


def _days_from(start: datetime, days: int) -> tuple[date, date]:
    return timezone.localdate(start), timezone.localdate(start + timedelta(days=days))


def _started_periods(*, rental: Order) -> dict[int, tuple[date, date]]:
    """Order id -> days paid for, once `rental` started: the rental from its activation for
    its term, then the extensions paid before it started, one after the other from its end
    (activation counted their days in: orders.extensions.rental_end). Empty before."""
    if rental.activated_at is None:
        return {}
    periods, end = {}, rental.activated_at
    for order in [
        rental,
        *rental.extensions.filter(status=OrderStatus.PAID).order_by("created_at", "pk"),
    ]:
        periods[order.pk] = _days_from(end, order.term_days)
        end += timedelta(days=order.term_days)
    return periods


def _service_period(*, order: Order) -> tuple[date, date] | tuple[None, None]:
    """The days the order pays for, once its service started. An extension paid while its
    rental ran starts at the former end its "extended" event names; one paid before, where
    the started rental puts it. Before the start, none yet: rental_periods_fix writes them."""
    if order.extends_id is None:
        return _started_periods(rental=order).get(order.pk, (None, None))
    former_end = (
        OrderEvent.objects.filter(
            order_id=order.extends_id,
            kind=OrderEvent.Kind.EXTENDED,
            data__extension=order.number,
        )
        .values_list("data__old_end", flat=True)
        .first()
    )
    if former_end:
        return _days_from(datetime.fromisoformat(former_end), order.term_days)
    rental = Order.objects.get(pk=order.extends_id)
    return _started_periods(rental=rental).get(order.pk, (None, None))


def rental_periods_fix(*, rental: Order) -> None:
    """`rental` has just started: the invoices issued while it was paid but not started (its
    own, its extensions') get their service period, once."""
    rental = Order.objects.get(pk=rental.pk)
    documents = BillingDocument.objects.filter(kind=DocumentKind.INVOICE)
    for order_id, (start, end) in _started_periods(rental=rental).items():
        documents.filter(order_id=order_id).service_period_fix(start=start, end=end)


def _buyer(order: Order) -> dict:
    user = order.user
    return {
        "name": f"{user.first_name} {user.last_name}".strip(),
        "email": user.email,
        "company_name": user.company_name,
        "billing_address": user.billing_address,
        "country": user.country or user.vat_number[:2].replace("EL", "GR"),
        "vat_number": user.vat_number,
    }


def _payment(order: Order) -> dict:
    """What paid the order: the asset, its network, the credited transactions and when the
    last one was made, and the rate locked when the payment request was issued."""
    invoice = (
        Invoice.objects.filter(order=order, amount_received__gt=0)
        .select_related("asset__chain", "rate")
        .order_by("-status", "-created_at")  # "paid" before "open" and "closed"
        .first()
    )
    if invoice is None:
        return {}
    asset = invoice.asset
    credited = list(
        invoice.transfers.filter(
            disposition=Transfer.Disposition.CREDIT, status=Transfer.Status.CONFIRMED
        )
        .order_by("block_time", "pk")
        .values_list("tx_hash", "block_time")
    )
    tx_hashes = list(dict.fromkeys(tx_hash for tx_hash, _ in credited))
    received = invoice.amount_received / Decimal(10) ** asset.decimals
    return {
        "asset": asset.slug,
        "symbol": asset.symbol,
        "network": asset.chain.name,
        "chain_id": asset.chain.chain_id,
        "amount": f"{received.normalize():f}",
        "tx_hashes": tx_hashes,
        # The last transfer that paid it; none when staff marked the order paid.
        "paid_at": credited[-1][1].isoformat() if credited else None,
        "rate": str(invoice.locked_rate),
        "rate_currency": invoice.currency,
        "rate_source": invoice.rate.source,
        "rate_kind": invoice.rate.kind,
        "rate_at": invoice.rate.fetched_at.isoformat(),
        "marked_by_staff": invoice.marked,
    }


def invoice_issue(*, order: Order) -> BillingDocument:
    """The order's invoice, issued now from what the order, its buyer and its payment say."""
    with transaction.atomic():
        existing = BillingDocument.objects.filter(order=order, kind=DocumentKind.INVOICE).first()
        if existing is not None:
            return existing
        order = Order.objects.select_related("user", "gpu", "environment").get(pk=order.pk)
        seller = dict(settings.BILLING_SELLER)
        buyer = _buyer(order)
        split = price_split(total=order.total, buyer_vat_number=buyer["vat_number"])
        quantity = order.quantity * order.term_days
        line = {
            "description": order_description(order=order),
            "quantity": str(quantity),
            "unit": "day",
            "unit_price_excl_vat": str(split.excl_vat(order.daily_rate, UNIT_PRICE)),
            "total_excl_vat": str(split.total_excl_vat),
        }
        issued_at = timezone.now()
        issued_on = timezone.localdate(issued_at)
        start, end = _service_period(order=order)
        number, sequence_number = _number_allocate(kind=DocumentKind.INVOICE, year=issued_on.year)
        return BillingDocument.objects.create(
            kind=DocumentKind.INVOICE,
            number=number,
            year=issued_on.year,
            sequence_number=sequence_number,
            order=order,
            user=order.user,
            issued_at=issued_at,
            service_start=start,
            service_end=end,
            seller=seller,
            buyer=buyer,
            lines=[line],
            vat_mode=split.mode,
            vat_rate=split.rate,
            total_excl_vat=split.total_excl_vat,
            vat_amount=split.vat_amount,
            total=split.total,
            currency=order.currency,
            payment=_payment(order),
        )


def credit_note_issue(*, invoice: BillingDocument) -> BillingDocument:
    """A credit note cancelling `invoice` in full: the invoice itself never changes."""
    with transaction.atomic():
        existing = BillingDocument.objects.filter(
            order_id=invoice.order_id, kind=DocumentKind.CREDIT_NOTE
        ).first()
        if existing is not None:
            return existing
        issued_at = timezone.now()
        year = timezone.localdate(issued_at).year
        number, sequence_number = _number_allocate(kind=DocumentKind.CREDIT_NOTE, year=year)
        return BillingDocument.objects.create(
            kind=DocumentKind.CREDIT_NOTE,
            number=number,
            year=year,
            sequence_number=sequence_number,
            order_id=invoice.order_id,
            user_id=invoice.user_id,
            credited_invoice=invoice,
            issued_at=issued_at,
            service_start=invoice.service_start,
            service_end=invoice.service_end,
            seller=invoice.seller,
            buyer=invoice.buyer,
            lines=invoice.lines,
            vat_mode=invoice.vat_mode,
            vat_rate=invoice.vat_rate,
            total_excl_vat=invoice.total_excl_vat,
            vat_amount=invoice.vat_amount,
            total=invoice.total,
            currency=invoice.currency,
            payment=invoice.payment,
        )

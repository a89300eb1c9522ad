"""The payment cases of the staff's "to handle" queue (backoffice): flagged invoices, "I've
paid" claims with nothing received, refunds owed, rates held for staff to confirm. One
condition each, shared by the queue's counts and the admin lists' filters. And how staff read
an invoice: its flags and status."""

from datetime import datetime

from django.db.models import Exists, OuterRef, Q
from django.utils.formats import date_format
from django.utils.timezone import localtime
from django.utils.translation import gettext_lazy as _

from orders.models import OrderStatus
from orders.queue import QueueCase
from payments.models import Invoice, Transfer
from payments.refunds.models import RefundStatus
from payments.selectors import CLAIM_WATCH

S = OrderStatus
# Flags matter while the order has not started its rental nor been closed.
ORDERS_IN_PROGRESS = [S.AWAITING_PAYMENT, S.CONFIRMING, S.PAID, S.PROVISIONING, S.EXPIRED]
QUEUE_FLAGS = ("underpaid", "overpaid", "paid_late", "wrong_asset", "multiple")


def flag_label(flag: str) -> str:
    """An invoice flag in words, in the active language."""
    return str(next(field.verbose_name for field in Invoice._meta.fields if field.name == flag))


def invoice_status_label(invoice: Invoice) -> str:
    """An invoice's status in words, as staff need it: an open invoice of an expired order is
    not waiting for the customer any more, but a late payment still counts (it may revive the
    order while its GPUs are free) until the watch ends. Reads `invoice.order`."""
    if invoice.status == Invoice.Status.OPEN and invoice.order.status == OrderStatus.EXPIRED:
        return str(_("Expired, watched for a late payment until %(until)s")) % {
            "until": date_format(localtime(invoice.monitor_until), "SHORT_DATETIME_FORMAT")
        }
    return invoice.get_status_display()


def invoice_queue_cases() -> list[QueueCase]:
    fields = {field.name: field for field in Invoice._meta.fields}
    return [
        QueueCase(
            flag,
            fields[flag].verbose_name,
            Q(**{flag: True, "order__status__in": ORDERS_IN_PROGRESS}),
        )
        for flag in QUEUE_FLAGS
    ]


def claim_queue_cases(*, now: datetime) -> list[QueueCase]:
    received = Transfer.objects.filter(invoice__order_id=OuterRef("order_id"))
    return [
        QueueCase(
            "claim_unanswered",
            _("“I've paid” with nothing received after 30 minutes"),
            Q(
                ~Exists(received),
                created_at__lte=now - CLAIM_WATCH,
                order__status__in=[S.AWAITING_PAYMENT, S.EXPIRED],
            ),
        )
    ]


def refund_queue_cases() -> list[QueueCase]:
    return [
        QueueCase(
            "refund_owed",
            _("Refunds owed"),
            Q(
                status__in=[RefundStatus.OWED, RefundStatus.ADDRESS_GIVEN, RefundStatus.REJECTED],
                amount__gt=0,
            ),
        )
    ]


def asset_queue_cases() -> list[QueueCase]:
    # A feed rate that moved beyond the band (payments.rates): the asset sells nothing until
    # staff confirm it, or the feed comes back.
    return [
        QueueCase(
            "rate_held",
            _("Rates that moved beyond the band, waiting for confirmation"),
            Q(rate_held__isnull=False),
        )
    ]

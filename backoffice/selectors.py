"""Reads for the staff cockpit: the "to handle" queue's counts (one query per model, however
many cases) and the dashboard's figures. No HTML here."""

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal

from django.db.models import Count, Model, Q, QuerySet, Sum
from django.db.models.functions import TruncDate
from django.urls import reverse
from django.utils import timezone
from django.utils.functional import Promise

from catalog.models import GpuModel
from hosts.models import Host, SlotHold
from orders.models import Order, OrderEvent, OrderStatus
from orders.queue import QueueCase, order_queue_cases
from payments.models import Asset, Invoice, PaymentClaim
from payments.queue import (
    asset_queue_cases,
    claim_queue_cases,
    invoice_queue_cases,
    refund_queue_cases,
)
from payments.refunds.models import Refund

QUEUE_PARAMETER = "queue"
DASHBOARD_DAYS = 30


@dataclass(frozen=True)
class QueueEntry:
    key: str
    label: str | Promise
    count: int
    url: str


def _entries(model: type[Model], cases: list[QueueCase]) -> list[QueueEntry]:
    counts = model._default_manager.aggregate(
        **{case.key: Count("pk", filter=case.condition) for case in cases}
    )
    opts = model._meta
    changelist = reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist")
    return [
        QueueEntry(
            key=case.key,
            label=case.label,
            count=counts[case.key],
            url=f"{changelist}?{QUEUE_PARAMETER}={case.key}",
        )
        for case in cases
    ]


def queue_entries(*, now: datetime | None = None) -> list[QueueEntry]:
    """Every case staff must look at, with how many and a link to their filtered list."""
    now = now or timezone.now()
    return [
        *_entries(Order, order_queue_cases(now=now)),
        *_entries(Invoice, invoice_queue_cases()),
        *_entries(PaymentClaim, claim_queue_cases(now=now)),
        *_entries(Refund, refund_queue_cases()),
        *_entries(Asset, asset_queue_cases()),
    ]


def revenue_per_day(*, today: date, days: int = DASHBOARD_DAYS) -> list[tuple[date, Decimal]]:
    """The totals of the orders paid each day (by the day they were paid), oldest first."""
    start = today - timedelta(days=days - 1)
    paid = (
        OrderEvent.objects.filter(
            kind=OrderEvent.Kind.STATUS,
            new_status=OrderStatus.PAID,
            created_at__date__gte=start,
            created_at__date__lte=today,
        )
        .annotate(day=TruncDate("created_at"))
        .values("day")
        .annotate(revenue=Sum("order__total"))
    )
    by_day = {row["day"]: row["revenue"] for row in paid}
    return [
        (day, by_day.get(day, Decimal(0)))
        for day in (start + timedelta(days=n) for n in range(days))
    ]


def _overlap(start: datetime, end: datetime, since: datetime, until: datetime) -> timedelta:
    return max(min(end, until) - max(start, since), timedelta(0))


def _slots_per_gpu() -> dict[int, int]:
    """GPU model id -> slots of its active hosts (models without one are left out)."""
    return dict(
        Host.objects.filter(is_active=True)
        .values("gpu")
        .annotate(slots=Sum("gpu_count"))
        .values_list("gpu", "slots")
    )


def _per_gpu(slots: dict[int, int], share: Callable[[int, int], Decimal]):
    return [
        (gpu.name, share(gpu.pk, slots[gpu.pk]).quantize(Decimal(1)))
        for gpu in GpuModel.objects.filter(pk__in=slots).order_by("name")
    ]


def gpu_utilisation(*, now: datetime, days: int = DASHBOARD_DAYS) -> list[tuple[str, Decimal]]:
    """Per GPU model, the share (percent) of its slots' time held by orders over the period,
    from the slot holds; models without an active host are left out."""
    since = now - timedelta(days=days)
    held: dict[int, timedelta] = defaultdict(timedelta)
    holds = SlotHold.objects.filter(
        Q(released_at__isnull=True) | Q(released_at__gt=since), held_at__lt=now
    ).values_list("host__gpu", "held_at", "released_at")
    for gpu_id, held_at, released_at in holds:
        held[gpu_id] += _overlap(held_at, released_at or now, since, now)
    period = timedelta(days=days)
    return _per_gpu(
        _slots_per_gpu(), lambda gpu_id, slots: Decimal(held[gpu_id] / (period * slots)) * 100
    )


def gpu_in_use(*, now: datetime) -> list[tuple[str, Decimal]]:
    """Per GPU model, the share (percent) of its slots rented right now: held by a rental
    paid, being prepared or active. A rental started today weighs little over 30 days
    (gpu_utilisation); here it counts in full."""
    rented = dict(
        SlotHold.objects.filter(
            released_at__isnull=True,
            held_at__lte=now,
            order__status__in=[OrderStatus.PAID, OrderStatus.PROVISIONING, OrderStatus.ACTIVE],
        )
        .values("host__gpu")
        .annotate(n=Count("pk"))
        .values_list("host__gpu", "n")
    )
    return _per_gpu(
        _slots_per_gpu(), lambda gpu_id, slots: Decimal(rented.get(gpu_id, 0) * 100) / slots
    )


def orders_by_status() -> list[tuple[str, int]]:
    counts = dict(Order.objects.values("status").annotate(n=Count("pk")).values_list("status", "n"))
    return [(str(status.label), counts.get(status.value, 0)) for status in OrderStatus]


def payments_by_asset() -> list[tuple[str, Decimal]]:
    """What the paid invoices were worth (in the store currency), per asset and network."""
    paid: QuerySet = (
        Invoice.objects.filter(status=Invoice.Status.PAID)
        .values("asset__symbol", "asset__chain__name")
        .annotate(total=Sum("fiat_amount"))
        .order_by("asset__chain__name", "asset__symbol")
    )
    return [(f"{row['asset__symbol']} · {row['asset__chain__name']}", row["total"]) for row in paid]

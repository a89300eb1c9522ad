"""Which slots an order holds: taken under the GPU row lock, released with the status change.

Capacity is the slots of active hosts; availability is what active holds leave free of it.
Allocation prefers one host with enough free slots (multi-GPU work wants one machine), the
fullest such host first so that whole machines stay whole for larger orders; only when no
host has enough does an order span machines (the quote says so before the customer orders).
"""

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.contrib.postgres.aggregates import StringAgg
from django.db import connection
from django.db.models import (
    CharField,
    Count,
    DecimalField,
    F,
    IntegerField,
    Max,
    Min,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Sum,
    Value,
)
from django.db.models.functions import Coalesce
from django.utils import timezone

from catalog.models import Environment, GpuModel
from hosts.models import Host, SlotHold

if TYPE_CHECKING:
    # Only to name the type: slots sit under orders (an order holds them from its creation,
    # in its own transaction), the holds point at orders by the foreign key alone.
    from orders.models import Order


def _active_holds_q(prefix: str = "") -> Q:
    return Q(**{f"{prefix}released_at__isnull": True})


def hosts_running(environment: Environment | None, prefix: str = "") -> Q:
    """The hosts whose driver supports the CUDA `environment` needs: every host for an
    environment without a requirement (or none chosen yet), never one whose CUDA is not
    recorded for one with."""
    required = environment.cuda_required if environment is not None else None
    return Q() if required is None else Q(**{f"{prefix}cuda_max__gte": required})


def gpus_with_capacity(
    gpus: QuerySet[GpuModel], *, environment: Environment | None = None
) -> QuerySet[GpuModel]:
    """`gpus` annotated with `slots_total`, `units_held`, `largest_free_block` (the most
    free slots on one host) and the `machine_*` specs, counting only the hosts that can run
    `environment`, and `machine_cuda_max` (the highest CUDA any active host supports), in
    the same query."""
    every_active_host = Host.objects.filter(gpu=OuterRef("pk"), is_active=True).order_by()
    active_hosts = every_active_host.filter(hosts_running(environment))
    total = active_hosts.values("gpu").annotate(n=Sum("gpu_count")).values("n")
    cuda_max = every_active_host.values("gpu").annotate(v=Max("cuda_max")).values("v")
    held = (
        SlotHold.objects.filter(
            _active_holds_q(),
            hosts_running(environment, prefix="host__"),
            host__gpu=OuterRef("pk"),
            host__is_active=True,
        )
        .order_by()
        .values("host__gpu")
        .annotate(n=Count("pk"))
        .values("n")
    )
    largest = (
        active_hosts.annotate(
            free=F("gpu_count") - Count("holds", filter=_active_holds_q("holds__"))
        )
        .order_by("-free")
        .values("free")[:1]
    )
    return gpus.annotate(
        **_machine_annotations(active_hosts),
        slots_total=Coalesce(Subquery(total, output_field=IntegerField()), Value(0)),
        units_held=Coalesce(Subquery(held, output_field=IntegerField()), Value(0)),
        largest_free_block=Coalesce(Subquery(largest, output_field=IntegerField()), Value(0)),
        machine_cuda_max=Subquery(
            cuda_max, output_field=DecimalField(max_digits=4, decimal_places=1)
        ),
    )


def _machine_annotations(active_hosts: QuerySet[Host]) -> dict[str, Subquery]:
    """The smallest machine of the model ("from 32 vCPU, 256 GB RAM...") and its regions:
    what a customer gets at least, whichever host the order lands on."""

    def smallest(field: str) -> Subquery:
        values = active_hosts.values("gpu").annotate(v=Min(field)).values("v")
        return Subquery(values, output_field=IntegerField())

    # Every region on PostgreSQL; SQLite (make run) has no DISTINCT string aggregate with a
    # separator, so it names the first region in alphabetical order.
    every_region = (
        StringAgg("region", ", ", distinct=True, order_by="region")
        if connection.vendor == "postgresql"
        else Min("region")
    )
    regions = active_hosts.values("gpu").annotate(v=every_region)
    return {
        "machine_vcpus": smallest("vcpus"),
        "machine_ram_gb": smallest("ram_gb"),
        "machine_disk_gb": smallest("disk_gb"),
        "machine_regions": Subquery(regions.values("v"), output_field=CharField()),
    }


@dataclass(frozen=True)
class Slot:
    host: Host
    index: int


def free_slots(*, gpu: GpuModel, environment: Environment | None) -> dict[Host, list[int]]:
    """Every free slot of the active hosts of `gpu` that can run `environment`, by host (two
    queries)."""
    hosts = list(
        Host.objects.filter(hosts_running(environment), gpu=gpu, is_active=True).order_by("name")
    )
    taken = set(
        SlotHold.objects.filter(_active_holds_q(), host__in=hosts).values_list("host_id", "index")
    )
    return {host: [i for i in range(host.gpu_count) if (host.pk, i) not in taken] for host in hosts}


def slots_choose(*, free: dict[Host, list[int]], quantity: int) -> list[Slot] | None:
    """The slots an order of `quantity` GPUs gets, or None when there are not enough."""
    fitting = [host for host, indices in free.items() if len(indices) >= quantity]
    if fitting:
        host = min(fitting, key=lambda h: len(free[h]))
        return [Slot(host, i) for i in free[host][:quantity]]
    # Spanning machines: the fewest hosts, so the largest free blocks first.
    chosen: list[Slot] = []
    for host in sorted(free, key=lambda h: -len(free[h])):
        chosen += [Slot(host, i) for i in free[host][: quantity - len(chosen)]]
    return chosen if len(chosen) == quantity else None


def slots_hold(*, order: "Order", slots: Iterable[Slot]) -> list[SlotHold]:
    """Record the holds; the caller holds the GPU row lock (the constraint is the backstop)."""
    now = timezone.now()
    return SlotHold.objects.bulk_create(
        [SlotHold(order=order, host=slot.host, index=slot.index, held_at=now) for slot in slots]
    )


def slots_release(*, order: "Order") -> int:
    """Free what `order` holds (inside the transaction that moves it out of holding)."""
    return SlotHold.objects.filter(_active_holds_q(), order=order).update(
        released_at=timezone.now()
    )


def slots_by_host(holds: Iterable[SlotHold]) -> dict[str, list[int]]:
    """What an order holds now, or held last once released (history): GPU indices by host
    name. `holds` are the order's, with their hosts (prefetched by the caller's selector)."""
    holds = list(holds)
    current = [hold for hold in holds if hold.released_at is None]
    if not current and holds:
        last = max(hold.held_at for hold in holds)
        current = [hold for hold in holds if hold.held_at == last]
    grouped: dict[str, list[int]] = {}
    for hold in sorted(current, key=lambda hold: (hold.host.name, hold.index)):
        grouped.setdefault(hold.host.name, []).append(hold.index)
    return grouped

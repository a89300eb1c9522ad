"""Stock: the slots orders hold, and the one rule on the way to paid.

Availability is the free slots of active hosts (hosts.slots); the catalog shows it through
catalog.hooks, answered in settings.HOOKS.

An order is confirmed or paid only while it holds its slots. Every path that moves an order to
confirming or paid goes through here: the scan's settlement, the "I've paid" check, a
reorganisation's re-credit, a late payment, staff marking it paid."""

from decimal import Decimal
from functools import lru_cache
from typing import Any

from django.db import transaction
from django.db.models import F, QuerySet, Value
from django.db.models.functions import Greatest

from accounts.models import User
from catalog.models import Environment, GpuModel
from hosts.slots import free_slots, gpus_with_capacity, slots_choose, slots_hold
from orders.errors import UnitsGone
from orders.extensions import extension_paying_transition
from orders.models import HOLDING_STATUSES, Order
from orders.transitions import order_transition


def gpus_with_availability(
    gpus: QuerySet[GpuModel] | None = None, *, environment: Environment | None = None
) -> QuerySet[GpuModel]:
    """`gpus` (every GPU model by default) annotated with `units_held`, `available_units` and
    `largest_free_block` (the most GPUs one machine can give), in one query: on the hosts that
    can run `environment` (every active host while none is chosen, as in the catalog's
    lists)."""
    if gpus is None:
        required = environment.cuda_required if environment is not None else None
        return _every_gpu_with_availability(required, environment).all()
    return _with_availability(gpus, environment=environment)


def _with_availability(
    gpus: QuerySet[GpuModel], *, environment: Environment | None
) -> QuerySet[GpuModel]:
    return gpus_with_capacity(gpus, environment=environment).annotate(
        available_units=Greatest(F("slots_total") - F("units_held"), Value(0)),
    )


@lru_cache(maxsize=64)
def _every_gpu_with_availability(
    cuda_required: Decimal | None, environment: Environment | None
) -> QuerySet[GpuModel]:
    """Every GPU model annotated, built once per process for each environment and CUDA
    requirement (what the annotations depend on; an environment edited since is another
    entry) and never evaluated itself: the caller gets a copy. Building its subqueries again
    at every request was a third of the GPU list's CPU."""
    return _with_availability(GpuModel.objects.all(), environment=environment)


def gpu_available_units(*, gpu: GpuModel, environment: Environment | None = None) -> int:
    shown: Any = gpus_with_availability(environment=environment).get(pk=gpu.pk)  # annotated
    return shown.available_units


def order_slots_take(*, order: Order, gpu: GpuModel) -> bool:
    """Hold slots for `order` if enough are free on the hosts that can run its environment;
    the caller holds `gpu`'s row lock, the one serialiser of allocation. False when there are
    not enough."""
    free = free_slots(gpu=gpu, environment=order.environment)
    chosen = slots_choose(free=free, quantity=order.quantity)
    if chosen is None:
        return False
    slots_hold(order=order, slots=chosen)
    return True


def order_paying_transition(
    *,
    order: Order,
    to: str,
    actor: str,
    actor_user: User | None = None,
    reason: str = "",
    data: dict[str, Any] | None = None,
) -> bool:
    """Move `order` to `to` (confirming or paid) through the state machine, holding its slots.

    An order that still holds its slots moves as it is. One that released them takes free
    slots again (not necessarily the same ones), under the GPU row lock that order_create takes
    too, so nobody buys them between the check and the move; otherwise nothing moves and
    UnitsGone is raised (the money received is owed back).
    An extension holds no slots: it moves while its rental runs (orders.extensions), else
    ExtensionLapsed (a UnitsGone) is raised.
    Returns order_transition's answer (False: another worker moved the order first).
    """
    with transaction.atomic():
        if order.extends_id is not None:
            return extension_paying_transition(
                extension=order,
                to=to,
                actor=actor,
                actor_user=actor_user,
                reason=reason,
                data=data,
            )
        if order.status in HOLDING_STATUSES:
            return order_transition(
                order=order, to=to, actor=actor, actor_user=actor_user, reason=reason, data=data
            )
        gpu = GpuModel.objects.select_for_update().get(pk=order.gpu_id)
        free = free_slots(gpu=gpu, environment=order.environment)
        chosen = slots_choose(free=free, quantity=order.quantity)
        if chosen is None:
            raise UnitsGone(order)
        moved = order_transition(
            order=order, to=to, actor=actor, actor_user=actor_user, reason=reason, data=data
        )
        if moved:
            slots_hold(order=order, slots=chosen)
        return moved

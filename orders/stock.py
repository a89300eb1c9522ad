"""Stock: the units orders hold, and the one rule on the way to paid.

Availability is what orders leave free of a GPU model's units; the catalog shows it through
catalog.hooks, filled in OrdersConfig.ready().

An order is confirmed or paid only while it holds its units. Every path that moves an order to
confirming or paid goes through here: the scan's settlement, the "I've paid" check, a
reorganisation's re-credit, a late payment, staff marking it paid."""

from typing import Any

from django.db import transaction
from django.db.models import F, IntegerField, OuterRef, QuerySet, Subquery, Sum, Value
from django.db.models.functions import Coalesce, Greatest

from accounts.models import User
from catalog.models import GpuModel
from orders.models import HOLDING_STATUSES, Order, holding_orders_q
from orders.transitions import order_transition


def gpus_with_availability(gpus: QuerySet[GpuModel] | None = None) -> QuerySet[GpuModel]:
    """`gpus` (every GPU model by default) annotated with `units_held` and `available_units`,
    in one query."""
    held = (
        Order.objects.filter(holding_orders_q(), gpu=OuterRef("pk"))
        .order_by()
        .values("gpu")
        .annotate(units=Sum("quantity"))
        .values("units")
    )
    return (GpuModel.objects.all() if gpus is None else gpus).annotate(
        units_held=Coalesce(Subquery(held, output_field=IntegerField()), Value(0)),
        available_units=Greatest(F("units_total") - F("units_held"), Value(0)),
    )


def gpu_available_units(*, gpu: GpuModel) -> int:
    return gpus_with_availability().values_list("available_units", flat=True).get(pk=gpu.pk)


class UnitsGone(Exception):
    """The order released its units (it expired) and other orders took them since."""

    def __init__(self, order: Order):
        super().__init__(f"The units of order {order.number} are no longer free.")
        self.order = order


def order_paying_transition(
    *,
    order: Order,
    to: str,
    actor: str,
    actor_user: User | None = None,
    reason: str = "",
    data: dict[str, Any] | None = None,
) -> bool:
    """Move `order` to `to` (confirming or paid) through the state machine, holding its units.

    An order that still holds its units moves as it is: they are not counted against it a
    second time. One that released them takes them back if they are still free, under the GPU
    row lock that order_create takes too, so nobody buys them between the check and the move;
    otherwise nothing moves and UnitsGone is raised (the money received is owed back).
    Returns order_transition's answer (False: another worker moved the order first).
    """
    with transaction.atomic():
        if order.status not in HOLDING_STATUSES:
            gpu = GpuModel.objects.select_for_update().get(pk=order.gpu_id)
            if gpu_available_units(gpu=gpu) < order.quantity:
                raise UnitsGone(order)
        return order_transition(
            order=order, to=to, actor=actor, actor_user=actor_user, reason=reason, data=data
        )

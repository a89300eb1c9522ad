from django.db.models import F, IntegerField, OuterRef, QuerySet, Subquery, Sum, Value
from django.db.models.functions import Coalesce, Greatest

from catalog.models import Environment, GpuModel
from orders.models import Order, holding_orders_q


def gpus_with_availability(*, now=None) -> QuerySet[GpuModel]:
    """GPU models annotated with `units_held` and `available_units`, in one query."""
    held = (
        Order.objects.filter(holding_orders_q(now=now), gpu=OuterRef("pk"))
        .order_by()
        .values("gpu")
        .annotate(units=Sum("quantity"))
        .values("units")
    )
    return GpuModel.objects.annotate(
        units_held=Coalesce(Subquery(held, output_field=IntegerField()), Value(0)),
        available_units=Greatest(F("units_total") - F("units_held"), Value(0)),
    )


def gpu_available_units(*, gpu: GpuModel) -> int:
    return gpus_with_availability().values_list("available_units", flat=True).get(pk=gpu.pk)


def active_environments() -> QuerySet[Environment]:
    return Environment.objects.filter(is_active=True)

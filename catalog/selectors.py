from collections.abc import Sequence

from django.db.models import F, IntegerField, OuterRef, Prefetch, QuerySet, Subquery, Sum, Value
from django.db.models.functions import Coalesce, Greatest

from catalog.models import AdviceSection, Alternative, Environment, GpuModel, TermPrice
from orders.models import Order, holding_orders_q


def gpus_with_availability() -> QuerySet[GpuModel]:
    """GPU models annotated with `units_held` and `available_units`, in one query."""
    held = (
        Order.objects.filter(holding_orders_q(), gpu=OuterRef("pk"))
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


def _prices_by_term() -> Prefetch:
    return Prefetch("prices", queryset=TermPrice.objects.order_by("term_days"))


def catalog_gpus() -> QuerySet[GpuModel]:
    """GPUs on sale with availability and their cheapest daily rate (`price_from`).

    One query whatever the size of the catalog. The lists (catalog, comparison, advisor)
    show `price_from` only; the GPU page, which shows every term, adds the prices.
    """
    cheapest = TermPrice.objects.filter(gpu=OuterRef("pk")).order_by("daily_rate")
    return (
        gpus_with_availability()
        .filter(is_active=True)
        .annotate(price_from=Subquery(cheapest.values("daily_rate")[:1]))
    )


def gpu_page(*, slug: str) -> GpuModel:
    """One GPU on sale with prices (by term), advice and alternatives (on sale too) loaded.

    Raises GpuModel.DoesNotExist for an unknown or withdrawn slug.
    """
    alternatives = (
        Alternative.objects.filter(target__is_active=True)
        .select_related("target")
        .order_by("position")
    )
    return (
        catalog_gpus()
        .prefetch_related(
            _prices_by_term(),
            Prefetch("advice", queryset=AdviceSection.objects.order_by("position")),
            Prefetch("alternatives", queryset=alternatives),
        )
        .get(slug=slug)
    )


def gpus_by_slugs(*, slugs: Sequence[str]) -> list[GpuModel]:
    """The GPUs on sale among `slugs`, in the order given; withdrawn ones are left out."""
    found = {gpu.slug: gpu for gpu in catalog_gpus().filter(slug__in=slugs)}
    return [found[slug] for slug in slugs if slug in found]

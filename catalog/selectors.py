from collections.abc import Sequence
from typing import cast

from django.db.models import OuterRef, Prefetch, QuerySet, Subquery

from catalog.hooks import availability_annotate
from catalog.model_advisor import Offer
from catalog.models import AdviceSection, Alternative, Environment, GpuModel, TermPrice


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
    return availability_annotate(GpuModel.objects.filter(is_active=True)).annotate(
        price_from=Subquery(cheapest.values("daily_rate")[:1])
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


def gpu_offers() -> list[Offer]:
    """The GPUs on sale as the model advisor weighs them: catalog_gpus' annotations (free units,
    lowest price) are what its Offer names."""
    return cast(list[Offer], list(catalog_gpus()))

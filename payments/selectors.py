"""Reads on payments: rates, offered assets, and what the order page shows."""

from django.conf import settings
from django.db.models import QuerySet
from django.utils import timezone

from payments.models import Asset, Rate


def rate_current(*, asset: Asset, currency: str) -> Rate | None:
    return Rate.objects.filter(asset=asset, currency=currency).order_by("-fetched_at").first()


def rate_is_stale(*, rate: Rate, now=None) -> bool:
    return (now or timezone.now()) - rate.fetched_at > settings.PAYMENTS_RATE_MAX_AGE


def assets_offered() -> QuerySet[Asset]:
    return (
        Asset.objects.filter(is_active=True, chain__is_active=True)
        .select_related("chain")
        .order_by("chain__name", "kind", "symbol")
    )

from datetime import datetime
from decimal import Decimal

from django import template
from django.utils.formats import number_format
from django.utils.timezone import localtime

from catalog import formatting, images

register = template.Library()


@register.filter
def money(value: Decimal | None, currency: str | None = None) -> str:
    """An amount in `currency` (the store's by default), as the active language writes it."""
    if value is None or value == "":
        return ""
    return formatting.money(value, currency)


@register.simple_tag(takes_context=True)
def shown_price(
    context, amount: Decimal, currency: str | None = None, buyer=None
) -> formatting.ShownPrice:
    """`{% shown_price order.total order.currency as price %}`: the price split for `buyer`,
    by default the one reading the page."""
    if not buyer:  # a template's missing variable reads as ""
        buyer = getattr(context.get("request"), "user", None)
    return formatting.shown_price(amount, currency, buyer=buyer)


@register.filter
def per_hour(daily_rate: Decimal, currency: str | None = None) -> str:
    """The hourly equivalent written beside a daily rate: "i.e. €3.00/h"."""
    return formatting.per_hour(daily_rate, currency)


@register.simple_tag
def configure_query(*, environment: str = "pytorch", quantity: int = 1, term: int = 7) -> str:
    """The prefill query string the configurator understands."""
    return f"?environment={environment}&quantity={int(quantity)}&term={int(term)}"


@register.filter
def html_datetime(value: datetime | None) -> str:
    """The value for a <time datetime> attribute: HTML allows at most three fraction digits,
    so whole seconds, with the offset of the active time zone."""
    if value is None:
        return ""
    return localtime(value).replace(microsecond=0).isoformat()


@register.filter
def machine_specs(gpu) -> str:
    """ "From 32 vCPU, 256 GB of RAM, 2 TB NVMe, region Paris": the smallest machine of the
    model, as the app that owns hosts annotates it (`machine_*`); empty without hosts."""
    return formatting.machine_specs(
        vcpus=getattr(gpu, "machine_vcpus", None),
        ram_gb=getattr(gpu, "machine_ram_gb", None),
        disk_gb=getattr(gpu, "machine_disk_gb", None),
        regions=getattr(gpu, "machine_regions", None),
    )


@register.filter
def gigabytes(value: float) -> str:
    """An estimate in GB, to the tenth, as the active language writes numbers."""
    return number_format(round(value, 1), decimal_pos=1, use_l10n=True)


@register.filter
def billions(count: int) -> str:
    """A parameter count in billions: 70.55."""
    return number_format(round(count / 1e9, 2), use_l10n=True)


@register.filter
def runs_on(environment, gpu) -> bool:
    """Whether some active machine of `gpu` (annotated with `machine_cuda_max`) supports the
    CUDA `environment` needs."""
    return images.cuda_supports(getattr(gpu, "machine_cuda_max", None), environment.cuda_required)


@register.filter
def cuda(value: Decimal | None) -> str:
    return images.cuda_version(value)

"""The QR code of a payment request, drawn inline as SVG."""

from functools import lru_cache

from django import template
from django.utils.safestring import mark_safe

from rental.qr import qr_svg

register = template.Library()


# Drawing a code (mask scoring) costs more than the rest of the order page; the request only
# changes with what is left to pay. Bounded, so a worker's memory stays flat.
@lru_cache(maxsize=512)
def _svg(data: str, title: str) -> str:
    return qr_svg(data, title=title)


@register.simple_tag
def payment_qr(data: str, title: str = "") -> str:
    return mark_safe(_svg(data, title))

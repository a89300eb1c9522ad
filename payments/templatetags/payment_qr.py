"""The QR code of a payment request, drawn inline as SVG."""

from functools import lru_cache

import segno
from django import template
from django.utils.safestring import mark_safe

register = template.Library()


# Drawing a code (mask scoring) costs more than the rest of the order page; the request only
# changes with what is left to pay. Bounded, so a worker's memory stays flat.
@lru_cache(maxsize=512)
def _svg(data: str, title: str) -> str:
    # segno's own SVG markup; `data` is our EIP-681 request and segno escapes it anyway.
    # A viewBox and no width/height: CSS sizes the whole code, never crops it. The quiet zone
    # is the 4 modules the standard asks for, so a reader finds the code on any background.
    return segno.make(data, error="m").svg_inline(
        border=4, omitsize=True, dark="#111", light="#fff", title=title or None
    )


@register.simple_tag
def payment_qr(data: str, title: str = "") -> str:
    return mark_safe(_svg(data, title))

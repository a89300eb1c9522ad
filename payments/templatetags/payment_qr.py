"""The QR code of a payment request, drawn inline as SVG."""

import segno
from django import template
from django.utils.safestring import mark_safe

register = template.Library()


@register.simple_tag
def payment_qr(data: str) -> str:
    # segno's own SVG markup; `data` is our EIP-681 request and segno escapes it anyway.
    svg = segno.make(data, error="m").svg_inline(scale=4, border=2, dark="#111", light="#fff")
    return mark_safe(svg)

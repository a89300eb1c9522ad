"""QR codes drawn inline as SVG: pages load nothing from elsewhere (the CSP forbids it)."""

import segno


def qr_svg(data: str, *, title: str = "") -> str:
    # segno's own SVG markup; it escapes `data`. A viewBox and no width/height: CSS sizes the
    # whole code, never crops it. The quiet zone is the 4 modules the standard asks for, so a
    # reader finds the code on any background.
    return segno.make(data, error="m").svg_inline(
        border=4, omitsize=True, dark="#111", light="#fff", title=title or None
    )

"""Side-by-side figures for the comparison page and the geometry of its SVG charts."""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from catalog.models import GpuModel
from catalog.vat import CENT


@dataclass(frozen=True)
class ComparisonRow:
    gpu: GpuModel
    price_from: Decimal | None
    price_per_gb: Decimal | None


def comparison_rows(gpus: Iterable[GpuModel]) -> list[ComparisonRow]:
    """Expects GPUs from `catalog_gpus()` (annotated with `price_from`)."""
    rows = []
    for gpu in gpus:
        price_from = gpu.price_from  # type: ignore[attr-defined]  # annotated
        per_gb = None
        if price_from is not None and gpu.memory_gb:
            per_gb = (price_from / gpu.memory_gb).quantize(CENT, rounding=ROUND_HALF_UP)
        rows.append(ComparisonRow(gpu=gpu, price_from=price_from, price_per_gb=per_gb))
    return rows


@dataclass(frozen=True)
class Bar:
    label: str
    value: Decimal
    y: int
    width: int
    text_y: int


@dataclass(frozen=True)
class BarChart:
    width: int
    height: int
    label_width: int
    bar_height: int
    value_x: int
    bars: tuple[Bar, ...]


def bar_chart(
    items: Sequence[tuple[str, Decimal | int]],
    *,
    # Narrow on purpose: the SVG scales down to a 360px phone and its text must stay legible.
    width: int = 420,
    label_width: int = 104,
    value_width: int = 76,
    row_height: int = 32,
    bar_height: int = 20,
) -> BarChart:
    """Horizontal bars, whole-pixel coordinates so they survive localized rendering."""
    area = width - label_width - value_width
    largest = max((Decimal(value) for _label, value in items), default=Decimal(0))
    bars = []
    for index, (label, value) in enumerate(items):
        length = int(Decimal(value) / largest * area) if largest > 0 else 0
        top = 8 + index * row_height
        bars.append(
            Bar(
                label=label,
                value=Decimal(value),
                y=top,
                # A tiny value still gets a visible sliver.
                width=max(length, 2),
                text_y=top + bar_height // 2 + 5,
            )
        )
    return BarChart(
        width=width,
        height=16 + len(items) * row_height,
        label_width=label_width,
        bar_height=bar_height,
        value_x=label_width + area + 8,
        bars=tuple(bars),
    )

"""Turns a measured peak memory and a multi-GPU profile into a GPU recommendation.

Pure: no database, no request. The card sizes below mirror the seeded catalog; the view
checks which recommended GPUs are on sale right now.
"""

import math
from dataclasses import dataclass
from decimal import Decimal

from django.utils.formats import number_format
from django.utils.functional import lazy
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _
from django_stubs_ext import StrOrPromise

H200_GB = 141
CARD_80_GB = 80
RTX_A6000_GB = 48
CARD_24_GB = 24
# A measured peak should leave about 10 % of the card free: longer inputs than the test
# batch, the validation pass and allocator fragmentation all push the real peak higher.
HEADROOM = Decimal("0.9")
# Within this distance of a 24 GB card, the usual way to fit is to shorten examples.
NEAR_24_GB = Decimal("18")
# Beyond this the form refuses the value: even eight H200 could not hold it.
PEAK_MAX_GB = 1000
GPU_COUNT_MAX = 64


def usable_gb(card_gb: int) -> Decimal:
    return card_gb * HEADROOM


@dataclass(frozen=True)
class Recommendation:
    slugs: tuple[str, ...]
    reason: StrOrPromise  # lazy: translated when shown, in the reader's language
    notes: tuple[StrOrPromise, ...] = ()
    quantity: int = 1
    fits_one_card: bool = True


def _gigabytes(value: Decimal) -> str:
    return number_format(value.normalize() if value != value.to_integral() else int(value))


_lazy_gigabytes = lazy(_gigabytes, str)


def recommend_gpus(
    *,
    peak_memory_gb: Decimal,
    gpu_count: int,
    frequent_exchange: bool,
    shortening_distorts: bool,
) -> Recommendation:
    """The GPU(s) to rent for a measured per-card peak, and why, in the active language."""
    peak = Decimal(peak_memory_gb)
    peak_label = _lazy_gigabytes(peak)
    exchanges_a_lot = gpu_count > 1 and frequent_exchange

    if peak > H200_GB:
        cards = max(2, math.ceil(peak / usable_gb(H200_GB)))
        return Recommendation(
            slugs=("h200",),
            reason=format_lazy(
                _(
                    "A peak of {peak} GB per card does not fit on any single GPU: the largest, "
                    "the H200, has 141 GB. Split the model across at least {cards} H200 with "
                    "sharded data parallelism (FSDP or ZeRO) or tensor and pipeline "
                    "parallelism, then measure the peak again on each card."
                ),
                peak=peak_label,
                cards=cards,
            ),
            notes=(
                _(
                    "H200 cards are linked by NVLink, which keeps the exchanges that model "
                    "parallelism requires fast. Measure the time per step at each scale."
                ),
            ),
            quantity=max(gpu_count, cards),
            fits_one_card=False,
        )

    if peak > usable_gb(CARD_80_GB):
        notes: tuple[StrOrPromise, ...] = ()
        if peak > usable_gb(H200_GB):
            notes = (
                _(
                    "The margin is thin even on 141 GB: if longer inputs push the peak "
                    "higher, split the work across several H200."
                ),
            )
        return Recommendation(
            slugs=("h200",),
            reason=format_lazy(
                _(
                    "A peak of {peak} GB leaves no safe margin on an 80 GB card. The H200 and "
                    "its 141 GB hold it in one card, without sharding the model."
                ),
                peak=peak_label,
            ),
            notes=notes,
            quantity=gpu_count,
        )

    if peak > usable_gb(RTX_A6000_GB):
        if exchanges_a_lot:
            return Recommendation(
                slugs=("h100-sxm",),
                reason=format_lazy(
                    _(
                        "A peak of {peak} GB fits an 80 GB card with headroom, and your "
                        "{count} GPUs exchange data often: the H100 SXM links its cards by "
                        "NVLink. Measure your topology (nvidia-smi topo -m) and the time per "
                        "step on 1, 2 and 4 GPUs to confirm the gain."
                    ),
                    peak=peak_label,
                    count=gpu_count,
                ),
                quantity=gpu_count,
            )
        return Recommendation(
            slugs=("h100-pcie", "a100-80gb"),
            reason=format_lazy(
                _(
                    "A peak of {peak} GB fits an 80 GB card with headroom, and your cards do "
                    "not need to exchange often: the H100 PCIe gives Hopper's 80 GB at a lower "
                    "rate than the SXM version, and the A100 80GB offers the same memory for "
                    "less if Hopper is not required."
                ),
                peak=peak_label,
            ),
            quantity=gpu_count,
        )

    if peak > usable_gb(CARD_24_GB):
        notes = ()
        if exchanges_a_lot:
            notes = (
                _(
                    "Two RTX A6000 can be joined by NVLink; beyond two, exchanges go over PCIe. "
                    "Measure the scaling, or look at the H100 SXM if it drops."
                ),
            )
        return Recommendation(
            slugs=("rtx-a6000",),
            reason=format_lazy(
                _(
                    "A peak of {peak} GB is too much for a 24 GB card but fits the RTX A6000 "
                    "and its 48 GB with headroom, at a far lower rate than an 80 GB card."
                ),
                peak=peak_label,
            ),
            notes=notes,
            quantity=gpu_count,
        )

    notes = ()
    if exchanges_a_lot:
        notes = (
            _(
                "These cards exchange data over PCIe: measure the scaling on 1, 2 and 4 GPUs "
                "before ordering several."
            ),
        )
    if shortening_distorts and peak >= NEAR_24_GB:
        return Recommendation(
            slugs=("rtx-a6000",),
            reason=format_lazy(
                _(
                    "A peak of {peak} GB is close to the limit of a 24 GB card, and shortening "
                    "examples to stay under it would distort your protocol: the RTX A6000 and "
                    "its 48 GB keep your examples intact."
                ),
                peak=peak_label,
            ),
            notes=notes,
            quantity=gpu_count,
        )
    return Recommendation(
        slugs=("rtx-4090", "rtx-3090"),
        reason=format_lazy(
            _(
                "A peak of {peak} GB fits a 24 GB card with headroom: the RTX 4090 (Ada "
                "Lovelace) is the faster of the two, the RTX 3090 (Ampere) the cheaper."
            ),
            peak=peak_label,
        ),
        notes=notes,
        quantity=gpu_count,
    )

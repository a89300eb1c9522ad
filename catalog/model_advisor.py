"""From a described job to the GPUs to rent: the fewest cards on sale that hold its estimated
peak with a stated margin, one cheaper change under the same stack, and a term.

An estimate is not a measurement: the published peaks the table tests compare it with lie
within a fifth of it, so a card holds the job only if ESTIMATE_MARGIN of what it leaves
after its CUDA context stays free (the measured-peak advisor, catalog.advisor, keeps a
tenth of the card free of a peak that was measured).
Pure: the GPUs on sale (with price and availability) come in as arguments.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Protocol

from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from catalog.advisor import GPU_COUNT_MAX, H200_GB
from catalog.advisor_changes import changes_for
from catalog.advisor_texts import assumptions, term_suggestion
from catalog.memory import CUDA_CONTEXT_GB, Estimate, Job, Text, memory_estimate
from catalog.training_stacks import Sharding

ESTIMATE_MARGIN = 0.15


class Offer(Protocol):
    """A GPU on sale as catalog.selectors.catalog_gpus annotates it."""

    slug: str
    memory_gb: int
    form_factor: str
    available_units: int
    price_from: Decimal | None


def holds_gb(card_gb: float) -> float:
    """The most a card holds with the margin: its memory less the CUDA context, less
    ESTIMATE_MARGIN of the rest."""
    return CUDA_CONTEXT_GB + (card_gb - CUDA_CONTEXT_GB) * (1 - ESTIMATE_MARGIN)


def spare_share(per_gpu_gb: float, card_gb: float) -> float:
    """What share of the card (after its context) stays free."""
    return 1 - (per_gpu_gb - CUDA_CONTEXT_GB) / (card_gb - CUDA_CONTEXT_GB)


def _card_counts(estimate: Estimate) -> range:
    job = estimate.job
    if job.gpus is not None:
        return range(job.gpus, job.gpus + 1)
    return range(1, GPU_COUNT_MAX + 1)


def cards_needed(estimate: Estimate) -> int | None:
    """The asked number of cards, or the fewest that hold the job once sharded on the largest
    card (H200); None when none of those counts could (what each card keeps whole, the
    activations, is too large, or the cards are replicas)."""
    for cards in _card_counts(estimate):
        if estimate.per_gpu_gb(cards) <= holds_gb(H200_GB):
            return cards
    return None


@dataclass(frozen=True)
class Plan:
    estimate: Estimate
    per_gpu_gb: float
    quantity: int = 0
    gpu: Offer | None = None  # the recommended card on sale, None when none holds the job

    @property
    def spare_share(self) -> float:
        assert self.gpu is not None
        return spare_share(self.per_gpu_gb, self.gpu.memory_gb)

    @property
    def reason(self) -> Text:
        assert self.gpu is not None
        return format_lazy(
            _(
                "About {peak} GB on each card of {memory} GB: {spare} % of what the card "
                "leaves after its CUDA context ({context} GB) stays free, above the margin of "
                "{margin} % an estimate needs (published peaks lie within a fifth of it)."
            ),
            peak=f"{self.per_gpu_gb:.1f}",
            memory=self.gpu.memory_gb,
            spare=round(100 * self.spare_share),
            context=CUDA_CONTEXT_GB,
            margin=round(100 * ESTIMATE_MARGIN),
        )

    @property
    def fits_one_host(self) -> bool:
        """Whether one machine has that many cards free now (hosts annotate
        `largest_free_block`; without hosts every unit counts as one machine's)."""
        if self.gpu is None:
            return False
        largest = getattr(self.gpu, "largest_free_block", self.gpu.available_units)
        return self.quantity <= largest

    @property
    def daily_cost(self) -> Decimal | None:
        if self.gpu is None or self.gpu.price_from is None:
            return None
        return self.gpu.price_from * self.quantity


def _plan(estimate: Estimate, offers: Sequence[Offer], cards: int) -> Plan:
    """The smallest card on sale that holds the job on `cards` cards, in the catalog's order
    within a size: NVLink-switched (SXM) cards first when sharded training exchanges weights
    and gradients at every step, PCIe cards first otherwise (an SXM card costs more for links
    the job would not use); cards in stock before those short."""
    per_gpu = estimate.per_gpu_gb(cards)
    holding = [offer for offer in offers if per_gpu <= holds_gb(offer.memory_gb)]
    job = estimate.job
    exchanges = cards > 1 and job.trains and job.sharding != Sharding.NONE
    order = sorted(
        holding,
        key=lambda offer: (
            offer.memory_gb,
            (offer.form_factor == "sxm") != exchanges,
            offer.available_units < cards,
        ),
    )
    gpu = order[0] if order else None
    return Plan(estimate=estimate, per_gpu_gb=per_gpu, quantity=cards if gpu else 0, gpu=gpu)


def plan_for(estimate: Estimate, offers: Sequence[Offer]) -> Plan:
    """The fewest cards that hold the job and are free today (or the count asked for); when
    the card that count calls for is short, more cards (each holding less, so perhaps a
    smaller card) are tried; when none is free, the fewest cards all the same, which the page
    says are short."""
    first = cards_needed(estimate)
    if first is None:
        counts = _card_counts(estimate)
        return Plan(estimate=estimate, per_gpu_gb=estimate.per_gpu_gb(counts[-1]))
    fewest = _plan(estimate, offers, first)
    for cards in _card_counts(estimate):
        if cards < first:
            continue
        plan = fewest if cards == first else _plan(estimate, offers, cards)
        if plan.gpu is not None and plan.gpu.available_units >= plan.quantity:
            return plan
    return fewest


@dataclass(frozen=True)
class Alternative:
    change: Text  # what to change, in the active language
    job: Job
    plan: Plan


def cheaper_alternative(job: Job, plan: Plan, offers: Sequence[Offer]) -> Alternative | None:
    """The first change the stack allows (least intrusive first) that holds with the same
    margin and rents for less, or that holds at all when nothing does now."""
    for change, changed in changes_for(job):
        other = plan_for(memory_estimate(changed), offers)
        if other.gpu is None or other.daily_cost is None:
            continue
        if plan.daily_cost is None or other.daily_cost < plan.daily_cost:
            return Alternative(change=change, job=changed, plan=other)
    return None


@dataclass(frozen=True)
class Advice:
    job: Job
    plan: Plan
    alternative: Alternative | None
    term_days: int
    term_reason: Text
    assumptions: list[Text]


def advise(*, job: Job, offers: Sequence[Offer]) -> Advice:
    plan = plan_for(memory_estimate(job), offers)
    term_days, term_reason = term_suggestion(job, plan.quantity)
    return Advice(
        job=job,
        plan=plan,
        alternative=cheaper_alternative(job, plan, offers),
        term_days=term_days,
        term_reason=term_reason,
        assumptions=assumptions(job),
    )

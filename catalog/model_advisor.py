"""From a described job to the GPUs to rent: the fewest cards on sale that hold its estimated
peak, one cheaper change, and a term.

The card is chosen by the rule that serves a measured peak (catalog.advisor.recommend_gpus),
fed with the estimated peak per card: both advisors answer alike for the same memory.
Pure: the GPUs on sale (with price and availability) come in as arguments.
"""

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Protocol

from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from catalog.advisor import GPU_COUNT_MAX, H200_GB, Recommendation, recommend_gpus, usable_gb
from catalog.llm_models import (
    CUSTOM_PARAMETERS_MAX,
    CUSTOM_PARAMETERS_MIN,
    MODELS,
    architecture_estimate,
)
from catalog.memory import (
    PRECISIONS,
    QUANTIZED,
    Estimate,
    Job,
    JobKind,
    Optimizer,
    Precision,
    Text,
    default_precision,
    memory_estimate,
)

# Longer than any context the listed models accept (Llama 3.1: 131,072 tokens).
SEQUENCE_MAX = 131_072
MICRO_BATCH_MAX = 1024
CONCURRENT_MAX = 4096
LORA_RANK_MAX = 4096
# Shorter sequences are offered as the cheaper change only where halving them still leaves
# a useful length.
SHORTEN_FROM = 1024


class Offer(Protocol):
    """A GPU on sale as catalog.selectors.catalog_gpus annotates it."""

    slug: str
    memory_gb: int
    available_units: int
    price_from: Decimal | None


class JobError(ValueError):
    """A job the advisor cannot estimate, about one field of the request."""

    def __init__(self, field: str, message: Text):
        super().__init__(str(message))
        self.field = field
        self.message = message


def job_build(
    *,
    job: str,
    model: str | None = None,
    parameters: int | None = None,
    precision: str | None = None,
    optimizer: str = Optimizer.ADAMW,
    sequence_length: int = 2048,
    micro_batch: int = 1,
    lora_rank: int = 16,
    gradient_checkpointing: bool = True,
    context_length: int = 4096,
    concurrent_sequences: int = 1,
) -> Job:
    """The job described by a form or an API request; JobError names the field at fault.
    Ranges of single fields are checked by the form or serializer; this checks the rest."""
    if model and parameters:
        raise JobError(
            "parameters", _("Give a model from the list or a parameter count, not both.")
        )
    if model:
        if model not in MODELS:
            raise JobError("model", _("Unknown model: choose one from the list."))
        architecture = MODELS[model]
    elif parameters:
        if not CUSTOM_PARAMETERS_MIN <= parameters <= CUSTOM_PARAMETERS_MAX:
            raise JobError("parameters", _("Give between 10 million and 2 trillion parameters."))
        architecture = architecture_estimate(parameters=parameters)
    else:
        raise JobError("model", _("Choose a model from the list or give a parameter count."))
    kind = JobKind(job)
    chosen = Precision(precision) if precision else default_precision(kind)
    if chosen not in PRECISIONS[kind]:
        allowed = ", ".join(PRECISIONS[kind])
        raise JobError(
            "precision",
            format_lazy(_("This job runs with weights in: {allowed}."), allowed=allowed),
        )
    return Job(
        model=architecture,
        kind=kind,
        precision=chosen,
        optimizer=Optimizer(optimizer),
        sequence_length=sequence_length,
        micro_batch=micro_batch,
        lora_rank=lora_rank,
        gradient_checkpointing=gradient_checkpointing,
        context_length=context_length,
        concurrent_sequences=concurrent_sequences,
    )


def cards_needed(estimate: Estimate) -> int | None:
    """The fewest cards that hold the job once sharded, with headroom on the largest card
    (H200); None when even GPU_COUNT_MAX of them could not (what each card keeps whole,
    the activations, is too large)."""
    for cards in range(1, GPU_COUNT_MAX + 1):
        if estimate.per_gpu_gb(cards) <= usable_gb(H200_GB):
            return cards
    return None


@dataclass(frozen=True)
class Plan:
    estimate: Estimate
    per_gpu_gb: float
    recommendation: Recommendation | None = None
    gpu: Offer | None = None  # the recommended card on sale, None when none is

    @property
    def quantity(self) -> int:
        return self.recommendation.quantity if self.recommendation else 0

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
    per_gpu = estimate.per_gpu_gb(cards)
    recommendation = recommend_gpus(
        peak_memory_gb=Decimal(f"{per_gpu:.1f}"),
        gpu_count=cards,
        # Sharded cards exchange weights or activations at every step.
        frequent_exchange=cards > 1,
        shortening_distorts=False,
    )
    by_slug = {offer.slug: offer for offer in offers}
    on_sale = [by_slug[slug] for slug in recommendation.slugs if slug in by_slug]
    stocked = [offer for offer in on_sale if offer.available_units >= recommendation.quantity]
    chosen = stocked or on_sale
    gpu = chosen[0] if chosen else None
    return Plan(estimate=estimate, per_gpu_gb=per_gpu, recommendation=recommendation, gpu=gpu)


def plan_for(estimate: Estimate, offers: Sequence[Offer]) -> Plan:
    """The fewest cards that hold the job and are free today; when the card that count calls
    for is short, more cards (each holding less, so perhaps a smaller card) are tried; when
    none is free, the fewest cards all the same, which the page says are short."""
    first = cards_needed(estimate)
    if first is None:
        return Plan(estimate=estimate, per_gpu_gb=estimate.per_gpu_gb(GPU_COUNT_MAX))
    fewest = _plan(estimate, offers, first)
    for cards in range(first, GPU_COUNT_MAX + 1):
        plan = fewest if cards == first else _plan(estimate, offers, cards)
        if plan.gpu is not None and plan.gpu.available_units >= plan.quantity:
            return plan
    return fewest


@dataclass(frozen=True)
class Alternative:
    change: Text  # what to change, in the active language
    job: Job
    plan: Plan


def _changes(job: Job) -> Iterator[tuple[Text, Job]]:
    """Changes that lower memory, the least intrusive for the results first."""
    if job.trains and not job.gradient_checkpointing:
        yield (
            _(
                "Turn gradient checkpointing on: each layer is recomputed in the backward pass "
                "(about a third more compute) instead of keeping its activations."
            ),
            replace(job, gradient_checkpointing=True),
        )
    if job.trains and job.micro_batch > 1:
        yield (
            format_lazy(
                _(
                    "Micro-batches of 1 with {steps} steps of gradient accumulation: the same "
                    "global batch in less memory."
                ),
                steps=job.micro_batch,
            ),
            replace(job, micro_batch=1),
        )
    if job.kind == JobKind.FULL and job.optimizer == Optimizer.ADAMW:
        yield (
            _(
                "8-bit Adam (bitsandbytes): 2 bytes of optimizer state a parameter instead of 8; "
                "compare the loss curves on a short run."
            ),
            replace(job, optimizer=Optimizer.ADAMW_8BIT),
        )
    if job.trains and job.sequence_length >= SHORTEN_FROM:
        yield (
            format_lazy(
                _("Sequences of {shorter} tokens instead of {length}, if your examples allow."),
                shorter=job.sequence_length // 2,
                length=job.sequence_length,
            ),
            replace(job, sequence_length=job.sequence_length // 2),
        )
    if job.kind == JobKind.LORA:
        yield (
            _("QLoRA instead of LoRA: the frozen weights in 4-bit NF4, the adapters unchanged."),
            replace(job, kind=JobKind.QLORA, precision=Precision.NF4),
        )
    if job.kind == JobKind.FULL:
        yield (
            format_lazy(
                _(
                    "LoRA of rank {rank} instead of a full fine-tune: only the adapters are "
                    "trained."
                ),
                rank=job.lora_rank,
            ),
            replace(job, kind=JobKind.LORA),
        )
    if not job.trains and job.concurrent_sequences > 1:
        yield (
            format_lazy(
                _("{fewer} concurrent sequences instead of {count}."),
                fewer=job.concurrent_sequences // 2,
                count=job.concurrent_sequences,
            ),
            replace(job, concurrent_sequences=job.concurrent_sequences // 2),
        )
    if not job.trains and job.context_length >= SHORTEN_FROM:
        yield (
            format_lazy(
                _("A context of {shorter} tokens instead of {length}."),
                shorter=job.context_length // 2,
                length=job.context_length,
            ),
            replace(job, context_length=job.context_length // 2),
        )
    if not job.trains and job.precision not in QUANTIZED:
        yield (
            _(
                "Weights in 8 bits (LLM.int8): half the memory of bf16; check the quality of "
                "the answers on your prompts."
            ),
            replace(job, precision=Precision.INT8),
        )


def cheaper_alternative(job: Job, plan: Plan, offers: Sequence[Offer]) -> Alternative | None:
    """The first change (least intrusive first) that rents for less, or that fits at all."""
    for change, changed in _changes(job):
        other = plan_for(memory_estimate(changed), offers)
        if other.daily_cost is None:
            continue
        if plan.daily_cost is None or other.daily_cost < plan.daily_cost:
            return Alternative(change=change, job=changed, plan=other)
    return None


def term_suggestion(job: Job, cards: int) -> tuple[int, Text]:
    """A term in the spirit of the product pages: 3 days to validate a loop and a checkpoint,
    7 for a series of variants, 30 for a longer campaign."""
    if job.kind == JobKind.FULL and cards > 1:
        return 30, _(
            "30 days: a multi-GPU fine-tune is a campaign; plan checkpoints, their reload, "
            "the evaluation and the export within the term."
        )
    if job.trains:
        return 7, _(
            "7 days: room for a series of variants (rank, learning rate, data) on a "
            "stabilised dataset; 3 days are enough to validate the loop and a checkpoint."
        )
    return 3, _(
        "3 days: enough to load the model, measure its memory and speed on your own "
        "prompts, and decide; take 7 or 30 days to serve it longer."
    )


def assumptions(job: Job) -> list[Text]:
    notes: list[Text] = [
        _("GB are 2^30 bytes, as PyTorch and nvidia-smi count them."),
        _(
            "A card is used up to 90 % of its memory: longer inputs, validation and "
            "fragmentation need the rest."
        ),
    ]
    if job.model.estimated:
        notes.append(
            format_lazy(
                _(
                    "Architecture estimated from the parameter count: {layers} layers, hidden "
                    "size {hidden}, full multi-head attention, {vocabulary} tokens of "
                    "vocabulary."
                ),
                layers=job.model.layers,
                hidden=job.model.hidden_size,
                vocabulary=job.model.vocabulary,
            )
        )
    if job.model.experts > 1:
        notes.append(
            _(
                "Every expert's weights are in memory, even though each token uses "
                "only some of them."
            )
        )
    if job.trains:
        notes.append(
            _(
                "Attention through PyTorch's SDPA or FlashAttention: the attention scores are "
                "recomputed, not stored."
            )
        )
        notes.append(
            _(
                "Split over several cards with FSDP or DeepSpeed ZeRO-3: weights, gradients and "
                "optimizer states are sharded, each card keeps its own activations."
            )
        )
    else:
        notes.append(
            _(
                "Split over several cards by tensor parallelism (vLLM, TGI): weights and KV "
                "cache are divided between the cards of one machine."
            )
        )
    if job.kind == JobKind.FULL and job.precision != Precision.FP32:
        notes.append(
            _(
                "16-bit weights and gradients with Adam's moments in fp32, as the QLoRA paper "
                "counts 16-bit fine-tuning; an fp32 master copy of the weights would add 4 "
                "bytes a parameter."
            )
        )
    if job.adapts:
        notes.append(
            _("Adapters on every linear layer of each block, as the QLoRA paper recommends.")
        )
    return notes


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

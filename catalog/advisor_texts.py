"""What the model advisor says around its numbers: the term the job calls for and the
assumptions behind the estimate, in the active language."""

from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from catalog.memory import Job, JobKind, Text
from catalog.training_stacks import OPTIMIZER_LABELS, PRESETS, Loss, Sharding

# A model up to this size is fine-tuned with adapters in hours an epoch on one card: a first
# term validates the loop; larger ones, or several cards, make each variant a day's work.
QUICK_ADAPTER_BILLIONS = 15
# From this many sequences at once, an inference server is being load-tested, not tried.
SERVING_CONCURRENCY = 16


def _inference_term(job: Job, cards: int) -> tuple[int, Text]:
    if job.concurrent_sequences >= SERVING_CONCURRENCY or cards > 1:
        return 7, format_lazy(
            _(
                "7 days: serving {model} to {count} sequences at once on {cards} GPU(s) is a "
                "load test; a week shows a whole cycle of traffic and leaves time to tune "
                "max_model_len and the batch size."
            ),
            model=job.model.name,
            count=job.concurrent_sequences,
            cards=cards,
        )
    return 3, format_lazy(
        _(
            "3 days: enough to load {model}, measure its memory and speed on your own prompts "
            "at {length} tokens, and decide; take 7 or 30 days to serve it longer."
        ),
        model=job.model.name,
        length=job.context_length,
    )


def term_suggestion(job: Job, cards: int) -> tuple[int, Text]:
    """A term that follows from the job: 3 days to validate a loop and a checkpoint, 7 for a
    series of variants (an ablation), 30 for a multi-GPU campaign."""
    if not job.trains:
        return _inference_term(job, cards)
    billions = job.model.parameters / 1e9
    if job.kind == JobKind.FULL and cards > 1:
        return 30, format_lazy(
            _(
                "30 days: a full fine-tune of {model} on {cards} GPUs is a campaign; plan "
                "checkpoints of the sharded states, their reload, the evaluation and the "
                "export within the term."
            ),
            model=job.model.name,
            cards=cards,
        )
    if job.adapts and billions <= QUICK_ADAPTER_BILLIONS and cards <= 1:
        return 3, format_lazy(
            _(
                "3 days: adapters of rank {rank} on {model} train in hours an epoch on one "
                "card; validate the loop, save a checkpoint and reload it, then take 7 days "
                "for a series of variants."
            ),
            rank=job.lora_rank,
            model=job.model.name,
        )
    return 7, format_lazy(
        _(
            "7 days: room for an ablation series on {model} ({tokens} tokens a step on each "
            "card): rank or learning rate or data mix in turn, each run to a checkpoint you "
            "can compare."
        ),
        model=job.model.name,
        tokens=job.tokens,
    )


def _training_assumptions(job: Job) -> list[Text]:
    preset = PRESETS[job.stack]
    notes: list[Text] = [
        format_lazy(
            _(
                "Stack: {stack} ({source}), with its defaults where you left a setting out. "
                "Optimizer: {optimizer}."
            ),
            stack=preset.name,
            source=preset.source.title,
            optimizer=OPTIMIZER_LABELS[job.optimizer],
        ),
        _(
            "Attention through PyTorch's SDPA or FlashAttention: the attention scores are "
            "recomputed, not stored."
        ),
    ]
    if job.master_weights:
        notes.append(
            _(
                "Mixed precision: 16-bit weights for the computation, an fp32 master copy and "
                "fp32 gradients for the update (4 + 4 bytes a trained weight)."
            )
        )
    if job.loss == Loss.FULL:
        notes.append(
            _(
                "The logits of every token over the whole vocabulary are materialised and "
                "upcast to fp32 for the loss: with a vocabulary of 128k to 256k tokens, often "
                "the largest part."
            )
        )
    if job.packing:
        notes.append(_("Packed sequences: every micro-batch is full."))
    else:
        notes.append(_("Padded batches: the peak is that of a batch padded to the full length."))
    if job.sharding == Sharding.NONE:
        notes.append(
            _("Data parallel over several cards: each card holds a whole copy of the job.")
        )
    if job.adapts:
        targets = ", ".join(sorted(job.lora_targets))
        notes.append(format_lazy(_("Adapters on: {targets}."), targets=targets))
    return notes


def assumptions(job: Job) -> list[Text]:
    notes: list[Text] = [
        _("GB are 2^30 bytes, as PyTorch and nvidia-smi count them."),
        _(
            "Each card keeps 15 % of what its CUDA context leaves free: longer inputs, "
            "validation and an estimate's error need the rest."
        ),
    ]
    if job.model.estimated:
        notes.append(
            format_lazy(
                _(
                    "Architecture estimated from the parameter count: {layers} layers, hidden "
                    "size {hidden}, grouped-query attention with {kv_heads} KV heads, "
                    "{vocabulary} tokens of vocabulary. Paste the model's config.json for its "
                    "own numbers."
                ),
                layers=job.model.layers,
                hidden=job.model.hidden_size,
                kv_heads=job.model.kv_heads,
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
        return notes + _training_assumptions(job)
    if job.sharding == Sharding.NONE:
        notes.append(_("Replicas: each card serves a whole copy of the model."))
    else:
        notes.append(
            _(
                "Split over several cards by tensor parallelism (vLLM, TGI): weights and KV "
                "cache are divided between the cards of one machine."
            )
        )
    return notes

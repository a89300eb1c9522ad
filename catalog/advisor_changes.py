"""The changes that lower a job's memory without leaving its stack, each said in the stack's
own setting, the least intrusive for the results first (catalog.model_advisor tries them)."""

from collections.abc import Iterator
from dataclasses import replace

from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from catalog.memory import QUANTIZED, Job, JobKind, Precision, Text
from catalog.training_stacks import Loss, Optimizer, Sharding, Stack

# Shorter sequences are offered only where halving them still leaves a useful length.
SHORTEN_FROM = 1024
TRAINER_STACKS = (Stack.TRANSFORMERS, Stack.DEEPSPEED_ZERO1, Stack.DEEPSPEED_ZERO2, Stack.FSDP)
DEEPSPEED = (Stack.DEEPSPEED_ZERO1, Stack.DEEPSPEED_ZERO2, Stack.DEEPSPEED_ZERO3)
CHECKPOINTING = {
    Stack.TORCHTUNE: "enable_activation_checkpointing: True",
    Stack.UNSLOTH: 'use_gradient_checkpointing="unsloth"',
    Stack.AXOLOTL: "gradient_checkpointing: true",
}
FUSED_LOSS = {
    Stack.AXOLOTL: "plugins: cut_cross_entropy (cut_cross_entropy: true)",
}
EIGHT_BIT = {
    Stack.TORCHTUNE: "optimizer: bitsandbytes.optim.PagedAdamW8bit",
    Stack.UNSLOTH: 'optim="adamw_8bit"',
    Stack.AXOLOTL: "optimizer: adamw_bnb_8bit",
}


def _checkpointing(job: Job) -> Iterator[tuple[Text, Job]]:
    if not job.gradient_checkpointing:
        setting = CHECKPOINTING.get(job.stack, "gradient_checkpointing=True")
        yield (
            format_lazy(
                _(
                    "Turn gradient checkpointing on ({setting}): each layer is recomputed in "
                    "the backward pass (about a third more compute) instead of keeping its "
                    "activations."
                ),
                setting=setting,
            ),
            replace(job, gradient_checkpointing=True),
        )
    elif job.stack == Stack.TORCHTUNE and not job.offload_checkpoints:
        yield (
            _(
                "enable_activation_offloading: True: torchtune sends the checkpointed "
                "activations to the CPU while the next layers run."
            ),
            replace(job, offload_checkpoints=True),
        )


def _loss(job: Job) -> Iterator[tuple[Text, Job]]:
    if job.loss != Loss.FULL or job.stack == Stack.TORCHTUNE:
        return
    setting = FUSED_LOSS.get(job.stack, "use_liger_kernel=True")
    yield (
        format_lazy(
            _(
                "A fused linear cross-entropy ({setting}): the logits of the whole vocabulary "
                "are never stored, the same loss is computed."
            ),
            setting=setting,
        ),
        replace(job, loss=Loss.FUSED),
    )


def _optimizer(job: Job) -> Iterator[tuple[Text, Job]]:
    if job.kind != JobKind.FULL:
        return
    if job.stack in DEEPSPEED and job.optimizer != Optimizer.CPU_OFFLOAD:
        yield (
            _(
                "offload_optimizer: {device: cpu} in the DeepSpeed config (ZeRO-Offload): "
                "Adam's states and the fp32 master weights move to CPU memory; steps get slower."
            ),
            replace(job, optimizer=Optimizer.CPU_OFFLOAD),
        )
    elif job.optimizer in (Optimizer.ADAMW, Optimizer.ADAMW_BF16):
        setting = EIGHT_BIT.get(job.stack, 'optim="adamw_bnb_8bit"')
        yield (
            format_lazy(
                _(
                    "8-bit AdamW ({setting}): 2 bytes of optimizer state a parameter; compare "
                    "the loss curves on a short run."
                ),
                setting=setting,
            ),
            replace(job, optimizer=Optimizer.ADAMW_8BIT),
        )
    if job.stack == Stack.TORCHTUNE and not job.optimizer_in_backward:
        yield (
            _(
                "optimizer_in_bwd: True: each weight is updated as soon as its gradient is "
                "ready, so the gradients are never all in memory (no gradient accumulation)."
            ),
            replace(job, optimizer_in_backward=True),
        )


def _sharding(job: Job) -> Iterator[tuple[Text, Job]]:
    if job.sharding == Sharding.FULL or job.stack == Stack.UNSLOTH:
        return
    if job.stack in DEEPSPEED:
        text = _("ZeRO stage 3 (zero_optimization.stage: 3): the weights are divided too.")
        changed = replace(job, stack=Stack.DEEPSPEED_ZERO3, sharding=Sharding.FULL)
    else:
        text = _(
            "Shard across the GPUs with FSDP (fsdp: full_shard): weights, gradients and "
            "optimizer states divided between them instead of a copy on each."
        )
        changed = replace(job, sharding=Sharding.FULL)
    yield text, changed


def _training_changes(job: Job) -> Iterator[tuple[Text, Job]]:
    yield from _checkpointing(job)
    yield from _loss(job)
    if job.micro_batch > 1:
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
    yield from _optimizer(job)
    yield from _sharding(job)
    if job.sequence_length >= SHORTEN_FROM:
        yield (
            format_lazy(
                _("Sequences of {shorter} tokens instead of {length}, if your examples allow."),
                shorter=job.sequence_length // 2,
                length=job.sequence_length,
            ),
            replace(job, sequence_length=job.sequence_length // 2),
        )
    if job.kind == JobKind.LORA and job.precision not in QUANTIZED:
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
            replace(job, kind=JobKind.LORA, optimizer=Optimizer.ADAMW),
        )


def _inference_changes(job: Job) -> Iterator[tuple[Text, Job]]:
    if job.concurrent_sequences > 1:
        yield (
            format_lazy(
                _("{fewer} concurrent sequences instead of {count} (--max-num-seqs)."),
                fewer=job.concurrent_sequences // 2,
                count=job.concurrent_sequences,
            ),
            replace(job, concurrent_sequences=job.concurrent_sequences // 2),
        )
    if not job.kv_cache_fp8:
        yield (
            _("A KV cache in fp8 (--kv-cache-dtype fp8): half the cache of 16 bits."),
            replace(job, kv_cache_fp8=True),
        )
    if job.context_length >= SHORTEN_FROM:
        yield (
            format_lazy(
                _("A context of {shorter} tokens instead of {length} (--max-model-len)."),
                shorter=job.context_length // 2,
                length=job.context_length,
            ),
            replace(job, context_length=job.context_length // 2),
        )
    if job.precision not in QUANTIZED:
        yield (
            _(
                "Weights in FP8 (--quantization fp8): half the memory of bf16; check the "
                "quality of the answers on your prompts."
            ),
            replace(job, precision=Precision.FP8),
        )


def changes_for(job: Job) -> Iterator[tuple[Text, Job]]:
    """Changes that lower memory under the job's own stack, the least intrusive first."""
    if job.trains:
        yield from _training_changes(job)
    else:
        yield from _inference_changes(job)

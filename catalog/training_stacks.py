"""The training stacks the advisor knows, each a preset of the settings memory depends on.

A stack is what people actually run: its defaults decide the optimizer's bytes, whether the
loss materialises the logits, what is kept for the backward pass and how several cards share
the work. Every preset names the documentation or code it follows; the customer may override
any setting it fixes.
"""

from dataclasses import dataclass
from enum import StrEnum

from django.utils.translation import gettext_lazy as _
from django_stubs_ext import StrOrPromise


class Stack(StrEnum):
    TRANSFORMERS = "transformers"  # Hugging Face Transformers Trainer, TRL, PEFT
    TORCHTUNE = "torchtune"
    UNSLOTH = "unsloth"
    AXOLOTL = "axolotl"
    DEEPSPEED_ZERO1 = "deepspeed_zero1"
    DEEPSPEED_ZERO2 = "deepspeed_zero2"
    DEEPSPEED_ZERO3 = "deepspeed_zero3"
    FSDP = "fsdp"


class Optimizer(StrEnum):
    ADAMW = "adamw"  # two moments in fp32
    ADAMW_BF16 = "adamw_bf16"  # the moments in the weights' bf16 (torch.optim.AdamW on bf16)
    ADAMW_8BIT = "adamw_8bit"  # bitsandbytes' block-wise 8-bit moments
    PAGED_ADAMW_8BIT = "paged_adamw_8bit"  # the same in CUDA unified memory, paged to the CPU
    CPU_OFFLOAD = "cpu_offload"  # DeepSpeed ZeRO-Offload: moments and master weights on the CPU


class Loss(StrEnum):
    FULL = "full"  # the logits of every token materialised, then upcast to fp32
    CHUNKED = "chunked"  # the output projection and fp32 upcast chunk by chunk
    FUSED = "fused"  # projection and cross-entropy in one kernel: logits never stored


class Sharding(StrEnum):
    NONE = "none"  # one card, or data parallel with a whole replica on each card
    ZERO1 = "zero1"  # optimizer states divided
    ZERO2 = "zero2"  # optimizer states and gradients divided
    FULL = "full"  # FSDP FULL_SHARD, ZeRO-3: weights too
    TENSOR = "tensor"  # inference: weights and KV cache split by heads


# The parts each sharding divides between the cards (catalog.memory.Part.key).
SHARDED_PARTS = {
    Sharding.NONE: frozenset(),
    Sharding.ZERO1: frozenset({"optimizer", "master"}),
    Sharding.ZERO2: frozenset({"optimizer", "master", "gradients"}),
    Sharding.FULL: frozenset({"optimizer", "master", "gradients", "weights", "adapters"}),
    Sharding.TENSOR: frozenset({"weights", "kv_cache"}),
}


@dataclass(frozen=True)
class Source:
    title: str
    url: str


@dataclass(frozen=True)
class Preset:
    """The settings a stack runs with unless told otherwise."""

    name: str
    source: Source
    optimizer_full: Optimizer  # for a full fine-tune
    optimizer_adapters: Optimizer  # for LoRA and QLoRA
    # An fp32 copy of the trained weights next to their 16-bit working copy, and fp32
    # gradients to accumulate into (mixed precision: Trainer with autocast, DeepSpeed).
    master_weights: bool
    loss: Loss
    # Across several cards: the Trainer and axolotl shard with FSDP or DeepSpeed through
    # Accelerate when one card is not enough; Unsloth trains on one card.
    sharding: Sharding
    # PEFT keeps the LoRA weights in fp32 (autocast_adapter_dtype); torchtune in the model's.
    adapters_fp32: bool
    # Each layer's checkpointed input sent to the CPU (Unsloth's "unsloth" checkpointing).
    offload_checkpoints: bool = False
    optimizer_in_backward: bool = False
    packing: bool = False


TRANSFORMERS_DOCS = Source(
    "Hugging Face Transformers, “Trainer” and PEFT",
    "https://huggingface.co/docs/transformers/main/en/trainer",
)
DEEPSPEED_DOCS = Source(
    "DeepSpeed, “Zero Redundancy Optimizer” tutorial",
    "https://www.deepspeed.ai/tutorials/zero/",
)


def _mixed_precision(name: str, source: Source, sharding: Sharding) -> Preset:
    """The Trainer's way, also DeepSpeed's and Accelerate's FSDP: 16-bit weights with an fp32
    master copy, AdamW's moments in fp32, the whole logits, PEFT's fp32 adapters."""
    return Preset(
        name=name,
        source=source,
        optimizer_full=Optimizer.ADAMW,
        optimizer_adapters=Optimizer.ADAMW,
        master_weights=True,
        loss=Loss.FULL,
        sharding=sharding,
        adapters_fp32=True,
    )


PRESETS: dict[Stack, Preset] = {
    Stack.TRANSFORMERS: _mixed_precision(
        "Hugging Face Transformers / TRL", TRANSFORMERS_DOCS, Sharding.FULL
    ),
    Stack.TORCHTUNE: Preset(
        name="torchtune",
        source=Source(
            "torchtune, “Memory optimization overview”",
            "https://pytorch.org/torchtune/main/tutorials/memory_optimizations.html",
        ),
        optimizer_full=Optimizer.ADAMW_BF16,
        optimizer_adapters=Optimizer.ADAMW_BF16,
        master_weights=False,
        loss=Loss.CHUNKED,
        sharding=Sharding.FULL,
        adapters_fp32=False,
        packing=True,
    ),
    Stack.UNSLOTH: Preset(
        name="Unsloth",
        source=Source(
            "Unsloth documentation, “Unsloth Benchmarks”",
            "https://docs.unsloth.ai/basics/unsloth-benchmarks",
        ),
        optimizer_full=Optimizer.ADAMW_8BIT,
        optimizer_adapters=Optimizer.ADAMW_8BIT,
        master_weights=False,
        loss=Loss.FUSED,
        sharding=Sharding.NONE,
        adapters_fp32=True,
        offload_checkpoints=True,
    ),
    Stack.AXOLOTL: Preset(
        name="axolotl",
        source=Source(
            "axolotl documentation, “Config options”",
            "https://docs.axolotl.ai/docs/config-reference.html",
        ),
        optimizer_full=Optimizer.ADAMW_8BIT,
        optimizer_adapters=Optimizer.ADAMW_8BIT,
        master_weights=True,
        loss=Loss.FULL,
        sharding=Sharding.FULL,
        adapters_fp32=True,
        packing=True,
    ),
    Stack.DEEPSPEED_ZERO1: _mixed_precision("DeepSpeed ZeRO-1", DEEPSPEED_DOCS, Sharding.ZERO1),
    Stack.DEEPSPEED_ZERO2: _mixed_precision("DeepSpeed ZeRO-2", DEEPSPEED_DOCS, Sharding.ZERO2),
    Stack.DEEPSPEED_ZERO3: _mixed_precision("DeepSpeed ZeRO-3", DEEPSPEED_DOCS, Sharding.FULL),
    Stack.FSDP: _mixed_precision(
        "PyTorch FSDP (Accelerate)",
        Source(
            "PyTorch, “Getting Started with Fully Sharded Data Parallel (FSDP)”",
            "https://pytorch.org/tutorials/intermediate/FSDP_tutorial.html",
        ),
        Sharding.FULL,
    ),
}

STACK_LABELS: dict[Stack, StrOrPromise] = {
    Stack.TRANSFORMERS: _("Hugging Face Transformers / TRL (Trainer, PEFT)"),
    Stack.TORCHTUNE: _("torchtune"),
    Stack.UNSLOTH: _("Unsloth"),
    Stack.AXOLOTL: _("axolotl"),
    Stack.DEEPSPEED_ZERO1: _("DeepSpeed ZeRO stage 1"),
    Stack.DEEPSPEED_ZERO2: _("DeepSpeed ZeRO stage 2"),
    Stack.DEEPSPEED_ZERO3: _("DeepSpeed ZeRO stage 3"),
    Stack.FSDP: _("PyTorch FSDP (Accelerate, full sharding)"),
}
OPTIMIZER_LABELS: dict[Optimizer, StrOrPromise] = {
    Optimizer.ADAMW: _("AdamW, moments in fp32"),
    Optimizer.ADAMW_BF16: _("AdamW, moments in bf16"),
    Optimizer.ADAMW_8BIT: _("8-bit AdamW (bitsandbytes)"),
    Optimizer.PAGED_ADAMW_8BIT: _("Paged 8-bit AdamW (bitsandbytes)"),
    Optimizer.CPU_OFFLOAD: _("AdamW offloaded to the CPU (ZeRO-Offload)"),
}
LOSS_LABELS: dict[Loss, StrOrPromise] = {
    Loss.FULL: _("Plain cross-entropy: all the logits, upcast to fp32"),
    Loss.CHUNKED: _("Chunked cross-entropy (torchtune)"),
    Loss.FUSED: _("Fused linear cross-entropy (Liger, Cut Cross-Entropy)"),
}
SHARDING_LABELS: dict[Sharding, StrOrPromise] = {
    Sharding.NONE: _("Data parallel: a whole copy on each GPU"),
    Sharding.ZERO1: _("ZeRO-1: optimizer states divided"),
    Sharding.ZERO2: _("ZeRO-2: optimizer states and gradients divided"),
    Sharding.FULL: _("FSDP / ZeRO-3: weights, gradients and states divided"),
    Sharding.TENSOR: _("Tensor parallel (inference): weights and KV cache divided"),
}

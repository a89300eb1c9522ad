"""Peak GPU memory of an inference or fine-tuning job, worked out from the model's architecture.

Pure functions on floats, in GB of 2**30 bytes (what PyTorch and nvidia-smi count). Each part
carries its formula, in the symbols the advisor page explains, and the published source it
follows, so that the answer shows its work.
"""

from dataclasses import dataclass
from enum import StrEnum

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from catalog.llm_models import Architecture

GB = 2**30
# Text in the active language: a string or a lazy translation.
Text = str | Promise
# The CUDA context, cuBLAS workspaces and kernels, per card, outside what tensors hold.
OVERHEAD_FIXED_GB = 1.0
# The caching allocator's fragmentation and temporary buffers, on top of the tensors.
OVERHEAD_SHARE = 0.05
# NF4 stores 4 bits a weight; double quantisation brings its block constants down from
# 0.5 to 0.127 bits a weight (QLoRA paper, section 3).
NF4_BITS = 4 + 0.127
# An inference server fills its cache in prefill chunks of about this many tokens (vLLM's
# chunked prefill), so the working activations do not grow with the whole batch.
PREFILL_TOKENS_MAX = 8192


class JobKind(StrEnum):
    INFERENCE = "inference"
    FULL = "full"
    LORA = "lora"
    QLORA = "qlora"


class Precision(StrEnum):
    FP32 = "fp32"
    BF16 = "bf16"
    FP16 = "fp16"
    INT8 = "int8"
    NF4 = "nf4"


class Optimizer(StrEnum):
    ADAMW = "adamw"
    ADAMW_8BIT = "adamw_8bit"


BYTES_PER_WEIGHT = {
    Precision.FP32: 4.0,
    Precision.BF16: 2.0,
    Precision.FP16: 2.0,
    Precision.INT8: 1.0,
    Precision.NF4: NF4_BITS / 8,
}
QUANTIZED = frozenset({Precision.INT8, Precision.NF4})
# The first is the default of each job. Full fine-tuning updates every weight: it cannot
# hold them quantised. QLoRA is LoRA on NF4 weights; LoRA on 8-bit weights (LLM.int8) is
# its own job.
PRECISIONS = {
    JobKind.INFERENCE: (
        Precision.BF16,
        Precision.FP16,
        Precision.FP32,
        Precision.INT8,
        Precision.NF4,
    ),
    JobKind.FULL: (Precision.BF16, Precision.FP16, Precision.FP32),
    JobKind.LORA: (Precision.BF16, Precision.FP16, Precision.FP32, Precision.INT8),
    JobKind.QLORA: (Precision.NF4,),
}
# Adam keeps two moments a trainable weight: 8 bytes in fp32, 2 in 8-bit (bitsandbytes).
OPTIMIZER_BYTES = {Optimizer.ADAMW: 8, Optimizer.ADAMW_8BIT: 2}


def default_precision(kind: JobKind) -> Precision:
    """bf16, the usual choice; NF4 for QLoRA, its only one."""
    return PRECISIONS[kind][0]


@dataclass(frozen=True)
class Source:
    title: str
    url: str


ANATOMY = Source(
    "Hugging Face, “Model training anatomy”",
    "https://huggingface.co/docs/transformers/model_memory_anatomy",
)
KORTHIKANTI = Source(
    "Korthikanti et al. 2022, “Reducing Activation Recomputation in Large Transformer Models”",
    "https://arxiv.org/abs/2205.05198",
)
QLORA = Source(
    "Dettmers et al. 2023, “QLoRA: Efficient Finetuning of Quantized LLMs”",
    "https://arxiv.org/abs/2305.14314",
)
LORA = Source(
    "Hu et al. 2021, “LoRA: Low-Rank Adaptation of Large Language Models”",
    "https://arxiv.org/abs/2106.09685",
)
PAGED_ATTENTION = Source(
    "Kwon et al. 2023, “Efficient Memory Management for LLM Serving with PagedAttention”",
    "https://arxiv.org/abs/2309.06180",
)
ZERO = Source(
    "Rajbhandari et al. 2020, “ZeRO: Memory Optimizations Toward Training Trillion Parameter "
    "Models”",
    "https://arxiv.org/abs/1910.02054",
)


@dataclass(frozen=True)
class Job:
    model: Architecture
    kind: JobKind
    precision: Precision
    optimizer: Optimizer = Optimizer.ADAMW
    sequence_length: int = 2048
    micro_batch: int = 1
    lora_rank: int = 16
    gradient_checkpointing: bool = True
    context_length: int = 4096
    concurrent_sequences: int = 1

    @property
    def trains(self) -> bool:
        return self.kind != JobKind.INFERENCE

    @property
    def adapts(self) -> bool:
        return self.kind in (JobKind.LORA, JobKind.QLORA)


PART_NAMES = {
    "weights": _("Weights"),
    "adapters": _("LoRA adapters"),
    "gradients": _("Gradients"),
    "optimizer": _("Optimizer states"),
    "activations": _("Activations"),
    "kv_cache": _("KV cache"),
}


@dataclass(frozen=True)
class Part:
    key: str  # weights, adapters, gradients, optimizer, activations, kv_cache
    gb: float
    formula: str
    source: Source
    # Divided among the cards of a sharded job (FSDP/ZeRO-3 shards weights, gradients and
    # optimizer states; tensor parallelism splits weights and the KV cache by heads).
    shards: bool

    @property
    def name(self) -> Text:
        return PART_NAMES[self.key]


@dataclass(frozen=True)
class Estimate:
    job: Job
    parts: tuple[Part, ...]
    trainable_parameters: int

    def gb(self, key: str) -> float:
        return sum(part.gb for part in self.parts if part.key == key)

    def gathered_gb(self, cards: int) -> float:
        """Sharded training (FSDP, ZeRO-3) gathers each layer's whole weights before using
        them, and the next layer's ahead of time (prefetch): two layers live unsharded on
        every card. Tensor-parallel inference keeps its weights split: nothing is gathered."""
        if cards == 1 or not self.job.trains:
            return 0.0
        return 2 * self.gb("weights") / self.job.model.layers

    def load_gb(self, cards: int = 1) -> float:
        """What tensors hold on each of `cards` cards."""
        split = sum(part.gb / cards if part.shards else part.gb for part in self.parts)
        return split + self.gathered_gb(cards)

    def overhead_gb(self, cards: int = 1) -> float:
        return overhead_gb(self.load_gb(cards))

    def per_gpu_gb(self, cards: int) -> float:
        load = self.load_gb(cards)
        return load + overhead_gb(load)

    @property
    def total_gb(self) -> float:
        return self.per_gpu_gb(1)


def overhead_gb(load_gb: float) -> float:
    return OVERHEAD_FIXED_GB + OVERHEAD_SHARE * load_gb


def lora_parameters(model: Architecture, rank: int) -> int:
    """Adapters on every linear layer of each block, as the QLoRA paper found necessary: a
    matrix d_in x d_out gains r·(d_in + d_out) weights (LoRA paper)."""
    h = model.hidden_size
    query = model.attention_heads * model.head_dim
    key_value = model.kv_heads * model.head_dim
    attention = (h + query) + 2 * (h + key_value) + (query + h)
    mlp = model.experts * 3 * (h + model.intermediate_size)
    return rank * model.layers * (attention + mlp)


def _weights(job: Job) -> Part:
    model, size = job.model, BYTES_PER_WEIGHT[job.precision]
    if job.precision in QUANTIZED:
        # Loaders quantise the linear layers only: embeddings and output head stay 16-bit.
        embeddings = model.embedding_parameters
        gb = ((model.parameters - embeddings) * size + embeddings * 2) / GB
        formula = f"(P - E) · {size:.4g} B + E · 2 B"
        source = QLORA if job.precision == Precision.NF4 else ANATOMY
    else:
        gb, formula, source = model.parameters * size / GB, f"P · {size:g} B", ANATOMY
    return Part("weights", gb, formula, source, shards=True)


def _trainable_bytes(job: Job) -> int:
    """Bytes of a trainable weight and of its gradient: fp32 when the job runs in fp32,
    else 16-bit (the QLoRA paper's count of 16-bit fine-tuning: 2 + 2 + 8 bytes)."""
    return 4 if job.precision == Precision.FP32 else 2


def _training_parts(job: Job, trainable: int) -> tuple[Part, ...]:
    width = _trainable_bytes(job)
    symbol = "T" if job.adapts else "P"
    parts: list[Part] = []
    if job.adapts:
        # The adapters themselves, on top of the frozen weights.
        parts.append(Part("adapters", trainable * width / GB, f"T · {width} B", LORA, shards=True))
    optimizer = OPTIMIZER_BYTES[job.optimizer]
    parts += [
        Part("gradients", trainable * width / GB, f"{symbol} · {width} B", ANATOMY, shards=True),
        Part(
            "optimizer",
            trainable * optimizer / GB,
            f"{symbol} · {optimizer} B",
            ZERO if optimizer == 8 else ANATOMY,
            shards=True,
        ),
    ]
    return tuple(parts)


def _layer_activation_factor(model: Architecture) -> int:
    """Korthikanti et al.'s 34 bytes per token and hidden unit of a layer (11 attention,
    19 MLP, 4 norms) when fused attention (PyTorch SDPA, FlashAttention) recomputes the
    scores; a mixture of experts runs the MLP of each active expert."""
    return 15 + 19 * model.active_experts


def layer_activations_gb(job: Job) -> tuple[float, float]:
    """What one layer keeps for the backward pass without recomputation, and with it (its
    input only): Korthikanti et al.'s 34·s·b·h and 2·s·b·h bytes."""
    tokens = job.sequence_length * job.micro_batch
    scale = 2 if job.precision == Precision.FP32 else 1  # fp32 activations are twice as wide
    width = scale * tokens * job.model.hidden_size
    return _layer_activation_factor(job.model) * width / GB, 2 * width / GB


def _activations(job: Job) -> Part:
    model = job.model
    factor = _layer_activation_factor(model)
    if not job.trains:
        scale = 2 if job.precision == Precision.FP32 else 1
        tokens = min(job.context_length * job.concurrent_sequences, PREFILL_TOKENS_MAX)
        width = (
            factor * tokens * model.hidden_size + 4 * job.concurrent_sequences * model.vocabulary
        )
        formula = f"{factor}·t·h + 4·c·V B (t = min(s·c, {PREFILL_TOKENS_MAX}))"
        return Part("activations", scale * width / GB, formula, KORTHIKANTI, shards=False)
    whole_layer, layer_input = layer_activations_gb(job)
    if job.gradient_checkpointing:
        # Each layer keeps its input; one layer at a time is recomputed in full.
        stored = model.layers * layer_input + whole_layer
        formula = f"2·s·b·h·L + {factor}·s·b·h + 8·s·b·V B"
    else:
        stored = model.layers * whole_layer
        formula = f"{factor}·s·b·h·L + 8·s·b·V B"
    # The output logits and their gradient, in fp32 for the loss.
    logits = 8 * job.sequence_length * job.micro_batch * model.vocabulary / GB
    return Part("activations", stored + logits, formula, KORTHIKANTI, shards=False)


def _kv_cache(job: Job) -> Part:
    model = job.model
    width = 4 if job.precision == Precision.FP32 else 2
    tokens = job.context_length * job.concurrent_sequences
    gb = 2 * model.layers * model.kv_heads * model.head_dim * tokens * width / GB
    return Part("kv_cache", gb, f"2·L·n_kv·d_head·s·c · {width} B", PAGED_ATTENTION, True)


def memory_estimate(job: Job) -> Estimate:
    """Every part of the peak memory of `job`, before overhead (Estimate adds it per card)."""
    if job.precision not in PRECISIONS[job.kind]:
        raise ValueError(f"{job.kind} cannot run with {job.precision} weights")
    if not job.trains:
        parts: tuple[Part, ...] = (_weights(job), _activations(job), _kv_cache(job))
        return Estimate(job=job, parts=parts, trainable_parameters=0)
    trainable = lora_parameters(job.model, job.lora_rank) if job.adapts else job.model.parameters
    parts = (_weights(job), *_training_parts(job, trainable), _activations(job))
    return Estimate(job=job, parts=parts, trainable_parameters=trainable)

"""Peak GPU memory of an inference or fine-tuning job, worked out from the model's architecture
and the settings of the stack that runs it (catalog.training_stacks).

Pure functions on floats, in GB of 2**30 bytes (what PyTorch and nvidia-smi count). Each part
carries its formula, in the symbols the advisor page explains, and the published source it
follows, so that the answer shows its work.
"""

from dataclasses import dataclass
from enum import StrEnum

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from catalog.llm_models import Architecture
from catalog.memory_sources import (
    ANATOMY,
    GPTQ,
    KORTHIKANTI,
    KV_FP8,
    LORA,
    LOSS_SOURCES,
    OPTIMIZER_IN_BACKWARD,
    OPTIMIZER_SOURCES,
    PAGED_ATTENTION,
    QLORA,
    ZERO,
    ZERO_OFFLOAD,
    Source,
)
from catalog.training_stacks import SHARDED_PARTS, Loss, Optimizer, Sharding, Stack

GB = 2**30
# Text in the active language: a string or a lazy translation.
Text = str | Promise
# What the driver, the CUDA context and its loaded kernels, cuBLAS and NCCL take on each
# card outside PyTorch's counters (nvidia-smi shows it, torch.cuda.max_memory_reserved
# does not).
CUDA_CONTEXT_GB = 0.75
# Workspaces PyTorch's caching allocator hands out itself (cuBLAS, the scaled-dot-product
# kernels).
WORKSPACE_GB = 0.25
# The caching allocator's fragmentation and temporary buffers, on top of the tensors.
OVERHEAD_SHARE = 0.05
# NF4 stores 4 bits a weight; double quantisation brings its block constants down from
# 0.5 to 0.127 bits a weight (QLoRA paper, section 3).
NF4_BITS = 4 + 0.127
# GPTQ and AWQ: 4 bits a weight, an fp16 scale and a 4-bit zero point per group of 128.
GROUP_4BIT_BITS = 4 + (16 + 4) / 128
# An inference server fills its cache in prefill chunks of about this many tokens (vLLM's
# chunked prefill), so the working activations do not grow with the whole batch.
PREFILL_TOKENS_MAX = 8192
# torchtune's CEWithChunkedOutputLoss: 8 chunks, each upcast to fp32 in turn.
LOSS_CHUNKS = 8


class JobKind(StrEnum):
    INFERENCE = "inference"
    FULL = "full"
    LORA = "lora"
    QLORA = "qlora"


class Precision(StrEnum):
    FP32 = "fp32"
    BF16 = "bf16"
    FP16 = "fp16"
    FP8 = "fp8"
    INT8 = "int8"
    GPTQ = "gptq"
    AWQ = "awq"
    NF4 = "nf4"


BYTES_PER_WEIGHT = {
    Precision.FP32: 4.0,
    Precision.BF16: 2.0,
    Precision.FP16: 2.0,
    Precision.FP8: 1.0,
    Precision.INT8: 1.0,
    Precision.GPTQ: GROUP_4BIT_BITS / 8,
    Precision.AWQ: GROUP_4BIT_BITS / 8,
    Precision.NF4: NF4_BITS / 8,
}
QUANTIZED = frozenset({Precision.FP8, Precision.INT8, Precision.GPTQ, Precision.AWQ, Precision.NF4})
# The first is the default of each job. Full fine-tuning updates every weight: it cannot
# hold them quantised. QLoRA is LoRA on NF4 weights; LoRA on 8-bit (LLM.int8), GPTQ or AWQ
# weights (PEFT supports all three) is LoRA.
PRECISIONS = {
    JobKind.INFERENCE: (
        Precision.BF16,
        Precision.FP16,
        Precision.FP32,
        Precision.FP8,
        Precision.INT8,
        Precision.GPTQ,
        Precision.AWQ,
        Precision.NF4,
    ),
    JobKind.FULL: (Precision.BF16, Precision.FP16, Precision.FP32),
    JobKind.LORA: (
        Precision.BF16,
        Precision.FP16,
        Precision.FP32,
        Precision.INT8,
        Precision.GPTQ,
        Precision.AWQ,
    ),
    JobKind.QLORA: (Precision.NF4,),
}
# Bytes of optimizer state a trainable weight keeps on the card: Adam's two moments.
# Paged states live in CUDA unified memory and are evicted to the CPU when the card is full
# (the QLoRA paper's paged optimizers): PyTorch's counters never see them.
OPTIMIZER_BYTES = {
    Optimizer.ADAMW: 8,
    Optimizer.ADAMW_BF16: 4,
    Optimizer.ADAMW_8BIT: 2,
    Optimizer.PAGED_ADAMW_8BIT: 2,
    Optimizer.CPU_OFFLOAD: 8,
}
OFF_THE_CARD = frozenset({Optimizer.PAGED_ADAMW_8BIT, Optimizer.CPU_OFFLOAD})
LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
ALL_LINEAR = frozenset(LORA_TARGETS)


def default_precision(kind: JobKind) -> Precision:
    """bf16, the usual choice; NF4 for QLoRA, its only one."""
    return PRECISIONS[kind][0]


@dataclass(frozen=True)
class Job:
    model: Architecture
    kind: JobKind
    precision: Precision
    stack: Stack = Stack.TRANSFORMERS
    optimizer: Optimizer = Optimizer.ADAMW
    master_weights: bool = False
    optimizer_in_backward: bool = False
    loss: Loss = Loss.FULL
    sequence_length: int = 2048
    micro_batch: int = 1
    packing: bool = False
    lora_rank: int = 16
    lora_targets: frozenset[str] = ALL_LINEAR
    adapters_fp32: bool = False
    # Embedding and output head trained in full (PEFT's modules_to_save, torchtune's
    # apply_lora_to_output): a trainable copy with its gradients and states.
    trainable_embeddings: bool = False
    gradient_checkpointing: bool = True
    offload_checkpoints: bool = False
    # torch.compile fuses the norms' and the MLP's pointwise work: their inputs are not kept.
    compiled: bool = False
    # Across several cards (inference: NONE keeps a whole replica on each card, anything
    # else is tensor parallelism).
    sharding: Sharding = Sharding.FULL
    # FSDP's CPUOffload(offload_params=True), ZeRO-3's offload_param: weights, gradients and
    # optimizer on the CPU, each layer brought to the card when it runs.
    offload_parameters: bool = False
    gpus: int | None = None  # what the customer asked for; None: the fewest that hold it
    context_length: int = 4096
    concurrent_sequences: int = 1
    kv_cache_fp8: bool = False

    @property
    def trains(self) -> bool:
        return self.kind != JobKind.INFERENCE

    @property
    def adapts(self) -> bool:
        return self.kind in (JobKind.LORA, JobKind.QLORA)

    @property
    def tokens(self) -> int:
        """Tokens of one micro-batch on each card."""
        return self.sequence_length * self.micro_batch

    @property
    def sharded_parts(self) -> frozenset[str]:
        if self.trains:
            return SHARDED_PARTS[self.sharding]
        replicas = self.sharding == Sharding.NONE
        return SHARDED_PARTS[Sharding.NONE if replicas else Sharding.TENSOR]


PART_NAMES = {
    "weights": _("Weights"),
    "adapters": _("LoRA adapters"),
    "master": _("fp32 master weights"),
    "gradients": _("Gradients"),
    "optimizer": _("Optimizer states"),
    "activations": _("Activations"),
    "logits": _("Logits and loss"),
    "kv_cache": _("KV cache"),
}


@dataclass(frozen=True)
class Part:
    key: str  # one of PART_NAMES
    gb: float
    formula: str
    source: Source
    on_gpu: bool = True  # False: held in CPU memory (offloaded or paged), shown, not counted

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

    def gpu_gb(self, key: str) -> float:
        return sum(part.gb for part in self.parts if part.key == key and part.on_gpu)

    def part_gb(self, part: Part, cards: int) -> float:
        """What `part` takes on each of `cards` cards."""
        if not part.on_gpu:
            return 0.0
        return part.gb / cards if part.key in self.job.sharded_parts else part.gb

    def gathered_gb(self, cards: int) -> float:
        """Sharded or offloaded weights are gathered a layer at a time before use, the next
        layer's ahead of time (prefetch): two layers live whole on every card; a full
        fine-tune also holds one layer's whole gradients before they are reduced and
        scattered. Tensor-parallel inference keeps its weights split: nothing is gathered."""
        job = self.job
        sharded = cards > 1 and "weights" in job.sharded_parts
        if not job.trains or not (sharded or job.offload_parameters):
            return 0.0
        layer = self.gb("weights") / job.model.layers
        return (3 if job.kind == JobKind.FULL else 2) * layer

    def load_gb(self, cards: int = 1) -> float:
        """What tensors hold on each of `cards` cards."""
        return sum(self.part_gb(part, cards) for part in self.parts) + self.gathered_gb(cards)

    def overhead_gb(self, cards: int = 1) -> float:
        return overhead_gb(self.load_gb(cards))

    def per_gpu_gb(self, cards: int) -> float:
        """The peak on each card as nvidia-smi shows it: tensors, allocator, CUDA context."""
        load = self.load_gb(cards)
        return load + overhead_gb(load)

    def reserved_gb(self, cards: int) -> float:
        """The peak as torch.cuda.max_memory_reserved() reports it: without the context."""
        return self.per_gpu_gb(cards) - CUDA_CONTEXT_GB

    @property
    def total_gb(self) -> float:
        return self.per_gpu_gb(1)


def overhead_gb(load_gb: float) -> float:
    return CUDA_CONTEXT_GB + WORKSPACE_GB + OVERHEAD_SHARE * load_gb


def lora_parameters(model: Architecture, rank: int, targets: frozenset[str] = ALL_LINEAR) -> int:
    """Adapters on the targeted linear layers of each block: a matrix d_in x d_out gains
    r·(d_in + d_out) weights (LoRA paper); every expert's MLP gets its own."""
    h = model.hidden_size
    query = model.attention_heads * model.head_dim
    key_value = model.kv_heads * model.head_dim
    shapes = {
        "q_proj": h + query,
        "k_proj": h + key_value,
        "v_proj": h + key_value,
        "o_proj": query + h,
        "gate_proj": model.experts * (h + model.intermediate_size),
        "up_proj": model.experts * (h + model.intermediate_size),
        "down_proj": model.experts * (model.intermediate_size + h),
    }
    return rank * model.layers * sum(shapes[target] for target in targets)


def _weights(job: Job) -> Part:
    model, size = job.model, BYTES_PER_WEIGHT[job.precision]
    on_gpu = not (job.trains and job.offload_parameters)
    if job.precision in QUANTIZED:
        # Loaders quantise the linear layers only: embeddings and output head stay 16-bit.
        embeddings = model.embedding_parameters
        gb = ((model.parameters - embeddings) * size + embeddings * 2) / GB
        formula = f"(P - E) · {size:.4g} B + E · 2 B"
        source = {Precision.NF4: QLORA, Precision.GPTQ: GPTQ, Precision.AWQ: GPTQ}.get(
            job.precision, ANATOMY
        )
        return Part("weights", gb, formula, source, on_gpu)
    return Part("weights", model.parameters * size / GB, f"P · {size:g} B", ANATOMY, on_gpu)


def _trainable_width(job: Job) -> int:
    """Bytes of a trainable weight: fp32 when the job runs in fp32 or the stack keeps its
    adapters in fp32 (PEFT), else 16-bit."""
    if job.precision == Precision.FP32 or (job.adapts and job.adapters_fp32):
        return 4
    return 2


def trainable_parameters(job: Job) -> int:
    """Every weight for a full fine-tune; the adapters, and the embedding and output head
    when they are trained too, for LoRA."""
    if not job.adapts:
        return job.model.parameters
    adapters = lora_parameters(job.model, job.lora_rank, job.lora_targets)
    return adapters + (job.model.embedding_parameters if job.trainable_embeddings else 0)


def _gradients(job: Job, trainable: int, symbol: str) -> Part:
    # Mixed precision accumulates gradients in fp32 next to the master weights.
    width = 4 if job.master_weights else _trainable_width(job)
    on_gpu = not job.offload_parameters
    if job.optimizer_in_backward:
        # Each gradient is applied and freed as soon as the backward pass produces it: the
        # largest one, the embedding's (or an MLP matrix's), is the most alive at once.
        hidden = job.model.hidden_size
        largest = hidden * max(job.model.vocabulary, job.model.intermediate_size)
        if job.adapts:
            largest = job.lora_rank * (job.model.hidden_size + job.model.intermediate_size)
        gb = min(largest, trainable) * width / GB
        return Part("gradients", gb, f"max(V·h, ·) · {width} B", OPTIMIZER_IN_BACKWARD, on_gpu)
    return Part("gradients", trainable * width / GB, f"{symbol} · {width} B", ANATOMY, on_gpu)


def _training_parts(job: Job, trainable: int) -> tuple[Part, ...]:
    width = _trainable_width(job)
    symbol = "T" if job.adapts else "P"
    parts: list[Part] = []
    states_on_gpu = job.optimizer not in OFF_THE_CARD and not job.offload_parameters
    if job.adapts:
        # The adapters themselves, on top of the frozen weights.
        parts.append(
            Part(
                "adapters",
                trainable * width / GB,
                f"T · {width} B",
                LORA,
                not job.offload_parameters,
            )
        )
    if job.master_weights and width == 2:
        source = ZERO_OFFLOAD if job.optimizer == Optimizer.CPU_OFFLOAD else ZERO
        parts.append(Part("master", trainable * 4 / GB, f"{symbol} · 4 B", source, states_on_gpu))
    optimizer = OPTIMIZER_BYTES[job.optimizer]
    parts += [
        _gradients(job, trainable, symbol),
        Part(
            "optimizer",
            trainable * optimizer / GB,
            f"{symbol} · {optimizer} B",
            OPTIMIZER_SOURCES[job.optimizer],
            states_on_gpu,
        ),
    ]
    return tuple(parts)


def layer_bytes_per_token(model: Architecture, compiled: bool = False) -> int:
    """What one decoder layer keeps per token for its backward pass in 16 bits, following
    Korthikanti et al.'s count with fused attention (scores recomputed) and a gated MLP:
    the two norms' inputs (4·h), the attention's input, queries, keys, values and output
    (2·h + 4·q + 4·kv), the MLP's input (2·h) and, per active expert, its gate, up,
    activation and product (8·I). Compiled, the norms and the activation-product are fused
    and recomputed: neither the norms' inputs nor the last two MLP tensors are kept."""
    h = model.hidden_size
    query = model.attention_heads * model.head_dim
    key_value = model.kv_heads * model.head_dim
    mlp = (4 if compiled else 8) * model.active_experts * model.intermediate_size
    return (4 if compiled else 8) * h + 4 * query + 4 * key_value + mlp


def layer_activations_gb(job: Job) -> tuple[float, float]:
    """What one layer keeps for the backward pass without recomputation, and with it (its
    input only, 2·t·h bytes)."""
    scale = 2 if job.precision == Precision.FP32 else 1  # fp32 activations are twice as wide
    whole = scale * job.tokens * layer_bytes_per_token(job.model, job.compiled) / GB
    return whole, scale * 2 * job.tokens * job.model.hidden_size / GB


def _activations(job: Job) -> Part:
    model = job.model
    scale = 2 if job.precision == Precision.FP32 else 1
    if not job.trains:
        tokens = min(job.context_length * job.concurrent_sequences, PREFILL_TOKENS_MAX)
        width = (
            tokens * layer_bytes_per_token(model) + 4 * job.concurrent_sequences * model.vocabulary
        )
        formula = f"t·a + 4·c·V B (t = min(s·c, {PREFILL_TOKENS_MAX}))"
        return Part("activations", scale * width / GB, formula, KORTHIKANTI)
    whole_layer, layer_input = layer_activations_gb(job)
    if not job.gradient_checkpointing:
        return Part("activations", model.layers * whole_layer, "a·t·L B", KORTHIKANTI)
    if job.offload_checkpoints:
        # The checkpoints wait in CPU memory; one layer is recomputed on the card at a time.
        return Part("activations", whole_layer, "a·t B (2·t·h·L B on the CPU)", KORTHIKANTI)
    # Each layer keeps its input; one layer at a time is recomputed in full.
    stored = model.layers * layer_input + whole_layer
    return Part("activations", stored, "2·t·h·L + a·t B", KORTHIKANTI)


def _logits(job: Job) -> Part:
    """The output projection and the loss, as the stack computes them."""
    tokens, vocabulary = job.tokens, job.model.vocabulary
    if job.loss == Loss.FULL:
        # bf16 logits, their fp32 upcast, log-softmax, and the gradients of both.
        gb, formula = 16 * tokens * vocabulary / GB, "(2 + 4 + 4 + 4 + 2)·t·V B"
    elif job.loss == Loss.CHUNKED:
        # One chunk at a time is upcast to fp32; what each chunk keeps for the backward pass
        # is its fp32 log-probabilities, or, compiled, its bf16 logits.
        kept = 2 if job.compiled else 4
        gb = (kept + 4 / LOSS_CHUNKS) * tokens * vocabulary / GB
        formula = f"({kept} + 4/{LOSS_CHUNKS})·t·V B"
    else:
        # Liger sizes its chunks so that a chunk's logits are about as large as the hidden
        # states: t·h values in fp32, and their gradient.
        gb, formula = 8 * tokens * job.model.hidden_size / GB, "8·t·h B"
    return Part("logits", gb, formula, LOSS_SOURCES[job.loss])


def _kv_cache(job: Job) -> Part:
    model = job.model
    width = 4 if job.precision == Precision.FP32 else 2
    if job.kv_cache_fp8:
        width = 1
    tokens = job.context_length * job.concurrent_sequences
    gb = 2 * model.layers * model.kv_heads * model.head_dim * tokens * width / GB
    source = KV_FP8 if job.kv_cache_fp8 else PAGED_ATTENTION
    return Part("kv_cache", gb, f"2·L·n_kv·d_head·s·c · {width} B", source)


def memory_estimate(job: Job) -> Estimate:
    """Every part of the peak memory of `job`, before overhead (Estimate adds it per card)."""
    if job.precision not in PRECISIONS[job.kind]:
        raise ValueError(f"{job.kind} cannot run with {job.precision} weights")
    if not job.trains:
        parts: tuple[Part, ...] = (_weights(job), _activations(job), _kv_cache(job))
        return Estimate(job=job, parts=parts, trainable_parameters=0)
    trainable = trainable_parameters(job)
    parts = (_weights(job), *_training_parts(job, trainable), _activations(job), _logits(job))
    return Estimate(job=job, parts=parts, trainable_parameters=trainable)

"""A job as the advisor's page or API describes it, turned into a catalog.memory.Job: the
model (listed, a parameter count or a pasted config.json), the stack's preset and the
customer's overrides. JobError names the field at fault."""

from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from catalog.advisor import GPU_COUNT_MAX
from catalog.llm_models import (
    CUSTOM_PARAMETERS_MAX,
    CUSTOM_PARAMETERS_MIN,
    MODELS,
    Architecture,
    architecture_estimate,
)
from catalog.memory import ALL_LINEAR, LORA_TARGETS, PRECISIONS, Job, JobKind, Precision, Text
from catalog.model_config import ConfigError, architecture_from_config
from catalog.training_stacks import PRESETS, Loss, Optimizer, Sharding, Stack

# The longest sequence any model may be asked for; each model has its own limit below it
# (Qwen2.5 7B Instruct 1M: 1,010,000 tokens).
SEQUENCE_MAX = 1_048_576
MICRO_BATCH_MAX = 1024
CONCURRENT_MAX = 4096
LORA_RANK_MAX = 4096


class JobError(ValueError):
    """A job the advisor cannot estimate, about one field of the request."""

    def __init__(self, field: str, message: Text):
        super().__init__(str(message))
        self.field = field
        self.message = message


def _architecture(
    model: str | None, parameters: int | None, config_json: str | None
) -> Architecture:
    given = [name for name, value in (("model", model), ("parameters", parameters)) if value]
    if config_json:
        given.append("config_json")
    if len(given) > 1:
        raise JobError(
            given[-1],
            _("Give one of: a model from the list, a parameter count or a config.json."),
        )
    if model:
        if model not in MODELS:
            raise JobError("model", _("Unknown model: choose one from the list."))
        return MODELS[model]
    if parameters:
        if not CUSTOM_PARAMETERS_MIN <= parameters <= CUSTOM_PARAMETERS_MAX:
            raise JobError("parameters", _("Give between 10 million and 2 trillion parameters."))
        return architecture_estimate(parameters=parameters)
    if config_json:
        try:
            return architecture_from_config(config_json)
        except ConfigError as error:
            raise JobError("config_json", error.message) from None
    raise JobError(
        "model", _("Choose a model from the list, give a parameter count or a config.json.")
    )


def _length_checked(architecture: Architecture, length: int, field: str) -> None:
    if length > architecture.context_max:
        raise JobError(
            field,
            format_lazy(
                _("{model} accepts at most {limit} tokens; {length} asked."),
                model=architecture.name,
                limit=architecture.context_max,
                length=length,
            ),
        )


def _sharding(kind: JobKind, stack: Stack, sharding: str | None) -> Sharding:
    if kind == JobKind.INFERENCE:
        chosen = Sharding(sharding) if sharding else Sharding.TENSOR
        if chosen not in (Sharding.TENSOR, Sharding.NONE):
            raise JobError("sharding", _("Inference is split by tensor parallelism or replicated."))
        return chosen
    chosen = Sharding(sharding) if sharding else PRESETS[stack].sharding
    if chosen == Sharding.TENSOR:
        raise JobError(
            "sharding", _("Tensor parallelism is offered for inference; train with FSDP or ZeRO.")
        )
    return chosen


def job_build(
    *,
    job: str,
    model: str | None = None,
    parameters: int | None = None,
    config_json: str | None = None,
    precision: str | None = None,
    stack: str = Stack.TRANSFORMERS,
    optimizer: str | None = None,
    master_weights: bool | None = None,
    optimizer_in_backward: bool | None = None,
    loss: str | None = None,
    gradient_checkpointing: bool = True,
    offload_checkpoints: bool | None = None,
    compiled: bool = False,
    packing: bool | None = None,
    sequence_length: int = 2048,
    micro_batch: int = 1,
    lora_rank: int = 16,
    lora_targets: list[str] | None = None,
    trainable_embeddings: bool = False,
    adapters_fp32: bool | None = None,
    gpus: int | None = None,
    sharding: str | None = None,
    offload_parameters: bool = False,
    context_length: int = 4096,
    concurrent_sequences: int = 1,
    kv_cache_fp8: bool = False,
) -> Job:
    """The job described by a form or an API request: the stack's preset where a setting is
    left out (None). Ranges of single fields are checked by the form or serializer; this
    checks the rest."""
    architecture = _architecture(model, parameters, config_json)
    kind, chosen_stack = JobKind(job), Stack(stack)
    preset = PRESETS[chosen_stack]
    chosen = Precision(precision) if precision else PRECISIONS[kind][0]
    if chosen not in PRECISIONS[kind]:
        allowed = ", ".join(PRECISIONS[kind])
        raise JobError(
            "precision",
            format_lazy(_("This job runs with weights in: {allowed}."), allowed=allowed),
        )
    if kind == JobKind.INFERENCE:
        _length_checked(architecture, context_length, "context_length")
    else:
        _length_checked(architecture, sequence_length, "sequence_length")
    if gpus is not None and not 1 <= gpus <= GPU_COUNT_MAX:
        raise JobError("gpus", _("Give between 1 and 64 GPUs."))
    targets = frozenset(lora_targets) if lora_targets is not None else ALL_LINEAR
    if not targets or not targets <= set(LORA_TARGETS):
        raise JobError("lora_targets", _("Choose at least one of the listed modules."))
    adapts = kind in (JobKind.LORA, JobKind.QLORA)
    default_optimizer = preset.optimizer_adapters if adapts else preset.optimizer_full
    offload = preset.offload_checkpoints if offload_checkpoints is None else offload_checkpoints
    if offload and not gradient_checkpointing:
        raise JobError(
            "offload_checkpoints",
            _("Checkpoints can be sent to the CPU only with gradient checkpointing on."),
        )
    return Job(
        model=architecture,
        kind=kind,
        precision=chosen,
        stack=chosen_stack,
        optimizer=Optimizer(optimizer) if optimizer else default_optimizer,
        master_weights=preset.master_weights if master_weights is None else master_weights,
        optimizer_in_backward=(
            preset.optimizer_in_backward if optimizer_in_backward is None else optimizer_in_backward
        ),
        loss=Loss(loss) if loss else preset.loss,
        sequence_length=sequence_length,
        micro_batch=micro_batch,
        packing=preset.packing if packing is None else packing,
        lora_rank=lora_rank,
        lora_targets=targets,
        adapters_fp32=preset.adapters_fp32 if adapters_fp32 is None else adapters_fp32,
        trainable_embeddings=trainable_embeddings,
        gradient_checkpointing=gradient_checkpointing,
        offload_checkpoints=offload,
        compiled=compiled,
        sharding=_sharding(kind, chosen_stack, sharding),
        offload_parameters=offload_parameters,
        gpus=gpus,
        context_length=context_length,
        concurrent_sequences=concurrent_sequences,
        kv_cache_fp8=kv_cache_fp8,
    )

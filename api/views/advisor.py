"""The GPU advisor for a job described by its model (catalog.model_advisor), open to anyone."""

from django.urls import reverse
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.response import Response

from api.views.base import ApiView
from catalog.advisor import GPU_COUNT_MAX
from catalog.advisor_jobs import (
    CONCURRENT_MAX,
    LORA_RANK_MAX,
    MICRO_BATCH_MAX,
    SEQUENCE_MAX,
    JobError,
    job_build,
)
from catalog.llm_models import CUSTOM_PARAMETERS_MAX, CUSTOM_PARAMETERS_MIN, MODELS
from catalog.memory import LORA_TARGETS, PART_NAMES, JobKind, Precision
from catalog.memory_sources import LOSS_SOURCES
from catalog.model_advisor import ESTIMATE_MARGIN, Advice, Plan, advise
from catalog.model_config import CONFIG_CHARS_MAX
from catalog.selectors import gpu_offers
from catalog.templatetags.catalog_format import configure_query
from catalog.training_stacks import Loss, Optimizer, Sharding, Stack

REQUEST_EXAMPLE = {
    "model": "llama-3.1-70b",
    "job": "qlora",
    "sequence_length": 4096,
    "micro_batch": 1,
    "lora_rank": 16,
    "gradient_checkpointing": True,
}
TORCHTUNE_EXAMPLE = {
    "model": "llama-3.1-8b",
    "job": "full",
    "stack": "torchtune",
    "optimizer": "paged_adamw_8bit",
    "optimizer_in_backward": True,
    "compiled": True,
    "sequence_length": 2048,
    "micro_batch": 2,
    "gpus": 1,
}
ZERO3_EXAMPLE = {
    "model": "llama-2-70b",
    "job": "lora",
    "stack": "deepspeed_zero3",
    "lora_rank": 8,
    "lora_targets": ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
    "sequence_length": 2048,
    "micro_batch": 8,
    "packing": True,
    "gpus": 8,
}
CONFIG_EXAMPLE = {
    "config_json": (
        '{"hidden_size": 16384, "num_hidden_layers": 126, "num_attention_heads": 128, '
        '"num_key_value_heads": 8, "intermediate_size": 53248, "vocab_size": 128256, '
        '"max_position_embeddings": 131072}'
    ),
    "job": "qlora",
    "stack": "torchtune",
    "lora_rank": 16,
    "loss": "full",
    "gpus": 8,
}
SERVER_EXAMPLE = {
    "model": "qwen2.5-7b-1m",
    "job": "inference",
    "precision": "awq",
    "context_length": 262144,
    "concurrent_sequences": 4,
    "kv_cache_fp8": True,
    "gpus": 2,
    "sharding": "tensor",
}
# The answer to REQUEST_EXAMPLE on the seeded catalog (explanation and assumptions cut).
RESPONSE_EXAMPLE = {
    "memory_gb": {
        "weights": 37.6,
        "master": 0.0,
        "gradients": 0.8,
        "optimizer": 1.5,
        "activations": 6.3,
        "logits": 7.8,
        "kv_cache": 0.0,
        "gathered": 0.0,
        "overhead": 3.7,
        "total": 57.7,
        "per_gpu": 57.7,
    },
    "explanation": [
        {
            "part": "logits",
            "gb": 7.8,
            "on_gpu": True,
            "per_gpu_gb": 7.8,
            "formula": "(2 + 4 + 4 + 4 + 2)·t·V B",
            "source": LOSS_SOURCES[Loss.FULL].title,
            "source_url": LOSS_SOURCES[Loss.FULL].url,
        }
    ],
    "recommendation": {
        "gpu": "h100-pcie",
        "quantity": 1,
        "term_days": 7,
        "fits_one_host": True,
        "available_units": 8,
        "spare_share": 0.282,
        "margin": 0.15,
        "reason": "About 57.7 GB on each card of 80 GB: 28 % of what the card leaves after its "
        "CUDA context (0.75 GB) stays free, above the margin of 15 % an estimate needs "
        "(published peaks lie within a fifth of it).",
        "term_reason": "7 days: room for an ablation series on Llama 3.1 70B (4096 tokens a step "
        "on each card): rank or learning rate or data mix in turn, each run to a checkpoint you "
        "can compare.",
        "configure_url": "/en/gpus/h100-pcie/configure/?environment=pytorch&quantity=1&term=7",
    },
    "alternatives": [],
    "assumptions": [
        "GB are 2^30 bytes, as PyTorch and nvidia-smi count them.",
        "Each card keeps 15 % of what its CUDA context leaves free: longer inputs, validation "
        "and an estimate's error need the rest.",
    ],
}
ARCHITECTURE_EXAMPLE = {
    "slug": "llama-3.1-70b",
    "name": "Llama 3.1 70B",
    "parameters": 70550000000,
    "layers": 80,
    "hidden_size": 8192,
    "attention_heads": 64,
    "kv_heads": 8,
    "head_dim": 128,
    "intermediate_size": 28672,
    "vocabulary": 128256,
    "tied_embeddings": False,
    "experts": 1,
    "active_experts": 1,
    "context_max": 131072,
}


def _count(maximum: int, default: int, help_text: str) -> serializers.IntegerField:
    return serializers.IntegerField(
        min_value=1, max_value=maximum, default=default, help_text=help_text
    )


def _choice(enum, help_text: str) -> serializers.ChoiceField:
    return serializers.ChoiceField(
        choices=[member.value for member in enum], required=False, help_text=help_text
    )


def _stack_default(help_text: str) -> serializers.BooleanField:
    return serializers.BooleanField(
        required=False, allow_null=True, default=None, help_text=f"{help_text} Null: the stack's."
    )


class AdvisorInputSerializer(serializers.Serializer):
    model = serializers.CharField(
        required=False,
        help_text="A slug of `GET /advisor/models/`; or give `parameters` or `config_json`.",
    )
    parameters = serializers.IntegerField(
        required=False,
        min_value=CUSTOM_PARAMETERS_MIN,
        max_value=CUSTOM_PARAMETERS_MAX,
        help_text="Parameter count of a model not in the list: its architecture is estimated.",
    )
    config_json = serializers.CharField(
        required=False,
        max_length=CONFIG_CHARS_MAX,
        help_text="The model's `config.json` as text: hidden_size, num_hidden_layers, "
        "num_attention_heads, num_key_value_heads, head_dim, intermediate_size, vocab_size, "
        "num_local_experts, max_position_embeddings are read from it (its `text_config` "
        "for a vision-language model).",
    )
    job = serializers.ChoiceField(choices=[kind.value for kind in JobKind])
    precision = _choice(
        Precision,
        "Of the weights. Default `bf16`, `nf4` for `qlora` (which allows only it); `full` "
        "allows `fp32`, `bf16`, `fp16`; `lora` also `int8`, `gptq`, `awq`; inference all.",
    )
    stack = serializers.ChoiceField(
        choices=[stack.value for stack in Stack],
        default=Stack.TRANSFORMERS.value,
        help_text="The training stack whose defaults fill the settings left out.",
    )
    optimizer = _choice(Optimizer, "Default: the stack's (`adamw`: moments in fp32).")
    master_weights = _stack_default("An fp32 master copy and fp32 gradients.")
    optimizer_in_backward = _stack_default("Each weight updated as its gradient is ready.")
    loss = _choice(Loss, "`full` logits upcast to fp32, torchtune's `chunked`, `fused`.")
    sequence_length = _count(SEQUENCE_MAX, 2048, "Training: tokens per sequence.")
    micro_batch = _count(MICRO_BATCH_MAX, 1, "Training: sequences per GPU and step.")
    packing = _stack_default("Packed sequences rather than padded batches.")
    gradient_checkpointing = serializers.BooleanField(default=True)
    offload_checkpoints = _stack_default("Checkpointed activations sent to the CPU.")
    compiled = serializers.BooleanField(default=False, help_text="torch.compile.")
    lora_rank = _count(LORA_RANK_MAX, 16, "LoRA and QLoRA: rank of the adapters.")
    lora_targets = serializers.ListField(
        child=serializers.ChoiceField(choices=list(LORA_TARGETS)),
        required=False,
        max_length=len(LORA_TARGETS),
        help_text="LoRA and QLoRA: the linear layers adapted. Default: all seven.",
    )
    trainable_embeddings = serializers.BooleanField(
        default=False, help_text="LoRA: embedding and output head trained in full too."
    )
    adapters_fp32 = _stack_default("LoRA weights kept in fp32 (PEFT does).")
    gpus = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=GPU_COUNT_MAX,
        help_text="How many GPUs the job runs on. Default: the fewest that hold it.",
    )
    sharding = _choice(
        Sharding,
        "Training: `none` (data parallel), `zero1`, `zero2`, `full` (FSDP, ZeRO-3); "
        "inference: `tensor` (default) or `none` (replicas). Default: the stack's.",
    )
    offload_parameters = serializers.BooleanField(
        default=False, help_text="FSDP or ZeRO-3 CPU offload of weights, gradients, states."
    )
    context_length = _count(SEQUENCE_MAX, 4096, "Inference: max_model_len, in tokens.")
    concurrent_sequences = _count(CONCURRENT_MAX, 1, "Inference: sequences served at once.")
    kv_cache_fp8 = serializers.BooleanField(default=False, help_text="Inference: fp8 KV cache.")

    class Meta:
        ref_name = "AdvisorRequest"

    def validate(self, attrs):
        settings = {key: value for key, value in attrs.items() if value is not None}
        try:
            attrs["job_spec"] = job_build(**settings)
        except JobError as error:
            raise serializers.ValidationError({error.field: [str(error.message)]}) from None
        return attrs


class MemorySerializer(serializers.Serializer):
    """What each part holds on the card for the whole job (parts offloaded to the CPU or
    paged out count 0 here; the explanation gives their size)."""

    weights = serializers.FloatField(help_text="Including LoRA adapters.")
    master = serializers.FloatField(help_text="fp32 master weights of mixed precision.")
    gradients = serializers.FloatField()
    optimizer = serializers.FloatField()
    activations = serializers.FloatField()
    logits = serializers.FloatField(help_text="Output logits and the loss, as the stack does.")
    kv_cache = serializers.FloatField()
    gathered = serializers.FloatField(
        help_text="Whole layers gathered from sharded or offloaded weights."
    )
    overhead = serializers.FloatField(help_text="CUDA context, workspaces, fragmentation.")
    total = serializers.FloatField(help_text="The whole job on one card.")
    per_gpu = serializers.FloatField(help_text="On each card of the recommendation.")

    class Meta:
        ref_name = "AdvisorMemory"


class PartSerializer(serializers.Serializer):
    part = serializers.ChoiceField(choices=list(PART_NAMES))
    gb = serializers.FloatField(help_text="The whole part, wherever it lives.")
    on_gpu = serializers.BooleanField(help_text="False: in CPU memory (offloaded or paged).")
    per_gpu_gb = serializers.FloatField(help_text="What it takes on each recommended card.")
    formula = serializers.CharField(
        help_text="In bytes: P parameters, T adapter weights, E embedding weights, L layers, "
        "h hidden size, s sequence length, b micro-batch, c concurrent sequences, V vocabulary."
    )
    source = serializers.CharField()  # type: ignore[assignment]  # the field, not Field.source
    source_url = serializers.URLField()

    class Meta:
        ref_name = "AdvisorPart"


class RecommendationSerializer(serializers.Serializer):
    gpu = serializers.SlugField()
    quantity = serializers.IntegerField()
    term_days = serializers.IntegerField(help_text="3, 7 or 30.")
    fits_one_host = serializers.BooleanField(
        help_text="Whether one machine has that many cards free now."
    )
    available_units = serializers.IntegerField()
    spare_share = serializers.FloatField(
        help_text="Share of the card left free after its CUDA context; at least `margin`."
    )
    margin = serializers.FloatField(help_text=f"{ESTIMATE_MARGIN}: the margin an estimate keeps.")
    reason = serializers.CharField()
    term_reason = serializers.CharField(help_text="Why this term, from the job.")
    configure_url = serializers.CharField(help_text="The configurator, prefilled.")

    class Meta:
        ref_name = "AdvisorRecommendation"


class AlternativeSerializer(serializers.Serializer):
    change = serializers.CharField(help_text="What to change in the job.")
    gpu = serializers.SlugField()
    quantity = serializers.IntegerField()
    per_gpu_gb = serializers.FloatField()
    configure_url = serializers.CharField()

    class Meta:
        ref_name = "AdvisorAlternative"


class AdvisorOutputSerializer(serializers.Serializer):
    memory_gb = MemorySerializer()
    explanation = PartSerializer(many=True, help_text="Each part with its formula and source.")
    recommendation = RecommendationSerializer(
        allow_null=True, help_text="Null when no GPU on sale holds the job."
    )
    alternatives = AlternativeSerializer(many=True, help_text="At most one cheaper change.")
    assumptions = serializers.ListField(child=serializers.CharField())

    class Meta:
        ref_name = "Advice"


PARTS = ("master", "gradients", "optimizer", "activations", "logits", "kv_cache")


def _gb(value: float) -> float:
    return round(value, 1)


def _configure_url(plan: Plan, term_days: int) -> str:
    assert plan.gpu is not None
    query = configure_query(quantity=plan.quantity, term=term_days)
    return reverse("orders:configure", args=[plan.gpu.slug]) + query


def _advice_body(advice: Advice) -> dict:
    plan, estimate = advice.plan, advice.plan.estimate
    cards = max(plan.quantity, 1)
    body: dict = {
        "memory_gb": {
            "weights": _gb(estimate.gpu_gb("weights") + estimate.gpu_gb("adapters")),
            **{key: _gb(estimate.gpu_gb(key)) for key in PARTS},
            "gathered": _gb(estimate.gathered_gb(1)),
            "overhead": _gb(estimate.overhead_gb()),
            "total": _gb(estimate.total_gb),
            "per_gpu": _gb(estimate.per_gpu_gb(cards)),
        },
        "explanation": [
            {
                "part": part.key,
                "gb": _gb(part.gb),
                "on_gpu": part.on_gpu,
                "per_gpu_gb": _gb(estimate.part_gb(part, cards)),
                "formula": part.formula,
                "source": part.source.title,
                "source_url": part.source.url,
            }
            for part in estimate.parts
        ],
        "recommendation": None,
        "alternatives": [],
        "assumptions": [str(assumption) for assumption in advice.assumptions],
    }
    if plan.gpu is not None:
        body["recommendation"] = {
            "gpu": plan.gpu.slug,
            "quantity": plan.quantity,
            "term_days": advice.term_days,
            "fits_one_host": plan.fits_one_host,
            "available_units": plan.gpu.available_units,
            "spare_share": round(plan.spare_share, 3),
            "margin": ESTIMATE_MARGIN,
            "reason": str(plan.reason),
            "term_reason": str(advice.term_reason),
            "configure_url": _configure_url(plan, advice.term_days),
        }
    other = advice.alternative.plan if advice.alternative is not None else None
    if advice.alternative is not None and other is not None and other.gpu is not None:
        body["alternatives"].append(
            {
                "change": str(advice.alternative.change),
                "gpu": other.gpu.slug,
                "quantity": other.quantity,
                "per_gpu_gb": _gb(other.per_gpu_gb),
                "configure_url": _configure_url(other, advice.term_days),
            }
        )
    return body


class AdvisorApi(ApiView):
    # Public, like the pages: a visitor asks before having an account. Throttled per IP.
    permission_classes = [AllowAny]

    @extend_schema(
        operation_id="advisor_create",
        summary="Which GPUs for a model and a job",
        description=(
            "Estimates the peak GPU memory of inference, full fine-tuning, LoRA or QLoRA of a "
            "listed model (`model`), a parameter count (`parameters`) or a pasted "
            "`config_json`, part by part and per GPU, as the training `stack` runs it (its "
            "defaults for every setting left out), and names the GPUs on sale that hold it "
            "with a 15 % margin of what their CUDA context leaves, with a term that follows "
            "from the job and a prefilled configurator link. No API key needed. Errors name "
            "the field (`fields.model`, `fields.config_json`, `fields.gpus`, "
            "`fields.sequence_length`…)."
        ),
        request=AdvisorInputSerializer,
        responses={200: AdvisorOutputSerializer},
        examples=[
            OpenApiExample("70B, QLoRA, 4k tokens", value=REQUEST_EXAMPLE, request_only=True),
            OpenApiExample(
                "torchtune, full fine-tune of 8B on one GPU",
                value=TORCHTUNE_EXAMPLE,
                request_only=True,
            ),
            OpenApiExample(
                "DeepSpeed ZeRO-3, LoRA of Llama 2 70B on 8 GPUs",
                value=ZERO3_EXAMPLE,
                request_only=True,
            ),
            OpenApiExample(
                "A model by its config.json (Llama 3.1 405B), QLoRA on 8 GPUs",
                value=CONFIG_EXAMPLE,
                request_only=True,
            ),
            OpenApiExample(
                "Serving AWQ weights at 256k tokens, fp8 KV cache, tensor parallel on 2 GPUs",
                value=SERVER_EXAMPLE,
                request_only=True,
            ),
            OpenApiExample("Advice", value=RESPONSE_EXAMPLE, response_only=True),
        ],
        auth=[],
        tags=["advisor"],
    )
    def post(self, request):
        serializer = AdvisorInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        advice = advise(job=serializer.validated_data["job_spec"], offers=gpu_offers())
        return Response(AdvisorOutputSerializer(_advice_body(advice)).data)


class AdvisorModelListApi(ApiView):
    permission_classes = [AllowAny]

    class OutputSerializer(serializers.Serializer):
        slug = serializers.CharField(help_text="`llama-3.1-70b`: letters, digits, `-` and `.`.")
        name = serializers.CharField()
        parameters = serializers.IntegerField()
        layers = serializers.IntegerField()
        hidden_size = serializers.IntegerField()
        attention_heads = serializers.IntegerField()
        kv_heads = serializers.IntegerField()
        head_dim = serializers.IntegerField()
        intermediate_size = serializers.IntegerField()
        vocabulary = serializers.IntegerField()
        tied_embeddings = serializers.BooleanField()
        experts = serializers.IntegerField(help_text="Mixture of experts: experts per layer.")
        active_experts = serializers.IntegerField(help_text="Experts each token uses.")
        context_max = serializers.IntegerField(help_text="The longest sequence it accepts.")

        class Meta:
            ref_name = "AdvisorModel"

    @extend_schema(
        operation_id="advisor_models_list",
        summary="The models the advisor knows",
        description=(
            "Open models with the architecture numbers of their `config.json`: use a `slug` "
            "as `model` in `POST /advisor/`."
        ),
        responses=OutputSerializer(many=True),
        examples=[OpenApiExample("Llama 3.1 70B", value=ARCHITECTURE_EXAMPLE, response_only=True)],
        auth=[],
        tags=["advisor"],
    )
    def get(self, request):
        return Response(self.OutputSerializer(MODELS.values(), many=True).data)

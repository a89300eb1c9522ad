"""The GPU advisor for a job described by its model (catalog.model_advisor), open to anyone."""

from django.urls import reverse
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.response import Response

from api.views.base import ApiView
from catalog.llm_models import CUSTOM_PARAMETERS_MAX, CUSTOM_PARAMETERS_MIN, MODELS
from catalog.memory import JobKind, Optimizer, Precision
from catalog.model_advisor import (
    CONCURRENT_MAX,
    LORA_RANK_MAX,
    MICRO_BATCH_MAX,
    SEQUENCE_MAX,
    Advice,
    JobError,
    Plan,
    advise,
    job_build,
)
from catalog.selectors import gpu_offers
from catalog.templatetags.catalog_format import configure_query

REQUEST_EXAMPLE = {
    "model": "llama-3.1-70b",
    "job": "qlora",
    "sequence_length": 4096,
    "micro_batch": 1,
    "lora_rank": 16,
    "gradient_checkpointing": True,
}
RESPONSE_EXAMPLE = {
    "memory_gb": {
        "weights": 37.2,
        "gradients": 0.4,
        "optimizer": 1.5,
        "activations": 10.0,
        "kv_cache": 0.0,
        "overhead": 3.5,
        "total": 52.5,
        "per_gpu": 52.5,
    },
    "explanation": [
        {
            "part": "activations",
            "gb": 10.0,
            "formula": "2·s·b·h·L + 34·s·b·h + 8·s·b·V B",
            "source": "Korthikanti et al. 2022, “Reducing Activation Recomputation in Large "
            "Transformer Models”",
            "source_url": "https://arxiv.org/abs/2205.05198",
        }
    ],
    "recommendation": {
        "gpu": "a100-80gb",
        "quantity": 1,
        "term_days": 7,
        "fits_one_host": True,
        "available_units": 16,
        "configure_url": "/en/gpus/a100-80gb/configure/?environment=pytorch&quantity=1&term=7",
    },
    "alternatives": [
        {
            "change": "Sequences of 2048 tokens instead of 4096, if your examples allow.",
            "gpu": "rtx-a6000",
            "quantity": 1,
            "per_gpu_gb": 42.4,
            "configure_url": "/en/gpus/rtx-a6000/configure/?environment=pytorch&quantity=1&term=7",
        }
    ],
    "assumptions": ["GB are 2^30 bytes, as PyTorch and nvidia-smi count them."],
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
}


def _count(maximum: int, default: int, help_text: str) -> serializers.IntegerField:
    return serializers.IntegerField(
        min_value=1, max_value=maximum, default=default, help_text=help_text
    )


class AdvisorInputSerializer(serializers.Serializer):
    model = serializers.CharField(
        required=False, help_text="A slug of `GET /advisor/models/`; or give `parameters`."
    )
    parameters = serializers.IntegerField(
        required=False,
        min_value=CUSTOM_PARAMETERS_MIN,
        max_value=CUSTOM_PARAMETERS_MAX,
        help_text="Parameter count of a model not in the list: its architecture is estimated.",
    )
    job = serializers.ChoiceField(choices=[kind.value for kind in JobKind])
    precision = serializers.ChoiceField(
        choices=[precision.value for precision in Precision],
        required=False,
        help_text="Of the weights. Default `bf16`, `nf4` for `qlora` (which allows only it); "
        "`full` allows `fp32`, `bf16`, `fp16`; `lora` also `int8`.",
    )
    optimizer = serializers.ChoiceField(
        choices=[optimizer.value for optimizer in Optimizer], default=Optimizer.ADAMW.value
    )
    sequence_length = _count(SEQUENCE_MAX, 2048, "Training: tokens per sequence.")
    micro_batch = _count(MICRO_BATCH_MAX, 1, "Training: sequences per GPU and step.")
    lora_rank = _count(LORA_RANK_MAX, 16, "LoRA and QLoRA: rank of the adapters.")
    gradient_checkpointing = serializers.BooleanField(default=True)
    context_length = _count(SEQUENCE_MAX, 4096, "Inference: tokens per sequence.")
    concurrent_sequences = _count(CONCURRENT_MAX, 1, "Inference: sequences served at once.")

    class Meta:
        ref_name = "AdvisorRequest"

    def validate(self, attrs):
        try:
            attrs["job_spec"] = job_build(**attrs)
        except JobError as error:
            raise serializers.ValidationError({error.field: [str(error.message)]}) from None
        return attrs


class MemorySerializer(serializers.Serializer):
    weights = serializers.FloatField(help_text="Including LoRA adapters.")
    gradients = serializers.FloatField()
    optimizer = serializers.FloatField()
    activations = serializers.FloatField()
    kv_cache = serializers.FloatField()
    overhead = serializers.FloatField()
    total = serializers.FloatField(help_text="The whole job on one card.")
    per_gpu = serializers.FloatField(help_text="On each card of the recommendation.")

    class Meta:
        ref_name = "AdvisorMemory"


class PartSerializer(serializers.Serializer):
    part = serializers.CharField(
        help_text="`weights`, `adapters`, `gradients`, `optimizer`, `activations` or `kv_cache`."
    )
    gb = serializers.FloatField()
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


PARTS = ("gradients", "optimizer", "activations", "kv_cache")


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
            "weights": _gb(estimate.gb("weights") + estimate.gb("adapters")),
            **{key: _gb(estimate.gb(key)) for key in PARTS},
            "overhead": _gb(estimate.overhead_gb()),
            "total": _gb(estimate.total_gb),
            "per_gpu": _gb(estimate.per_gpu_gb(cards)),
        },
        "explanation": [
            {
                "part": part.key,
                "gb": _gb(part.gb),
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
            "listed model (`model`) or of a parameter count (`parameters`), part by part, and "
            "names the fewest GPUs on sale that hold it with 10 % headroom, with a term and a "
            "prefilled configurator link. No API key needed. Errors name the field "
            "(`fields.model`, `fields.sequence_length`, `fields.lora_rank`…)."
        ),
        request=AdvisorInputSerializer,
        responses={200: AdvisorOutputSerializer},
        examples=[
            OpenApiExample("70B, QLoRA, 4k tokens", value=REQUEST_EXAMPLE, request_only=True),
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

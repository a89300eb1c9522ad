import re
from decimal import Decimal

from django import forms
from django.utils.translation import gettext_lazy as _
from django_stubs_ext import StrOrPromise

from catalog.advisor import GPU_COUNT_MAX, PEAK_MAX_GB
from catalog.advisor_jobs import (
    CONCURRENT_MAX,
    LORA_RANK_MAX,
    MICRO_BATCH_MAX,
    SEQUENCE_MAX,
    JobError,
    job_build,
)
from catalog.llm_models import MODELS
from catalog.memory import LORA_TARGETS, JobKind, Precision
from catalog.model_config import CONFIG_CHARS_MAX
from catalog.training_stacks import (
    LOSS_LABELS,
    OPTIMIZER_LABELS,
    SHARDING_LABELS,
    STACK_LABELS,
    Stack,
)

# HTML's "valid floating-point number": what a number box may hold.
HTML_NUMBER = re.compile(r"-?(\d+(\.\d+)?|\.\d+)([eE][-+]?\d+)?")


class NumberInput(forms.NumberInput):
    """A number box that shows back what was typed even when it is not a number ("deux"),
    next to its error: as a text box then, since a number box may only hold a number."""

    def get_context(self, name, value, attrs):
        context = super().get_context(name, value, attrs)
        widget = context["widget"]
        if widget["value"] is not None and not HTML_NUMBER.fullmatch(str(widget["value"])):
            widget["type"] = "text"
            for number_only in ("min", "max", "step"):
                widget["attrs"].pop(number_only, None)
        return context


YES_NO = [("yes", _("Yes")), ("no", _("No"))]


def _is_yes(value: str) -> bool:
    return value == "yes"


JOB_CHOICES = [
    (JobKind.INFERENCE, _("Inference (serving the model)")),
    (JobKind.FULL, _("Full fine-tuning (every weight trained)")),
    (JobKind.LORA, _("LoRA (low-rank adapters on frozen weights)")),
    (JobKind.QLORA, _("QLoRA (LoRA on 4-bit NF4 weights, double quantisation)")),
]
PRECISION_CHOICES = [("", _("The usual one for the job"))] + [
    (precision, precision.name.lower()) for precision in Precision
]
STACK_DEFAULT = ("", _("The stack's default"))
OPTIMIZER_CHOICES = [STACK_DEFAULT, *OPTIMIZER_LABELS.items()]
LOSS_CHOICES = [STACK_DEFAULT, *LOSS_LABELS.items()]
SHARDING_CHOICES = [STACK_DEFAULT, *SHARDING_LABELS.items()]
DEFAULT_YES_NO = [STACK_DEFAULT, *YES_NO]


def _is_yes_or_default(value: str) -> bool | None:
    return None if value == "" else value == "yes"


def _yes_no(label, initial: str = "no") -> forms.TypedChoiceField:
    """Yes or no; left out (a link from before the field existed) reads as `initial`."""
    return forms.TypedChoiceField(
        label=label,
        choices=YES_NO,
        coerce=_is_yes,
        empty_value=initial == "yes",  # type: ignore[arg-type]  # any value, stubs say str
        required=False,
        widget=forms.RadioSelect,
        initial=initial,
    )


def _stack_yes_no(label) -> forms.TypedChoiceField:
    """Yes, no, or what the stack does (None)."""
    return forms.TypedChoiceField(
        label=label,
        choices=DEFAULT_YES_NO,
        coerce=_is_yes_or_default,
        empty_value=None,
        required=False,
        widget=forms.RadioSelect,
        initial="",
    )


def _count_field(label, initial: int, maximum: int) -> forms.IntegerField:
    return forms.IntegerField(
        label=label,
        min_value=1,
        max_value=maximum,
        initial=initial,
        widget=NumberInput(attrs={"inputmode": "numeric"}),
    )


class AdvisorForm(forms.Form):
    peak_memory_gb = forms.DecimalField(
        label=_("Peak memory measured on one GPU (GB)"),
        help_text=_(
            "The highest value of torch.cuda.max_memory_allocated() over a few complete "
            "training steps, validation included."
        ),
        min_value=Decimal("0.1"),
        max_value=PEAK_MAX_GB,
        max_digits=7,
        decimal_places=1,
        widget=NumberInput(attrs={"step": "0.1", "inputmode": "decimal"}),
    )
    gpu_count = forms.IntegerField(
        label=_("Number of GPUs"),
        min_value=1,
        max_value=GPU_COUNT_MAX,
        initial=1,
        widget=NumberInput(attrs={"inputmode": "numeric"}),
    )
    frequent_exchange = forms.TypedChoiceField(
        label=_("Do your GPUs exchange data frequently (gradients or activations every step)?"),
        choices=YES_NO,
        coerce=_is_yes,
        widget=forms.RadioSelect,
        initial="no",
    )
    shortening_distorts = forms.TypedChoiceField(
        label=_("Would shortening your examples distort your protocol?"),
        choices=YES_NO,
        coerce=_is_yes,
        widget=forms.RadioSelect,
        initial="no",
    )


def _model_choices() -> list[tuple[str, StrOrPromise]]:
    return [("", _("Another model: give its parameter count"))] + [
        (model.slug, model.name) for model in MODELS.values()
    ]


class ModelAdvisorForm(forms.Form):
    """A job described by its model and settings (catalog.advisor_jobs.job_build)."""

    model = forms.ChoiceField(label=_("Model"), choices=_model_choices, required=False)
    parameters_billions = forms.DecimalField(
        label=_("Parameters of another model (billions)"),
        help_text=_("Its architecture is then estimated from this count."),
        required=False,
        min_value=Decimal("0.01"),
        max_value=2000,
        max_digits=7,
        decimal_places=3,
        widget=NumberInput(attrs={"step": "0.001", "inputmode": "decimal"}),
    )
    config_json = forms.CharField(
        label=_("Or its config.json"),
        help_text=_(
            "Pasted from the model's page on the Hugging Face Hub: layers, sizes, heads and "
            "vocabulary are read from it."
        ),
        required=False,
        max_length=CONFIG_CHARS_MAX,
        widget=forms.Textarea(attrs={"rows": 4, "spellcheck": "false"}),
    )
    job = forms.ChoiceField(
        label=_("Kind of job"),
        choices=JOB_CHOICES,
        widget=forms.RadioSelect,
        initial=JobKind.QLORA,
    )
    precision = forms.ChoiceField(
        label=_("Precision of the weights"),
        choices=PRECISION_CHOICES,
        required=False,
        help_text=_("By default bf16, and 4-bit NF4 for QLoRA; GPTQ, AWQ and FP8 for serving."),
    )
    stack = forms.ChoiceField(
        label=_("Training stack"),
        choices=list(STACK_LABELS.items()),
        initial=Stack.TRANSFORMERS,
        required=False,
        help_text=_("Its defaults fill the settings below that you leave on “the stack's”."),
    )
    optimizer = forms.ChoiceField(label=_("Optimizer"), choices=OPTIMIZER_CHOICES, required=False)
    master_weights = _stack_yes_no(_("fp32 master weights (mixed precision)"))
    optimizer_in_backward = _stack_yes_no(_("Optimizer step in the backward pass"))
    loss = forms.ChoiceField(label=_("Loss"), choices=LOSS_CHOICES, required=False)
    sequence_length = _count_field(_("Sequence length (tokens)"), 2048, SEQUENCE_MAX)
    micro_batch = _count_field(_("Micro-batch size (sequences per GPU)"), 1, MICRO_BATCH_MAX)
    packing = _stack_yes_no(_("Packed sequences (rather than padded)"))
    gradient_checkpointing = _yes_no(
        _("Gradient checkpointing (activation recomputation)"), initial="yes"
    )
    offload_checkpoints = _stack_yes_no(_("Checkpointed activations sent to the CPU"))
    compiled = _yes_no(_("torch.compile"))
    lora_rank = _count_field(_("LoRA rank"), 16, LORA_RANK_MAX)
    lora_targets = forms.MultipleChoiceField(
        label=_("LoRA target modules"),
        choices=[(target, target) for target in LORA_TARGETS],
        initial=list(LORA_TARGETS),
        required=False,
        widget=forms.CheckboxSelectMultiple,
    )
    trainable_embeddings = _yes_no(_("Embedding and output head trained too"))
    adapters_fp32 = _stack_yes_no(_("Adapters kept in fp32"))
    gpus = forms.IntegerField(
        label=_("Number of GPUs"),
        help_text=_("Leave empty for the fewest that hold the job."),
        required=False,
        min_value=1,
        max_value=GPU_COUNT_MAX,
        widget=NumberInput(attrs={"inputmode": "numeric"}),
    )
    sharding = forms.ChoiceField(
        label=_("Sharding across the GPUs"), choices=SHARDING_CHOICES, required=False
    )
    offload_parameters = _yes_no(_("Weights, gradients and optimizer offloaded to the CPU"))
    context_length = _count_field(_("Context length (tokens)"), 4096, SEQUENCE_MAX)
    concurrent_sequences = _count_field(_("Concurrent sequences"), 1, CONCURRENT_MAX)
    kv_cache_fp8 = _yes_no(_("KV cache in fp8"))

    # The fieldsets of the page, by the fields they group.
    FIELDSETS = (
        (_("Model"), ("model", "parameters_billions", "config_json")),
        (_("Job"), ("job", "precision", "stack")),
        (
            _("Training"),
            (
                "sequence_length",
                "micro_batch",
                "packing",
                "gradient_checkpointing",
                "offload_checkpoints",
                "compiled",
                "loss",
            ),
        ),
        (_("Optimizer"), ("optimizer", "master_weights", "optimizer_in_backward")),
        (
            _("LoRA"),
            ("lora_rank", "lora_targets", "trainable_embeddings", "adapters_fp32"),
        ),
        (_("GPUs"), ("gpus", "sharding", "offload_parameters")),
        (_("Inference server"), ("context_length", "concurrent_sequences", "kv_cache_fp8")),
    )

    def __init__(self, data=None, *args, **kwargs):
        # A request that names no LoRA target means all of them: show them ticked.
        if data is not None and not data.getlist("lora_targets"):
            data = data.copy()
            data.setlist("lora_targets", list(LORA_TARGETS))
        super().__init__(data, *args, **kwargs)

    def fieldsets(self):
        return [(legend, [self[name] for name in names]) for legend, names in self.FIELDSETS]

    def clean(self):
        data = super().clean()
        if data is None or self.errors:
            return data
        billions = data.pop("parameters_billions")
        # Left out: the stack's default.
        settings = {key: value for key, value in data.items() if value not in ("", None)}
        try:
            data["job_spec"] = job_build(
                **settings, parameters=int(billions * 10**9) if billions else None
            )
        except JobError as error:
            field = "parameters_billions" if error.field == "parameters" else error.field
            self.add_error(field, str(error.message))
        return data

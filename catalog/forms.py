import re
from decimal import Decimal

from django import forms
from django.utils.translation import gettext_lazy as _
from django_stubs_ext import StrOrPromise

from catalog.advisor import GPU_COUNT_MAX, PEAK_MAX_GB
from catalog.llm_models import MODELS
from catalog.memory import JobKind, Optimizer, Precision
from catalog.model_advisor import (
    CONCURRENT_MAX,
    LORA_RANK_MAX,
    MICRO_BATCH_MAX,
    SEQUENCE_MAX,
    JobError,
    job_build,
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
OPTIMIZER_CHOICES = [
    (Optimizer.ADAMW, _("AdamW (moments in fp32)")),
    (Optimizer.ADAMW_8BIT, _("8-bit AdamW (bitsandbytes)")),
]


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
    """A job described by its model and settings (catalog.model_advisor.job_build)."""

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
        help_text=_("By default bf16, and 4-bit NF4 for QLoRA."),
    )
    optimizer = forms.ChoiceField(
        label=_("Optimizer (full fine-tuning)"),
        choices=OPTIMIZER_CHOICES,
        widget=forms.RadioSelect,
        initial=Optimizer.ADAMW,
    )
    sequence_length = _count_field(_("Sequence length (tokens)"), 2048, SEQUENCE_MAX)
    micro_batch = _count_field(_("Micro-batch size (sequences per GPU)"), 1, MICRO_BATCH_MAX)
    lora_rank = _count_field(_("LoRA rank"), 16, LORA_RANK_MAX)
    gradient_checkpointing = forms.TypedChoiceField(
        label=_("Gradient checkpointing (activation recomputation)"),
        choices=YES_NO,
        coerce=_is_yes,
        widget=forms.RadioSelect,
        initial="yes",
    )
    context_length = _count_field(_("Context length (tokens)"), 4096, SEQUENCE_MAX)
    concurrent_sequences = _count_field(_("Concurrent sequences"), 1, CONCURRENT_MAX)

    # The fieldsets of the page, by the fields they group.
    FIELDSETS = (
        (_("Model"), ("model", "parameters_billions")),
        (_("Job"), ("job", "precision")),
        (_("Training"), ("sequence_length", "micro_batch", "gradient_checkpointing")),
        (_("Fine-tuning"), ("optimizer", "lora_rank")),
        (_("Inference"), ("context_length", "concurrent_sequences")),
    )

    def fieldsets(self):
        return [(legend, [self[name] for name in names]) for legend, names in self.FIELDSETS]

    def clean(self):
        data = super().clean()
        if data is None or self.errors:
            return data
        billions = data.pop("parameters_billions")
        try:
            data["job_spec"] = job_build(
                **data, parameters=int(billions * 10**9) if billions else None
            )
        except JobError as error:
            field = "parameters_billions" if error.field == "parameters" else error.field
            self.add_error(field, str(error.message))
        return data

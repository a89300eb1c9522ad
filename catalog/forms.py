import re
from decimal import Decimal

from django import forms
from django.utils.translation import gettext_lazy as _

from catalog.advisor import GPU_COUNT_MAX, PEAK_MAX_GB

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

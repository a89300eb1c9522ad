from decimal import Decimal

from django import forms
from django.core.validators import MaxValueValidator
from django.db.models import QuerySet
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from accounts.forms import SshKeyForm
from accounts.models import SshKey
from accounts.ssh_keys import SshKeyRefused, ssh_public_key_parse
from catalog.formatting import per_hour, shown_price
from catalog.forms import NumberInput
from catalog.legal import ORDER_CONSENT
from catalog.models import TERM_CHOICES
from catalog.selectors import active_environments
from hosts.models import Host
from orders.services import MAX_ENVIRONMENT_DETAILS, MAX_QUANTITY
from rental.text import refuse_control_characters_but_lines


class KeyCheckboxes(forms.CheckboxSelectMultiple):
    """Every key is ticked until the customer unticks some: a request that never showed the
    boxes (a first visit, a prefilled link, the way back from logging in) means all of them.
    The boxes come with a hidden `<name>_shown` field that tells the two apart."""

    def value_from_datadict(self, data, files, name):
        if f"{name}_shown" not in data:
            return [str(value) for value, _label in self.choices]
        return super().value_from_datadict(data, files, name)


class ConfigureForm(forms.Form):
    """GPU configuration. Field names double as the query string of a prefilled link."""

    # One per configurator page (orders.views): the same page sent twice places one order.
    form_token = forms.RegexField(
        regex=r"^[A-Za-z0-9_-]{16,43}$",
        required=False,
        widget=forms.HiddenInput,
        error_messages={"invalid": _("This form has expired: check your choices and order again.")},
    )

    environment = forms.ModelChoiceField(
        label=_("Environment"),
        queryset=active_environments(),
        to_field_name="slug",
        widget=forms.RadioSelect,
        empty_label=None,
    )
    environment_details = forms.CharField(
        label=_("Your image or requirements"),
        required=False,
        max_length=MAX_ENVIRONMENT_DETAILS,
        validators=[refuse_control_characters_but_lines],
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text=_(
            "For a custom environment: your image alone (registry/name:tag or "
            "name@sha256:…), or the content of a requirements file, installed at start."
        ),
    )
    quantity = forms.IntegerField(
        label=_("Number of GPUs"),
        min_value=1,
        max_value=MAX_QUANTITY,
        initial=1,
        widget=NumberInput(attrs={"inputmode": "numeric"}),
    )
    term = forms.TypedChoiceField(
        label=_("Term"),
        choices=TERM_CHOICES,
        coerce=int,
        initial=7,
        widget=forms.RadioSelect,
    )
    ssh_keys = forms.ModelMultipleChoiceField(
        label=_("SSH keys"),
        queryset=SshKey.objects.none(),
        required=False,
        widget=KeyCheckboxes,
    )
    # A first order comes with its key: a visitor, or an account without one, pastes it here
    # (accounts.ssh_keys checks it as on the account page); it joins the account.
    public_key = forms.CharField(
        label=_("Your SSH public key"),
        required=False,
        strip=True,
        widget=SshKeyForm.base_fields["public_key"].widget,
    )
    # The terms of sale and the express request to start at once: the same sentence as in
    # the terms (catalog.legal). Required to order, not to see a price.
    accept_terms = forms.BooleanField(
        label=ORDER_CONSENT,
        required=False,
        error_messages={
            "required": _(
                "Tick this box to order: your rental can only start once you have accepted "
                "the terms of sale."
            )
        },
    )

    def __init__(
        self,
        *args,
        available_units: int,
        daily_rates: dict[int, Decimal],
        ssh_keys: QuerySet[SshKey] | None = None,
        ordering: bool = False,
        buyer=None,
        **kwargs,
    ):
        super().__init__(*args, **kwargs)
        self.fields["accept_terms"].required = ordering
        # The account's keys to choose from; a visitor not logged in has none to choose.
        if ssh_keys is None:
            del self.fields["ssh_keys"]
        else:
            self.fields["ssh_keys"].queryset = ssh_keys  # type: ignore[attr-defined]
        if ssh_keys is not None and ssh_keys.exists():
            del self.fields["public_key"]
        self._limit_quantity(available_units)
        # Each term's rate on the reader's basis, TTC or HT (`buyer`: who reads the page).
        rates = {days: shown_price(rate, buyer=buyer) for days, rate in daily_rates.items()}
        self.fields["term"].choices = [  # type: ignore[attr-defined]
            (
                days,
                _("%(label)s · %(rate)s per GPU per day, %(hourly)s")
                % {
                    "label": label,
                    "rate": rates[days].first,
                    "hourly": per_hour(rates[days].amount),
                },
            )
            for days, label in TERM_CHOICES
            if days in daily_rates
        ]

    def clean_public_key(self) -> str:
        # A key half pasted while the price follows the form must not hide the price.
        text = self.cleaned_data["public_key"]
        return public_key_checked(self, text) if self.fields["accept_terms"].required else text

    def _limit_quantity(self, available_units: int) -> None:
        """The field's maximum is what is free now, and its error says so: the same figure as
        the page's "n units available" and the number input's `max`."""
        field = self.fields["quantity"]
        assert isinstance(field, forms.IntegerField)
        limit = max(min(available_units, MAX_QUANTITY), 1)
        if available_units > MAX_QUANTITY:
            message = _("Choose between 1 and %(max)d GPUs.") % {"max": MAX_QUANTITY}
        else:
            message = ngettext(
                "Not enough units: %(available)d available right now.",
                "Not enough units: %(available)d available right now.",
                available_units,
            ) % {"available": available_units}
        field.max_value = limit
        field.validators = [
            *(each for each in field.validators if not isinstance(each, MaxValueValidator)),
            MaxValueValidator(limit, message=message),
        ]
        field.widget.attrs["max"] = limit


def public_key_checked(form: forms.Form, text: str) -> str:
    """The pasted public key as the account stores it, or a form error in accounts' words. A
    private key pasted by mistake is not even sent back: the page that refuses it shows the
    field empty."""
    if not text:
        return ""
    try:
        return ssh_public_key_parse(text).line
    except SshKeyRefused as refusal:
        if refusal.code == "private_key":
            data = form.data.copy()  # type: ignore[attr-defined]  # the POST's QueryDict
            data[form.add_prefix("public_key")] = ""
            form.data = data
        raise forms.ValidationError(refusal.message, code=refusal.code) from refusal


class OrderKeysForm(forms.Form):
    """The order page's keys: the account's keys ticked for the order, and one to add."""

    ssh_keys = forms.ModelMultipleChoiceField(
        label=_("SSH keys"),
        queryset=SshKey.objects.none(),
        required=False,
        widget=forms.CheckboxSelectMultiple,
    )
    public_key = ConfigureForm.base_fields["public_key"]

    def __init__(self, *args, ssh_keys: QuerySet[SshKey], **kwargs):
        super().__init__(*args, **kwargs)
        keys = self.fields["ssh_keys"]
        assert isinstance(keys, forms.ModelMultipleChoiceField)
        keys.queryset = ssh_keys
        # Names only: the fingerprints are listed beside (and too long for a narrow column).
        keys.label_from_instance = lambda key: key.name  # type: ignore[method-assign,assignment]
        self.fields["public_key"].label = _("Add a key")

    def clean_public_key(self) -> str:
        return public_key_checked(self, self.cleaned_data["public_key"])


class ReasonForm(forms.Form):
    reason = forms.CharField(
        label=_("Reason"), max_length=1000, widget=forms.Textarea(attrs={"rows": 3})
    )


class OptionalReasonForm(forms.Form):
    reason = forms.CharField(
        label=_("Note"), max_length=1000, required=False, widget=forms.Textarea(attrs={"rows": 3})
    )


class ActivateForm(forms.Form):
    host = forms.CharField(label=_("Host"), max_length=255)
    port = forms.IntegerField(label=_("Port"), min_value=1, max_value=65535, initial=22)
    user = forms.CharField(label=_("User"), max_length=64)
    notes = forms.CharField(
        label=_("Notes for the customer"),
        required=False,
        max_length=4000,
        widget=forms.Textarea(attrs={"rows": 4}),
    )


class MoveHostForm(forms.Form):
    host = forms.ModelChoiceField(
        label=_("Host"),
        queryset=Host.objects.filter(is_active=True).select_related("gpu"),
        help_text=_("An active host of the order's GPU model with enough free GPUs."),
    )


class ExtendForm(forms.Form):
    """The term a customer adds to their rental ("Prolonger"), and on the confirmation's
    POST (`confirming`) the terms of sale accepted, as for an order."""

    term_days = forms.TypedChoiceField(choices=TERM_CHOICES, coerce=int)
    accept_terms = forms.BooleanField(
        label=ORDER_CONSENT,
        required=False,
        error_messages={
            "required": _(
                "Tick this box to extend: the extension starts only once you have accepted "
                "the terms of sale."
            )
        },
    )

    def __init__(self, *args, confirming: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["accept_terms"].required = confirming

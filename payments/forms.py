from typing import cast

from django import forms
from django.conf import settings
from django.forms.models import ModelChoiceIterator
from django.utils.translation import gettext_lazy as _

from payments.selectors import assets_offered, assets_unpriced
from payments.services import PaymentError, tx_hash_clean


class _OneQueryChoices(ModelChoiceIterator):
    """The few assets in one ordinary query: ModelChoiceIterator reads them through
    queryset.iterator(), a server-side cursor on PostgreSQL (DECLARE, FETCH, CLOSE) on every
    view of the order page."""

    def __iter__(self):
        if self.field.empty_label is not None:
            yield ("", self.field.empty_label)
        for asset in self.queryset.all():
            yield self.choice(asset)


class AssetRadioSelect(forms.RadioSelect):
    """Radios whose assets have no trusted rate now are shown, disabled."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.disabled_pks: set[int] = set()

    def create_option(self, name, value, *args, **kwargs):
        option = super().create_option(name, value, *args, **kwargs)
        # ModelChoiceIteratorValue carries the asset already read: no query per option.
        if getattr(getattr(value, "instance", None), "pk", None) in self.disabled_pks:
            option["attrs"]["disabled"] = True
        return option


class AssetChoiceField(forms.ModelChoiceField):
    iterator = _OneQueryChoices

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.unpriced: set[int] = set()

    def label_from_instance(self, obj):
        label = _("%(symbol)s on %(network)s") % {"symbol": obj.symbol, "network": obj.chain.name}
        if obj.pk in self.unpriced:
            return _("%(label)s: this payment method is temporarily unavailable") % {"label": label}
        return label


class AssetChoiceForm(forms.Form):
    asset = AssetChoiceField(
        label=_("Pay with"),
        queryset=assets_offered(),
        to_field_name="slug",
        empty_label=None,
        widget=AssetRadioSelect,
        error_messages={"required": _("Choose the currency you will pay with.")},
    )

    def __init__(self, *args, currency: str | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        # A posted unpriced asset still reaches invoice_issue, which refuses it with the
        # same sentence: disabling the radio only saves the customer a round trip.
        field = cast(AssetChoiceField, self.fields["asset"])
        field.unpriced = assets_unpriced(currency=currency or settings.STORE_CURRENCY)
        cast(AssetRadioSelect, field.widget).disabled_pks = field.unpriced


class PaymentClaimForm(forms.Form):
    tx_hash = forms.CharField(
        label=_("Transaction hash (optional)"),
        required=False,
        max_length=100,
        widget=forms.TextInput(
            attrs={"placeholder": "0x…", "autocomplete": "off", "spellcheck": "false"}
        ),
        help_text=_("Speeds up the check: 0x followed by 64 hexadecimal characters."),
    )

    def clean_tx_hash(self) -> str:
        try:
            return tx_hash_clean(self.cleaned_data["tx_hash"])
        except PaymentError as exc:
            raise forms.ValidationError(exc.message, code=exc.code) from None

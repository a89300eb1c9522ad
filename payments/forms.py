from django import forms
from django.forms.models import ModelChoiceIterator
from django.utils.translation import gettext_lazy as _

from payments.selectors import assets_offered
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


class AssetChoiceField(forms.ModelChoiceField):
    iterator = _OneQueryChoices

    def label_from_instance(self, obj):
        return _("%(symbol)s on %(network)s") % {"symbol": obj.symbol, "network": obj.chain.name}


class AssetChoiceForm(forms.Form):
    asset = AssetChoiceField(
        label=_("Pay with"),
        queryset=assets_offered(),
        to_field_name="slug",
        empty_label=None,
        widget=forms.RadioSelect,
        error_messages={"required": _("Choose the currency you will pay with.")},
    )


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

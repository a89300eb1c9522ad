from django import forms
from django.utils.translation import gettext_lazy as _

ADDRESS_ATTRS = {
    "placeholder": "0x…",
    "autocomplete": "off",
    "spellcheck": "false",
    "autocapitalize": "off",
    "class": "mono",
}


class RefundAddressForm(forms.Form):
    """Raw text only: payments.refunds.services.refund_address_clean judges the address, for
    the page and the API alike."""

    address = forms.CharField(
        label=_("Refund address"),
        max_length=100,
        widget=forms.TextInput(attrs=ADDRESS_ATTRS),
        error_messages={"required": _("Give the address to send the refund to.")},
    )
    confirmation = forms.CharField(
        label=_("The same address again"),
        max_length=100,
        required=False,
        widget=forms.TextInput(attrs=ADDRESS_ATTRS),
        help_text=_("Type or paste it a second time: a wrong address loses the refund."),
    )


class RefundTransactionForm(forms.Form):
    # The address the page showed, posted back: a refund paid elsewhere since is refused.
    address = forms.CharField(max_length=42, widget=forms.HiddenInput)
    tx_hash = forms.CharField(
        label=_("Hash of the refund transaction"),
        max_length=100,
        widget=forms.TextInput(attrs={"size": 70, "placeholder": "0x…", "autocomplete": "off"}),
        help_text=_(
            "Pay from the store's wallet first, then paste the hash: it is checked on chain."
        ),
    )

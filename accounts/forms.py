import functools

from django import forms
from django.conf import settings
from django.forms.utils import flatatt
from django.utils import translation
from django.utils.html import format_html
from django.utils.safestring import mark_safe
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from accounts.models import User, time_zone_names, vat_number_normalise
from rental.text import refuse_control_characters


class SignupForm(forms.Form):
    """Extra fields of allauth's sign-up form: first and last name, nothing else to type."""

    first_name = forms.CharField(
        label=_("First name"),
        max_length=150,
        strip=True,
        validators=[refuse_control_characters],
    )
    last_name = forms.CharField(
        label=_("Last name"), max_length=150, strip=True, validators=[refuse_control_characters]
    )
    # Filled by static/js/time-zone.js with the browser's zone; the customer never sees it.
    time_zone = forms.CharField(required=False, widget=forms.HiddenInput)

    field_order = ["first_name", "last_name", "email", "password1", "password2"]

    def clean_time_zone(self) -> str:
        # Not typed by the customer: an unknown value is no reason to refuse a sign-up, the
        # store's zone stands in (and the profile page lets them choose).
        zone = self.cleaned_data["time_zone"]
        return zone if zone in time_zone_names() else ""

    def signup(self, request, user: User) -> None:
        # allauth has already saved the names; the language of the sign-up page becomes
        # the language of the customer's e-mails.
        user.language = translation.get_language() or user.language
        user.time_zone = self.cleaned_data.get("time_zone", "")
        user.save(update_fields=["language", "time_zone"])


def _store_zone_label() -> str:
    return gettext("The store's time zone (%(zone)s)") % {"zone": settings.TIME_ZONE}


@functools.cache
def _sorted_zones() -> tuple[str, ...]:
    return tuple(sorted(time_zone_names()))


def time_zone_choices() -> list[tuple[str, str]]:
    return [("", _store_zone_label()), *((zone, zone) for zone in _sorted_zones())]


@functools.cache
def _zone_options() -> tuple[tuple[str, str], ...]:
    """Each zone's <option>, escaped once per process: the zones only change with a deploy."""
    return tuple(
        (zone, format_html('<option value="{}">{}</option>', zone, zone))
        for zone in _sorted_zones()
    )


class ZoneSelect(forms.Select):
    """The ~600 zones of time_zone_choices written in one pass from options escaped once:
    Django renders each option of a select through its own templates (90 ms of CPU for the
    account page), and escaping them at each request was still most of that page's time."""

    def render(self, name, value, attrs=None, renderer=None):
        chosen = "" if value is None else str(value)
        selected = mark_safe(" selected")
        store_zone = format_html(
            '<option value=""{}>{}</option>', selected if not chosen else "", _store_zone_label()
        )
        options = [
            format_html('<option value="{}"{}>{}</option>', zone, selected, zone)
            if zone == chosen
            else option
            for zone, option in _zone_options()
        ]
        final_attrs = flatatt(self.build_attrs(self.attrs, attrs))
        return format_html(
            '<select name="{}"{}>{}{}</select>',
            name,
            final_attrs,
            store_zone,
            mark_safe("".join(options)),
        )


class ProfileForm(forms.ModelForm):
    time_zone = forms.ChoiceField(
        label=_("Time zone"),
        choices=time_zone_choices,
        required=False,
        help_text=_("Times on the site are shown in this zone."),
        widget=ZoneSelect,
    )

    class Meta:
        model = User
        fields = [
            "first_name",
            "last_name",
            "language",
            "time_zone",
            "company_name",
            "billing_address",
            "country",
            "vat_number",
        ]
        widgets = {"billing_address": forms.Textarea(attrs={"rows": 3})}

    def clean_country(self) -> str:
        return self.cleaned_data["country"].upper()

    def clean_vat_number(self) -> str:
        return vat_number_normalise(self.cleaned_data["vat_number"])

    def clean(self) -> dict:
        cleaned = super().clean() or {}
        if cleaned.get("vat_number") and not cleaned.get("company_name"):
            self.add_error("company_name", _("Give the company the VAT number belongs to."))
        return cleaned


class KeyIdForm(forms.Form):
    """The key a revoke or delete button names."""

    # A bigint key: larger numbers (or "¹", which str.isdigit() accepts) never reach the query.
    key_id = forms.IntegerField(min_value=1, max_value=2**63 - 1)


class SshKeyForm(forms.Form):
    name = forms.CharField(
        label=_("Name"),
        max_length=80,
        required=False,
        strip=True,
        help_text=_("To tell your keys apart, e.g. “Laptop”. Empty: the key's comment."),
    )
    public_key = forms.CharField(
        label=_("Public key"),
        # The whole check is accounts.ssh_keys', with a sentence per refusal: no length limit
        # here, whose message would come before the one for a private key.
        strip=True,
        widget=forms.Textarea(
            attrs={
                "rows": 4,
                "spellcheck": "false",
                "autocomplete": "off",
                "autocapitalize": "off",
                "placeholder": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI… you@laptop",
            }
        ),
    )


class SecondFactorCodeForm(forms.Form):
    """A code from the authenticator app, or (on the verify page) a recovery code."""

    code = forms.CharField(
        label=_("Code"),
        max_length=32,
        strip=True,
        widget=forms.TextInput(
            attrs={
                "autocomplete": "one-time-code",
                "autocapitalize": "off",
                "spellcheck": "false",
                "autofocus": True,
            }
        ),
    )


class SecondFactorEnrolForm(SecondFactorCodeForm):
    """The first code of a new authenticator, with the account's password (checked by
    accounts.two_factor.totp_enrolment_confirm, within the limit on codes tried)."""

    password = forms.CharField(
        label=_("Your password"),
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
    )

    field_order = ["password", "code"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # The password comes first on the page: the cursor starts there.
        self.fields["code"].widget.attrs.pop("autofocus", None)
        self.fields["password"].widget.attrs["autofocus"] = True

from django import forms
from django.utils import translation
from django.utils.translation import gettext_lazy as _

from accounts.models import User


class SignupForm(forms.Form):
    """Extra fields of allauth's sign-up form: first and last name, nothing else."""

    first_name = forms.CharField(label=_("First name"), max_length=150, strip=True)
    last_name = forms.CharField(label=_("Last name"), max_length=150, strip=True)

    field_order = ["first_name", "last_name", "email", "password1", "password2"]

    def signup(self, request, user: User) -> None:
        # allauth has already saved the names; the language of the sign-up page becomes
        # the language of the customer's e-mails.
        user.language = translation.get_language() or user.language
        user.save(update_fields=["language"])


class ProfileForm(forms.ModelForm):
    class Meta:
        model = User
        fields = ["first_name", "last_name", "language"]

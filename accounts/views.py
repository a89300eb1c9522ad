from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _

from accounts.forms import KeyIdForm, ProfileForm


@login_required
def profile(request):
    form = ProfileForm(request.POST or None, instance=request.user)
    if request.method == "POST" and form.is_valid():
        form.save()
        messages.success(request, _("Your details have been saved."))
        return redirect("accounts:profile")
    return render(request, "accounts/profile.html", {"form": form})


# --- API keys -----------------------------------------------------------------------------

from allauth.account.decorators import verified_email_required  # noqa: E402
from django import forms  # noqa: E402
from django.http import HttpResponseBadRequest  # noqa: E402
from django.shortcuts import get_object_or_404  # noqa: E402
from django.utils.translation import gettext_lazy  # noqa: E402
from django.views.decorators.cache import never_cache  # noqa: E402
from django.views.decorators.http import require_http_methods  # noqa: E402

from accounts.models import ApiKey  # noqa: E402
from accounts.services import ApiKeyLimit, api_key_create, api_key_revoke  # noqa: E402


class ApiKeyForm(forms.Form):
    name = forms.CharField(label=gettext_lazy("Name"), max_length=80, strip=True)
    scope = forms.ChoiceField(
        label=gettext_lazy("Access"),
        choices=ApiKey.Scope.choices,
        initial=ApiKey.Scope.FULL,
        widget=forms.RadioSelect,
    )


@never_cache
@verified_email_required  # keys only in an account whose owner proved the address is theirs
@require_http_methods(["GET", "POST"])
def api_keys(request):
    """List, create (the key is shown once, on this response) and revoke the account's keys."""
    form = ApiKeyForm()
    new_key = None
    status = 200
    if request.method == "POST" and request.POST.get("action") == "revoke":
        revoke = KeyIdForm(request.POST)
        if not revoke.is_valid():
            return HttpResponseBadRequest(_("This is not an API key of your account."))
        key_id = revoke.cleaned_data["key_id"]
        api_key = get_object_or_404(ApiKey, pk=key_id, user=request.user)
        if api_key_revoke(api_key=api_key):
            message = _("The key %(prefix)s… is revoked.") % {"prefix": api_key.prefix}
            messages.success(request, message)
        return redirect("accounts:api_keys")
    if request.method == "POST":
        form = ApiKeyForm(request.POST)
        if form.is_valid():
            try:
                _api_key, new_key = api_key_create(user=request.user, **form.cleaned_data)
                form = ApiKeyForm()
            except ApiKeyLimit as exc:
                form.add_error(None, exc.message)
        status = 400 if form.errors else 200
    keys = ApiKey.objects.filter(user=request.user)
    context = {"form": form, "keys": keys, "new_key": new_key}
    return render(request, "accounts/api_keys.html", context, status=status)

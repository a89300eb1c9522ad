"""The account's SSH keys page: add, name and delete the keys its rentals install."""

from allauth.account.decorators import verified_email_required
from django.contrib import messages
from django.http import HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_http_methods

from accounts.forms import KeyIdForm, SshKeyForm
from accounts.selectors import ssh_keys_for_user
from accounts.services import MAX_SSH_KEYS_PER_USER, ssh_key_add, ssh_key_delete
from accounts.ssh_keys import SshKeyRefused


def safe_next_url(request) -> str | None:
    """Where to go next: the page that sent the customer here (the configurator, for a key;
    the page a second factor was asked for), if it is one of ours."""
    target = request.POST.get("next") or request.GET.get("next") or ""
    safe = url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    return target if safe else None


def _refused(form: SshKeyForm, refusal: SshKeyRefused) -> SshKeyForm:
    if refusal.code == "private_key":
        # Not even sent back to the browser that pasted it: the field comes back empty.
        data = form.data.copy()  # type: ignore[attr-defined]  # the POST's QueryDict
        data["public_key"] = ""
        form.data = data
    form.add_error(None if refusal.code == "too_many" else "public_key", refusal.message)
    return form


def _delete(request):
    chosen = KeyIdForm(request.POST)
    if not chosen.is_valid():
        return HttpResponseBadRequest(_("This is not an SSH key of your account."))
    ssh_key = get_object_or_404(
        ssh_keys_for_user(user=request.user), pk=chosen.cleaned_data["key_id"]
    )
    ssh_key_delete(ssh_key=ssh_key)
    messages.success(request, _("The key “%(name)s” is deleted.") % {"name": ssh_key.name})
    return redirect("accounts:ssh_keys")


@never_cache
# A private key pasted by mistake stays out of error reports.
@sensitive_post_parameters("public_key")
@verified_email_required  # keys open machines: only in an account whose owner proved its address
@require_http_methods(["GET", "POST"])
def ssh_keys(request):
    if request.method == "POST" and request.POST.get("action") == "delete":
        return _delete(request)
    form = SshKeyForm()
    status = 200
    if request.method == "POST":
        form = SshKeyForm(request.POST)
        if form.is_valid():
            try:
                ssh_key = ssh_key_add(user=request.user, **form.cleaned_data)
            except SshKeyRefused as refusal:
                form = _refused(form, refusal)
            else:
                message = _("The key “%(name)s” is added.") % {"name": ssh_key.name}
                messages.success(request, message)
                return redirect(safe_next_url(request) or "accounts:ssh_keys")
        status = 400
    context = {
        "form": form,
        "keys": ssh_keys_for_user(user=request.user),
        "max_keys": MAX_SSH_KEYS_PER_USER,
        "next": safe_next_url(request) or "",
    }
    return render(request, "accounts/ssh_keys.html", context, status=status)

"""Pages of the second factor: the account's security page, enrolment (QR code, then the
recovery codes, shown once) and the code asked after the password."""

from base64 import b32encode
from collections.abc import Callable
from functools import partial
from typing import Any

from allauth.account.adapter import get_adapter
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import update_session_auth_hash
from django.contrib.auth.decorators import login_required
from django.http import HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.cache import never_cache
from django.views.decorators.debug import sensitive_post_parameters, sensitive_variables
from django.views.decorators.http import require_http_methods
from django_otp import DEVICE_ID_SESSION_KEY
from django_otp import login as otp_login
from django_otp.plugins.otp_static.models import StaticDevice

from accounts.adapter import LOGGED_IN_MESSAGE
from accounts.forms import SecondFactorCodeForm, SecondFactorEnrolForm
from accounts.ssh_key_views import safe_next_url
from accounts.two_factor import (
    PasswordRefused,
    SecondFactorThrottled,
    recovery_codes_left,
    recovery_codes_renew,
    second_factor_check,
    totp_enrolment_confirm,
    totp_enrolment_start,
    two_factor_enabled,
    two_factor_remove,
)
from rental.qr import qr_svg
from rental.ratelimit import rate_limit_exceeded


def _over_limit(request) -> bool:
    """Counts one code tried by the account and by the client; True past either limit."""
    client_ip = get_adapter(request).get_client_ip(request)
    by_account = rate_limit_exceeded(
        scope="two-factor", key=str(request.user.pk), **settings.TWO_FACTOR_RATE_LIMIT
    )
    by_client = rate_limit_exceeded(
        scope="two-factor-ip", key=client_ip, **settings.TWO_FACTOR_IP_RATE_LIMIT
    )
    return by_account or by_client


@sensitive_variables("form")
def _code_tried(request, form: SecondFactorCodeForm, check: Callable[..., Any]) -> tuple[Any, int]:
    """`check(**the form's fields)`'s answer, and the page's status; on a refusal
    the form carries the reason. Every try counts towards the limits, before the form is
    read: a password asked with the code is guessed no faster than the code."""
    if _over_limit(request):
        form.add_error("code", _("Too many codes tried. Wait a few minutes, then try again."))
        return None, 429
    if not form.is_valid():
        return None, 400
    try:
        accepted = check(**form.cleaned_data)
    except PasswordRefused:
        form.add_error("password", _("This is not your password."))
        return None, 400
    except SecondFactorThrottled as throttled:
        message = ngettext(
            "Too many wrong codes: wait %(seconds)d second before the next one.",
            "Too many wrong codes: wait %(seconds)d seconds before the next one.",
            throttled.seconds,
        ) % {"seconds": throttled.seconds}
        form.add_error("code", message)
        return None, 429
    if not accepted:
        form.add_error("code", _("This code is not valid. Type the code your app shows now."))
        return None, 400
    return accepted, 200


def _session_verified(request, device) -> None:
    otp_login(request, device)
    # A new session key for a session that just gained a right.
    request.session.cycle_key()


def _recovery_codes_page(request, codes: list[str], next_url: str):
    context = {"codes": codes, "next": next_url}
    return render(request, "accounts/two_factor_recovery_codes.html", context)


@never_cache
@sensitive_post_parameters("code")
@login_required
@require_http_methods(["GET", "POST"])
def two_factor_security(request):
    """Whether the account asks for a code after the password; turn it off, new recovery
    codes (each with a current code)."""
    user = request.user
    enabled = two_factor_enabled(user=user)
    form = SecondFactorCodeForm(request.POST or None)
    status = 200
    if request.method == "POST":
        action = request.POST.get("action")
        if not enabled or action not in ("disable", "new-codes"):
            return HttpResponseBadRequest(_("Nothing to change: reload the page."))
        if action == "disable" and user.is_staff:
            messages.error(request, _("Staff accounts keep their second factor."))
            return redirect("accounts:two_factor")
        device, status = _code_tried(request, form, partial(second_factor_check, user=user))
        if device and action == "disable":
            two_factor_remove(user=user)
            request.session.pop(DEVICE_ID_SESSION_KEY, None)
            messages.success(request, _("Two-factor login is off."))
            return redirect("accounts:two_factor")
        if device:
            codes = recovery_codes_renew(user=user)
            return _recovery_codes_page(request, codes, reverse("accounts:two_factor"))
    context = {
        "enabled": enabled,
        "codes_left": recovery_codes_left(user=user) if enabled else 0,
        "form": form,
    }
    return render(request, "accounts/two_factor_security.html", context, status=status)


@never_cache
@sensitive_post_parameters("code", "password")
@login_required
@require_http_methods(["GET", "POST"])
def two_factor_enrol(request):
    """Scan the QR code (or type the key), confirm with a code: the recovery codes follow."""
    user = request.user
    next_url = safe_next_url(request) or ""
    if two_factor_enabled(user=user):
        return redirect(next_url or "accounts:two_factor")
    device = totp_enrolment_start(user=user)
    form = SecondFactorEnrolForm(request.POST or None)
    status = 200
    if request.method == "POST":
        confirmed, status = _code_tried(request, form, partial(totp_enrolment_confirm, user=user))
        if confirmed:
            totp_device, codes = confirmed
            # Checking the password may have re-hashed it (a newer hasher): the session
            # follows, or it would be signed out at the next page.
            update_session_auth_hash(request, user)
            _session_verified(request, totp_device)
            return _recovery_codes_page(request, codes, next_url or reverse("accounts:two_factor"))
    secret = b32encode(device.bin_key).decode()
    context = {
        "form": form,
        "next": next_url,
        # segno's markup, with the otpauth:// URI it escaped itself.
        "qr": mark_safe(qr_svg(device.config_url, title=_("QR code for your authenticator app"))),
        "secret_groups": [secret[start : start + 4] for start in range(0, len(secret), 4)],
    }
    return render(request, "accounts/two_factor_enrol.html", context, status=status)


@never_cache
@sensitive_post_parameters("code")
@login_required
@require_http_methods(["GET", "POST"])
def two_factor_verify(request):
    """The code asked after the password: from the authenticator app, or a recovery code."""
    user = request.user
    next_url = safe_next_url(request) or ""
    if user.is_verified() or not two_factor_enabled(user=user):
        return redirect(next_url or "accounts:profile")
    form = SecondFactorCodeForm(request.POST or None)
    status = 200
    if request.method == "POST":
        device, status = _code_tried(request, form, partial(second_factor_check, user=user))
        if device:
            _session_verified(request, device)
            get_adapter(request).add_message(
                request, messages.SUCCESS, LOGGED_IN_MESSAGE, {"user": user}
            )
            if isinstance(device, StaticDevice):
                left = recovery_codes_left(user=user)
                message = ngettext(
                    "You used a recovery code: %(count)d left.",
                    "You used a recovery code: %(count)d left.",
                    left,
                ) % {"count": left}
                messages.warning(request, message)
            return redirect(next_url or "accounts:profile")
    context = {"form": form, "next": next_url}
    return render(request, "accounts/two_factor_verify.html", context, status=status)

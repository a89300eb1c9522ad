"""allauth, the store's way: mails sent by a worker, failed logins counted per e-mail and
client and per account (accounts.login_limits), and a new password that shuts the old doors."""

from datetime import timedelta
from urllib.parse import urlsplit

from allauth.account.adapter import DefaultAccountAdapter
from allauth.core import context as allauth_context
from allauth.core.internal.ratelimit import get_rates
from django import forms
from django.conf import settings
from django.contrib.sites.models import Site
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django_otp import login as otp_login
from django_otp.models import Device

from accounts.login_codes import login_code_accepted, login_code_send, login_codes_forget
from accounts.login_limits import (
    known_device_remember,
    login_ceiling_lift,
    login_ceiling_reached,
    login_failure_count,
)
from accounts.mail import mail_queue
from accounts.services import account_password_changed
from accounts.two_factor import two_factor_enabled

LOGGED_IN_MESSAGE = "account/messages/logged_in.txt"
# The login form's field for the code asked past the account's ceiling (accounts.login_codes).
LOGIN_CODE_FIELD = "login_code"
# allauth's e-mails (a sign-up code lives 15 minutes, a reset link 3 days) kept while the
# broker is down: the customer asks again rather than get a dead code late.
ALLAUTH_MAIL_KEPT = timedelta(minutes=15)


def _store() -> Site:
    """The store as allauth's e-mails name it, from the settings: the sites table's row is
    Django's example.com again after a `flush`."""
    return Site(
        id=settings.SITE_ID, name=settings.STORE_NAME, domain=urlsplit(settings.SITE_URL).netloc
    )


class AccountAdapter(DefaultAccountAdapter):
    def send_mail(self, template_prefix: str, email: str, context: dict) -> None:
        # Rendered now (the request's language, allauth's templates and context), sent after
        # commit by a worker: a mail server outage never fails a sign-up or a reset.
        request = allauth_context.request
        context = {"request": request, "email": email, **context, "current_site": _store()}
        message = self.render_mail(template_prefix, email, context)
        mail_queue(message=message, keep_for=ALLAUTH_MAIL_KEPT)

    def add_message(
        self,
        request,
        level: int,
        message_template: str | None = None,
        message_context: dict | None = None,
        extra_tags: str = "",
        message: str | None = None,
    ) -> None:
        # After the password of an account with a second factor, the code is still to come:
        # "you are logged in" would be wrong there; the verify page says it once it is true.
        # (Right after login() request.user is the bare user, without django-otp's check.)
        user = request.user
        verified = getattr(user, "is_verified", lambda: False)()
        if message_template == LOGGED_IN_MESSAGE and not verified and two_factor_enabled(user=user):
            return
        super().add_message(request, level, message_template, message_context, extra_tags, message)

    def _get_login_attempts_cache_key(self, request, **credentials) -> str:
        # allauth keys the "per key" failed-login limit on the e-mail alone, and its per-IP
        # limit is tight: from one shared address (an office, our TLS proxy) a stranger with
        # random e-mails locked everyone out. Per e-mail *and* client IP, the guesser only
        # locks themself out; the per-IP limit in settings is looser, against sweeps.
        login_key = super()._get_login_attempts_cache_key(request, **credentials)
        return f"{login_key}:{self.get_client_ip(request)}"

    def pre_authenticate(self, request, **credentials) -> None:
        email = credentials.get("email") or credentials.get("username") or ""
        try:
            super().pre_authenticate(request, **credentials)
        except forms.ValidationError as refused:
            # Windows slide: once the oldest counted failure leaves its window, login works.
            minutes = max(
                int(rate.duration // 60)
                for rate in get_rates(app="allauth.account", action="login_failed")
            )
            message = ngettext(
                "Too many failed login attempts. Try again in %(minutes)d minute at most.",
                "Too many failed login attempts. Try again in %(minutes)d minutes at most.",
                minutes,
            ) % {"minutes": minutes}
            raise forms.ValidationError(message, code="too_many_login_attempts") from refused
        if email and login_ceiling_reached(request=request, email=email):
            self._second_proof(request, email)

    def _second_proof(self, request, email: str) -> None:
        """Past the account's ceiling the password is checked only with a code: the one
        e-mailed to the account (sent now when none was typed) or its second factor."""
        request.login_code_asked = True
        code = request.POST.get(LOGIN_CODE_FIELD, "").strip()
        proof = code and login_code_accepted(email=email, code=code)
        if proof:
            request.login_second_factor = proof if isinstance(proof, Device) else None
            return
        if not code:
            login_code_send(email=email)
        message = _(
            "Too many failed login attempts on this account: we have sent a code to its "
            "e-mail address. Type it below with your password (or a code of your second "
            "factor, if you have one)."
        )
        if code:
            message = _("This code is not the one we sent. Type the code of the last e-mail.")
        raise forms.ValidationError(message, code="too_many_login_attempts")

    def authentication_failed(self, request, **credentials) -> None:
        email = credentials.get("email") or credentials.get("username") or ""
        if email:
            login_failure_count(request=request, email=email)

    def post_login(self, request, user, **kwargs):
        response = super().post_login(request, user, **kwargs)
        known_device_remember(response=response, user=user)
        if getattr(request, "login_code_asked", False):
            login_codes_forget(email=user.email)
        device = getattr(request, "login_second_factor", None)
        if device is not None:
            otp_login(request, device)  # typed with the password: not asked again
        return response

    def set_password(self, user, password: str) -> None:
        # allauth's one path for a password reset and a password change.
        super().set_password(user, password)
        account_password_changed(user=user)
        login_ceiling_lift(email=user.email)
        login_codes_forget(email=user.email)

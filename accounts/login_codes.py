"""The second proof asked with the password once an account's login ceiling is reached
(accounts.login_limits): a code e-mailed to the account's address, or its second factor.

A guesser without the mailbox (or the authenticator) has no password checked; the owner,
who has both, always gets in. The code is long enough that trying codes is hopeless, so
wrong codes burn nothing: a guesser cannot spoil the owner's code either.
"""

import hashlib
import secrets
from datetime import timedelta

from django.conf import settings
from django.core.cache import caches
from django.utils.crypto import constant_time_compare
from django_otp.models import Device

from accounts.login_limits import account_key
from accounts.mail import mail_queue, user_mail
from accounts.models import User
from accounts.two_factor import SecondFactorThrottled, second_factor_check, two_factor_enabled
from rental.ratelimit import rate_limit_exceeded

# No 0/O, 1/I/L: read from an e-mail and typed. 31^10 codes.
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 10
# Codes e-mailed per account and ceiling period: the owner asks again if one got lost, a
# guesser cannot flood the mailbox.
SENDS_PER_PERIOD = 3
RESEND_AFTER = timedelta(minutes=2)


def _key(email: str) -> str:
    return "login-code:" + account_key(email)


def _code_hash(code: str) -> str:
    return hashlib.sha256(code.encode()).hexdigest()


def _normalised(code: str) -> str:
    return "".join(code.split()).replace("-", "").upper()


def login_code_send(*, email: str) -> None:
    """E-mail a code to the account of `email`, if there is one (the page says the same
    either way), unless one was sent in the last RESEND_AFTER or too many this period."""
    user = User.objects.filter(email__iexact=email.strip(), is_active=True).first()
    if user is None:
        return
    period = settings.ACCOUNT_LOGIN_CEILING["period"]
    backend = caches["default"]
    if not backend.add(f"{_key(email)}:recent", 1, timeout=int(RESEND_AFTER.total_seconds())):
        return
    if rate_limit_exceeded(
        scope="login-code-sent", key=_key(email), limit=SENDS_PER_PERIOD, period=period
    ):
        return
    code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
    # Every code sent this period works: the owner may type the first e-mail's.
    hashes = [*backend.get(_key(email), []), _code_hash(code)]
    backend.set(_key(email), hashes, timeout=period)
    context = {"code": f"{code[:5]}-{code[5:]}", "minutes": period // 60}
    mail_queue(
        message=user_mail(user=user, template="accounts/email/login_code", context=context),
        keep_for=timedelta(seconds=period),
    )


def login_code_accepted(*, email: str, code: str) -> Device | bool:
    """Whether `code` is the second proof of the account of `email`: a code e-mailed to it
    this period (True), or a code of its second factor (the device, to mark the session)."""
    typed = _code_hash(_normalised(code))
    for sent in caches["default"].get(_key(email), []):
        if constant_time_compare(sent, typed):
            return True
    user = User.objects.filter(email__iexact=email.strip(), is_active=True).first()
    if user is None or not two_factor_enabled(user=user):
        return False
    try:
        return second_factor_check(user=user, code=code) or False
    except SecondFactorThrottled:
        return False


def login_codes_forget(*, email: str) -> None:
    """The owner got in (or set a new password): the codes sent are spent."""
    caches["default"].delete(_key(email))

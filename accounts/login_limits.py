"""Failed logins counted per account too, whatever the address they come from.

allauth's limits count per e-mail *and* client address (accounts.adapter) and per address:
eight addresses could try five passwords each on one account in seconds, and more addresses
more. This ceiling counts the failures on the account from everywhere: past it, until its
window closes (ACCOUNT_LOGIN_CEILING's period at most), no password is checked without a
second proof, which slows a spread-out guesser to that many guesses per period.

It never locks the owner out: past the ceiling the account's address gets a login code
(accounts.login_codes), and the password with that code, or with the account's second factor,
gets in. A browser the account signed in from, with the password of today (a signed cookie
bound to it), needs no code, until it fails once itself: its holder never guesses on.
"""

import hashlib
import secrets
from datetime import timedelta

from django.conf import settings
from django.http import HttpRequest, HttpResponseBase
from django.utils.crypto import constant_time_compare, salted_hmac

from accounts.models import User
from rental.ratelimit import rate_limit_exceeded, rate_limit_reset, rate_limit_uses

SCOPE = "login-account"
# A known browser that failed a login while the ceiling was reached: it needs the code too.
FAILED_DEVICE_SCOPE = "login-known-device-failed"
KNOWN_DEVICE = "known_device"
_KNOWN_DEVICE_SALT = "accounts.login_limits.known_device"
KNOWN_DEVICE_AGE = timedelta(days=90)


def account_key(email: str) -> str:
    # Hashed: no e-mail address in the cache's keys.
    return hashlib.sha256(email.strip().lower().encode()).hexdigest()


def _password_tag(user: User) -> str:
    # Changes with the password's hash: a new password (a reset after a theft) voids every
    # browser remembered with the old one.
    return salted_hmac(_KNOWN_DEVICE_SALT, user.password).hexdigest()[:32]


def _known_device_id(*, request: HttpRequest, email: str) -> str | None:
    """The id of the browser's known-device cookie when it names the account of `email` and
    its password of today; None otherwise."""
    value = (
        request.get_signed_cookie(
            KNOWN_DEVICE, default="", salt=_KNOWN_DEVICE_SALT, max_age=KNOWN_DEVICE_AGE
        )
        or ""
    )
    user_id, _sep, rest = value.partition(":")
    device_id, _sep, tag = rest.partition(":")
    if not (user_id.isdigit() and device_id and tag):
        return None  # empty, or a cookie of before it was bound to the password
    user = User.objects.filter(pk=user_id, email__iexact=email.strip()).only("password").first()
    if user is None or not constant_time_compare(tag, _password_tag(user)):
        return None
    return device_id


def login_ceiling_reached(*, request: HttpRequest, email: str) -> bool:
    """Whether the account of `email` asks `request` for a second proof with the password
    (counts nothing): past the ceiling, unless the browser signed in to that account before,
    with its current password, and has not failed since the ceiling was reached."""
    uses = rate_limit_uses(scope=SCOPE, key=account_key(email))
    if uses < settings.ACCOUNT_LOGIN_CEILING["limit"]:
        return False
    device_id = _known_device_id(request=request, email=email)
    return device_id is None or rate_limit_uses(scope=FAILED_DEVICE_SCOPE, key=device_id) > 0


def known_device_remember(*, response: HttpResponseBase, user: User) -> None:
    """The browser signed in to `user`'s account: the ceiling will not hold it while the
    password stays the same (signed, so only a browser the account signed in from carries
    it)."""
    value = f"{user.pk}:{secrets.token_urlsafe(16)}:{_password_tag(user)}"
    response.set_signed_cookie(
        KNOWN_DEVICE,
        value,
        salt=_KNOWN_DEVICE_SALT,
        max_age=int(KNOWN_DEVICE_AGE.total_seconds()),
        secure=settings.SESSION_COOKIE_SECURE,
        httponly=True,
        samesite="Lax",
    )


def login_failure_count(*, request: HttpRequest, email: str) -> None:
    """One more failed login on the account of `email`, from wherever it came. A known
    browser failing while the ceiling is reached loses its pass for the ceiling's period."""
    ceiling = settings.ACCOUNT_LOGIN_CEILING
    reached = rate_limit_uses(scope=SCOPE, key=account_key(email)) >= ceiling["limit"]
    rate_limit_exceeded(scope=SCOPE, key=account_key(email), **ceiling)
    device_id = _known_device_id(request=request, email=email) if reached else None
    if device_id is not None:
        rate_limit_exceeded(
            scope=FAILED_DEVICE_SCOPE, key=device_id, limit=0, period=ceiling["period"]
        )


def login_ceiling_lift(*, email: str) -> None:
    """The owner proved themself (a new password): the account's failures are forgotten."""
    rate_limit_reset(scope=SCOPE, key=account_key(email))

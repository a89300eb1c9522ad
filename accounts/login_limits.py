"""Failed logins counted per account too, whatever the address they come from.

allauth's limits count per e-mail *and* client address (accounts.adapter) and per address:
eight addresses could try five passwords each on one account in seconds, and more addresses
more. This ceiling counts the failures on the account from everywhere: past it, the account
refuses every login attempt until its window closes (ACCOUNT_LOGIN_CEILING's period at most),
which slows a spread-out guesser to that many guesses per period. It never locks the owner
out for good: the window closes on its own, a password reset lifts it at once, and a browser
the account signed in from before (a signed cookie naming it) is never held by it, so a
guesser who keeps the ceiling reached does not keep the owner out.
"""

import hashlib
from datetime import timedelta

from django.conf import settings
from django.http import HttpRequest, HttpResponseBase

from accounts.models import User
from rental.ratelimit import rate_limit_exceeded, rate_limit_reset, rate_limit_uses

SCOPE = "login-account"
KNOWN_DEVICE = "known_device"
_KNOWN_DEVICE_SALT = "accounts.login_limits.known_device"
KNOWN_DEVICE_AGE = timedelta(days=90)


def _account_key(email: str) -> str:
    # Hashed: no e-mail address in the cache's keys.
    return hashlib.sha256(email.strip().lower().encode()).hexdigest()


def _known_device(*, request: HttpRequest, email: str) -> bool:
    user_id = request.get_signed_cookie(
        KNOWN_DEVICE,
        default=None,
        salt=_KNOWN_DEVICE_SALT,
        max_age=KNOWN_DEVICE_AGE,
    )
    if not user_id:
        return False
    return User.objects.filter(pk=user_id, email__iexact=email.strip()).exists()


def login_ceiling_reached(*, request: HttpRequest, email: str) -> bool:
    """Whether the account of `email` refuses login attempts from `request` for now (counts
    nothing): past the ceiling, unless the browser signed in to that account before."""
    uses = rate_limit_uses(scope=SCOPE, key=_account_key(email))
    if uses < settings.ACCOUNT_LOGIN_CEILING["limit"]:
        return False
    return not _known_device(request=request, email=email)


def known_device_remember(*, response: HttpResponseBase, user: User) -> None:
    """The browser signed in to `user`'s account: the ceiling will not hold it (signed, so
    only a browser the account signed in from carries it)."""
    response.set_signed_cookie(
        KNOWN_DEVICE,
        str(user.pk),
        salt=_KNOWN_DEVICE_SALT,
        max_age=int(KNOWN_DEVICE_AGE.total_seconds()),
        secure=settings.SESSION_COOKIE_SECURE,
        httponly=True,
        samesite="Lax",
    )


def login_failure_count(*, email: str) -> None:
    """One more failed login on the account of `email`, from wherever it came."""
    rate_limit_exceeded(scope=SCOPE, key=_account_key(email), **settings.ACCOUNT_LOGIN_CEILING)


def login_ceiling_lift(*, email: str) -> None:
    """The owner proved themself (a new password): the account's failures are forgotten."""
    rate_limit_reset(scope=SCOPE, key=_account_key(email))

"""Failed logins counted per account too, whatever the address they come from.

allauth's limits count per e-mail *and* client address (accounts.adapter) and per address:
eight addresses could try five passwords each on one account in seconds, and more addresses
more. This ceiling counts the failures on the account from everywhere: past it, the account
refuses every login attempt until its window closes (ACCOUNT_LOGIN_CEILING's period at most),
which slows a spread-out guesser to that many guesses per period. It never locks the owner
out for good: the window closes on its own, and a password reset lifts it at once.
"""

import hashlib

from django.conf import settings

from rental.ratelimit import rate_limit_exceeded, rate_limit_reset, rate_limit_uses

SCOPE = "login-account"


def _account_key(email: str) -> str:
    # Hashed: no e-mail address in the cache's keys.
    return hashlib.sha256(email.strip().lower().encode()).hexdigest()


def login_ceiling_reached(*, email: str) -> bool:
    """Whether the account of `email` refuses login attempts for now (counts nothing)."""
    uses = rate_limit_uses(scope=SCOPE, key=_account_key(email))
    return uses >= settings.ACCOUNT_LOGIN_CEILING["limit"]


def login_failure_count(*, email: str) -> None:
    """One more failed login on the account of `email`, from wherever it came."""
    rate_limit_exceeded(scope=SCOPE, key=_account_key(email), **settings.ACCOUNT_LOGIN_CEILING)


def login_ceiling_lift(*, email: str) -> None:
    """The owner proved themself (a new password): the account's failures are forgotten."""
    rate_limit_reset(scope=SCOPE, key=_account_key(email))

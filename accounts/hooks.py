"""What higher apps do when an account's password changes, registered in their AppConfig.ready()
(accounts imports none of them)."""

from collections.abc import Callable
from datetime import datetime

from accounts.models import User
from rental.hooks import Hooks

# hook(user=, now=) -> how many of the app's channels it paused, for the e-mail to the user.
password_changed_hooks: Hooks[Callable[..., int]] = Hooks()


def password_changed_hooks_run(*, user: User, now: datetime) -> int:
    return sum(hook(user=user, now=now) for hook in password_changed_hooks)

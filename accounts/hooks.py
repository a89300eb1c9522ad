"""What higher apps do when an account's password changes, registered in their AppConfig.ready()
(accounts imports none of them)."""

from collections.abc import Callable
from datetime import datetime

from accounts.models import User

# hook(user=, now=) -> how many of the app's channels it paused, for the e-mail to the user.
PasswordChangedHook = Callable[..., int]
_password_changed_hooks: list[PasswordChangedHook] = []


def on_password_changed(hook: PasswordChangedHook) -> None:
    if hook not in _password_changed_hooks:
        _password_changed_hooks.append(hook)


def password_changed_hooks_run(*, user: User, now: datetime) -> int:
    return sum(hook(user=user, now=now) for hook in _password_changed_hooks)

"""What higher apps do when an account's password changes, named in settings.HOOKS
(`password_changed`, rental.hooks): accounts imports none of them."""

from datetime import datetime

from accounts.models import User
from rental.hooks import answers


def password_changed_hooks_run(*, user: User, now: datetime) -> int:
    """Each answer hook(user=, now=) says how many of the app's channels it paused, for the
    e-mail to the user."""
    return sum(hook(user=user, now=now) for hook in answers("password_changed").values())

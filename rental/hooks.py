"""The answers higher apps give to the questions lower apps ask, named in one place.

A lower app (orders, catalog, accounts, rental) asks "did money arrive?", "what else does the
order page show?", "who wants this order event?" without importing the apps that answer: each
question's answers are listed, by dotted path, in settings.HOOKS (rental/settings/base.py), in
the order they run. The one way the apps depend on each other stays one way (import-linter),
and a newcomer reads every subscription in that one table instead of a dozen ready() methods.
"""

import functools
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string


def answers(question: str) -> dict[str, Callable[..., Any]]:
    """The functions answering `question`, by name, in the table's order (a question held with
    no answers: empty). A question the table does not hold raises: a misspelt or renamed key
    would otherwise read as "nobody objects" (every order expirable, no section shown)."""
    try:
        entries = settings.HOOKS[question]
    except KeyError:
        message = f"No question {question!r} in settings.HOOKS (rental/settings/base.py)"
        raise ImproperlyConfigured(message) from None
    return dict(_imported(tuple(entries.items())))


@functools.lru_cache(maxsize=64)
def _imported(entries: tuple[tuple[str, str | Callable[..., Any]], ...]) -> tuple:
    # Bounded: a test may name its own function (a new entry each time) instead of a path.
    return tuple(
        (name, import_string(path) if isinstance(path, str) else path) for name, path in entries
    )

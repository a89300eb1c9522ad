"""Tests add an answer to a question of settings.HOOKS (rental.hooks) for their own run."""

from collections.abc import Callable
from typing import Any


def answer_added(settings, question: str, name: str, answer: Callable[..., Any]) -> None:
    """`settings` is pytest-django's fixture (it restores HOOKS after the test) or, in a bench,
    django.conf.settings with HOOKS saved by the caller."""
    answers = {**settings.HOOKS.get(question, {}), name: answer}
    settings.HOOKS = {**settings.HOOKS, question: answers}

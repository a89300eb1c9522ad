"""A question is answered from the one HOOKS table; a question the table does not hold is a
mistake (a renamed key), never "nobody answers": `order_may_expire` with no answers would make
every order expirable."""

import re
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.utils import timezone

from orders.hooks import order_may_expire
from orders.models import Order
from rental.hooks import answers

ROOT = Path(__file__).resolve().parents[2]
ASKED = re.compile(r"\banswers\(\s*\"(\w+)\"")


def test_every_question_the_code_asks_is_in_the_table(settings):
    sources = [
        path
        for path in ROOT.glob("*/**/*.py")
        if path.parts[len(ROOT.parts)] not in {"tests", "bench", "node_modules", ".venv", "var"}
    ]
    asked = {question for path in sources for question in ASKED.findall(path.read_text())}
    assert "order_may_expire" in asked
    assert sorted(asked - set(settings.HOOKS)) == []


def test_a_question_the_table_does_not_hold_raises_naming_it():
    with pytest.raises(ImproperlyConfigured, match=r"'order_may_expire_renamed'.*HOOKS"):
        answers("order_may_expire_renamed")


def test_a_question_held_with_no_answers_has_none(settings):
    settings.HOOKS = {**settings.HOOKS, "catalog_availability": {}}
    assert answers("catalog_availability") == {}


def test_an_order_is_not_expirable_because_its_question_lost_its_entry(settings):
    settings.HOOKS = {k: v for k, v in settings.HOOKS.items() if k != "order_may_expire"}
    with pytest.raises(ImproperlyConfigured, match="order_may_expire"):
        order_may_expire(order=Order(), now=timezone.now())

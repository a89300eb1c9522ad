"""The layout stays readable: no large import circle, and every task queued by name exists."""

import re
import subprocess
import sys
from importlib import import_module
from pathlib import Path

import pytest
from celery.exceptions import NotRegistered

from rental.celery import app, task_named
from rental.hooks import answers

ROOT = Path(__file__).resolve().parents[2]
APPS = ["rental", "accounts", "catalog", "orders", "hosts", "payments", "billing", "api"]
QUEUED_BY_NAME = re.compile(r"(?:enqueue_after_commit|task_named)\(\s*\"([\w.]+)\"")


def test_no_import_circle_of_more_than_three_modules():
    found = subprocess.run(
        [sys.executable, str(ROOT / "bin" / "import_cycles.py")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert found.returncode == 0, found.stdout + found.stderr


def test_every_task_queued_by_name_is_registered():
    sources = [
        path
        for path in ROOT.glob("*/**/*.py")
        if path.parts[len(ROOT.parts)] not in {"tests", "bench", "node_modules", ".venv", "var"}
    ]
    names = {name for path in sources for name in QUEUED_BY_NAME.findall(path.read_text())}
    assert "orders.tasks.order_event_dispatch_task" in names
    app.loader.import_default_modules()
    assert sorted(name for name in names if name not in app.tasks) == []


def test_a_misspelt_task_name_fails_where_it_is_queued():
    with pytest.raises(NotRegistered):
        task_named("orders.tasks.order_event_dispatch")


def test_every_answer_named_in_the_hooks_table_is_a_function(settings):
    for question in settings.HOOKS:
        answered = answers(question)
        assert answered, question
        assert all(callable(answer) for answer in answered.values()), question


def _exists(path: str) -> bool:
    """A path from the repository's root, or a file name found in one of the apps."""
    return (ROOT / path).exists() or any(any((ROOT / app).rglob(path)) for app in APPS)


def _importable(name: str) -> bool:
    try:
        import_module(name)
    except ImportError:
        module, _, attribute = name.rpartition(".")
        return hasattr(import_module(module), attribute)
    return True


def test_the_architecture_map_is_linked_and_names_only_what_exists():
    architecture = (ROOT / "docs" / "ARCHITECTURE.md").read_text()
    assert "(docs/ARCHITECTURE.md)" in (ROOT / "README.md").read_text()
    paths = set(re.findall(r"`([\w/.-]+/[\w/.-]*|[\w-]+\.py)`", architecture))
    assert "payments/watcher/" in paths
    assert sorted(path for path in paths if not _exists(path)) == []
    dotted = set(re.findall(rf"`((?:{'|'.join(APPS)})\.[\w.]+)`", architecture))
    assert "orders.tasks.order_event_dispatch_task" in dotted
    assert sorted(name for name in dotted if not _importable(name)) == []

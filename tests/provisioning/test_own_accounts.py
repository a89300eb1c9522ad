"""Several suites may provision rental accounts on this machine at once: a run removes only
its own, never another run's (which would kill its customer's session mid-test)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.provisioning.sshd import TEST_ACCOUNT_PREFIX, rental_accounts_remove

ROOT = Path(__file__).resolve().parents[2]


def _another_runs_prefix() -> str:
    """The account prefix a second suite started now would use, as it computes it."""
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "import django; django.setup(); "
            "from tests.provisioning.sshd import TEST_ACCOUNT_PREFIX; print(TEST_ACCOUNT_PREFIX)",
        ],
        cwd=ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "rental.settings.test"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def _exists(user: str) -> bool:
    return subprocess.run(["id", user], capture_output=True, check=False).returncode == 0


@pytest.fixture
def accounts():
    created: list[str] = []

    def add(user: str) -> str:
        subprocess.run(["useradd", "--create-home", user], check=True)
        created.append(user)
        return user

    yield add
    for user in created:
        subprocess.run(["userdel", "--remove", user], capture_output=True, check=False)


def test_a_run_removes_its_own_accounts_and_leaves_another_runs(accounts):
    theirs = accounts(f"{_another_runs_prefix()}theirs1")
    mine = accounts(f"{TEST_ACCOUNT_PREFIX}mine1")
    rental_accounts_remove()
    assert not _exists(mine)
    assert _exists(theirs), f"{theirs}, another run's, was removed"

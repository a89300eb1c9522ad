import json
import os
import subprocess

import pytest

from tests.makerun.stack import MakeRunStack


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/makerun/" in str(item.fspath):
            item.add_marker(pytest.mark.makerun)


@pytest.fixture
def make_run(tmp_path):
    """`make run`'s processes on a throwaway var/ under the test's temporary directory, itself
    under the world-writable /tmp, where newcomers often clone (hosts.local)."""
    stack = MakeRunStack(tmp_path / "var")
    try:
        stack.start()
        yield stack
    finally:
        stack.stop()
        _rental_accounts_remove(tmp_path / "var" / "ssh" / "rentals")


def _rental_accounts_remove(state_dir) -> None:
    """Run by root, the local host made a Unix account per rental (hosts.local): this run's
    own, named in its state files, go with it."""
    if os.geteuid() != 0:
        return
    for state in state_dir.glob("*.json"):
        user = json.loads(state.read_text())["user"]
        subprocess.run(["pkill", "-KILL", "-u", user], check=False)
        subprocess.run(["userdel", "--remove", user], capture_output=True, check=False)

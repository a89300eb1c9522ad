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

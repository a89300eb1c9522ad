import pytest
from django.core.cache import cache

from tests.factories import UserFactory
from tests.services import unreachable

pytest_plugins = ["tests.anvil"]


def pytest_sessionstart(session):
    problems = unreachable()
    if problems:
        pytest.exit("\n".join(problems), returncode=3)


@pytest.fixture(autouse=True)
def _clear_cache():
    # Rate-limit counters live in the Redis cache: each test starts with none.
    cache.clear()
    yield


@pytest.fixture
def password():
    return "correct-Horse-battery-9"


@pytest.fixture
def customer(db, password):
    return UserFactory(password=password)


@pytest.fixture
def outsider(db, password):
    return UserFactory(password=password)


@pytest.fixture
def staff(db, password):
    return UserFactory(password=password, is_staff=True, is_superuser=True)

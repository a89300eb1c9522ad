"""The suite shares the machine's Redis with other runs: emptying its cache before a test, or
for a fresh count inside one, leaves every other run's keys alone."""

from uuid import uuid4

import pytest
from django.core.cache import cache

from tests.cache import cache_empty, cache_server


@pytest.fixture
def another_runs_key():
    """A key another suite on this machine wrote, under the test settings' prefix."""
    key = f"test:1:another-run-{uuid4().hex}"
    server = cache_server()
    server.set(key, "theirs", ex=60)
    yield key
    server.delete(key)


def test_a_test_starts_with_none_of_its_own_keys_and_every_other_runs_key(another_runs_key):
    cache.set("counter", 3)
    cache_empty()
    assert cache.get("counter") is None
    assert cache_server().get(another_runs_key) == b"theirs"


def test_the_catalog_counts_leave_another_runs_keys(another_runs_key):
    from tests.catalog.test_query_counts import _rendered_afresh

    _rendered_afresh()
    assert cache_server().get(another_runs_key) == b"theirs"

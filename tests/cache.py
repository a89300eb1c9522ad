"""The shared cache as a test starts it: empty, in this run's keys only."""

import functools
import itertools
import os

import redis
from django.conf import settings

# Two suites (or two xdist workers) may share the cache's Redis database: each run keeps its
# keys under a prefix of its own, and every key holds the number of the test that made it.
RUN_PREFIX = f"test-{os.getpid()}"
_test_numbers = itertools.count()
_current_test = next(_test_numbers)


def cache_key(key: str, key_prefix: str, version: int) -> str:
    """settings.CACHES KEY_FUNCTION: Django's `prefix:version:key`, the test's number in the
    prefix."""
    return f"{key_prefix}.{_current_test}:{version}:{key}"


@functools.cache
def cache_server() -> redis.Redis:
    """The test cache's Redis server, spoken to directly."""
    return redis.Redis.from_url(settings.CACHES["default"]["LOCATION"])


def cache_empty() -> None:
    """Rate-limit counters and cached catalog pages gone: from now on the test's keys are new
    ones. Nothing is deleted, so no other run's key can be; what the
    tests before wrote expires or goes at the end of the run (cache_run_forget). A SCAN of
    the database before every test cost 17 ms with another run's 2,000 keys in it."""
    global _current_test
    _current_test = next(_test_numbers)


def cache_run_forget() -> None:
    """Delete every key this run wrote (none when the run stopped before it began, Redis
    down)."""
    server = cache_server()
    try:
        keys = list(server.scan_iter(match=f"{RUN_PREFIX}.*", count=1000))
    except redis.ConnectionError:
        return
    if keys:
        server.delete(*keys)


def cache_pointed_at(settings, location: str, options: dict | None = None) -> None:
    """The shared cache at `location` for this test (pytest-django's `settings`); the catalog
    pages stay in the process's memory."""
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": location,
            "OPTIONS": options or {},
        },
        settings.CATALOG_PAGE_CACHE: settings.CACHES[settings.CATALOG_PAGE_CACHE],
    }


def cache_unreachable(settings) -> None:
    """The shared cache on a port where nothing listens: every call is refused at once."""
    cache_pointed_at(settings, "redis://127.0.0.1:1/0")

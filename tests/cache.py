"""The shared cache as a test starts it: empty, in this process's keys only."""

import functools

import redis
from django.conf import settings


@functools.cache
def cache_server() -> redis.Redis:
    """The test cache's Redis server, spoken to directly."""
    return redis.Redis.from_url(settings.CACHES["default"]["LOCATION"])


def cache_empty() -> None:
    """Rate-limit counters and stored pages and answers gone, here and in Redis. Only this
    process's keys: cache.clear() would empty the whole database under another xdist
    worker's running test."""
    server = cache_server()
    keys = list(server.scan_iter(match=f"{settings.CACHES['default']['KEY_PREFIX']}:*"))
    if keys:
        server.delete(*keys)


def cache_pointed_at(settings, location: str, options: dict | None = None) -> None:
    """The shared cache at `location` for this test (pytest-django's `settings`)."""
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": location,
            "OPTIONS": options or {},
        }
    }


def cache_unreachable(settings) -> None:
    """The shared cache on a port where nothing listens: every call is refused at once."""
    cache_pointed_at(settings, "redis://127.0.0.1:1/0")

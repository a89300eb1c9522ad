"""Fixed-window counters in the shared cache: the API throttle and the few browser actions
that need a limit.

A window opens at its key's first use and lasts `period` seconds. On Redis a use costs one
round trip of a few bytes whatever the limit (a Lua script: count, start the expiry, read
what is left), where a list of request times would be read and written whole every time.
"""

import hashlib
from dataclasses import dataclass

from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from redis.exceptions import NoScriptError

_COUNT_SCRIPT = """
local uses = redis.call('INCR', KEYS[1])
if uses == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return {uses, redis.call('TTL', KEYS[1])}
"""
_COUNT_SCRIPT_SHA = hashlib.sha1(_COUNT_SCRIPT.encode()).hexdigest()


@dataclass(frozen=True)
class WindowCount:
    uses: int  # in the current window, this one included
    seconds_left: int  # until the window closes


def _redis_count(backend: RedisCache, key: str, period: int) -> WindowCount:
    cache_key = backend.make_and_validate_key(key)
    client = backend._cache.get_client(cache_key, write=True)
    try:
        uses, ttl = client.evalsha(_COUNT_SCRIPT_SHA, 1, cache_key, period)
    except NoScriptError:  # a Redis restarted or flushed forgets its scripts
        uses, ttl = client.eval(_COUNT_SCRIPT, 1, cache_key, period)
    return WindowCount(uses=int(uses), seconds_left=max(int(ttl), 1))


def window_count(*, key: str, period: int) -> WindowCount:
    """Count one use of `key` in its current window of `period` seconds."""
    backend = caches["default"]
    if isinstance(backend, RedisCache):
        return _redis_count(backend, key, period)
    # Other caches (a developer's file cache): add() opens the window, incr() counts.
    backend.add(key, 0, timeout=period)
    try:
        uses = backend.incr(key)
    except ValueError:  # the window closed between add() and incr()
        backend.add(key, 1, timeout=period)
        uses = 1
    return WindowCount(uses=uses, seconds_left=period)


def rate_limit_exceeded(*, scope: str, key: str, limit: int, period: int) -> bool:
    """Count one use of `scope` by `key`; True once more than `limit` uses fall in `period` s."""
    return window_count(key=f"ratelimit:{scope}:{key}", period=period).uses > limit

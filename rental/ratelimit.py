"""Fixed-window counters in the shared cache: the API throttle and the few browser actions
that need a limit.

A window opens at its key's first use and lasts `period` seconds. On Redis a use costs one
round trip of a few bytes whatever the limit (a Lua script: count, start the expiry, read
what is left), where a list of request times would be read and written whole every time.
A value kept in the cache can be read in that same round trip (stored_and_counted). Every
use is counted in Redis as it comes: a key is refused at its rate on every process at once.
"""

import functools
import hashlib
import math
from dataclasses import dataclass
from typing import Any

from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from redis.exceptions import NoScriptError


def _counted(window: str) -> str:
    """Lua: one use counted in the window at `window` (a key), opened for ARGV[1] seconds;
    `uses` and `left` (milliseconds) are what it says then."""
    return (
        f"local uses = redis.call('INCR', {window})\n"
        f"local left = redis.call('PTTL', {window})\n"
        f"if left < 0 then redis.call('EXPIRE', {window}, ARGV[1]); left = ARGV[1] * 1000 end\n"
    )


# {uses, milliseconds left}
_COUNT = _counted("KEYS[1]") + "return {uses, left}"
# KEYS[1] the stored value, KEYS[2] the window: {value, uses, milliseconds left}, or {}
# (nothing counted) when no value is stored.
_READ_AND_COUNT = (
    "local value = redis.call('GET', KEYS[1])\nif not value then return {} end\n"
    + _counted("KEYS[2]")
    + "return {value, uses, left}"
)


@dataclass(frozen=True)
class WindowCount:
    uses: int  # in the current window, this one included
    seconds_left: int  # until the window closes


@functools.cache
def _sha1(script: str) -> str:
    return hashlib.sha1(script.encode()).hexdigest()


def _redis_script(backend: RedisCache, script: str, keys: list[str], *args: Any) -> list:
    """`script` run on the cache's Redis with these cache keys (made as the cache makes them)."""
    cache_keys = [backend.make_and_validate_key(key) for key in keys]
    client = backend._cache.get_client(cache_keys[0], write=True)
    try:
        return client.evalsha(_sha1(script), len(cache_keys), *cache_keys, *args)
    except NoScriptError:  # a Redis restarted or flushed forgets its scripts
        return client.eval(script, len(cache_keys), *cache_keys, *args)


def _counted_in_redis(uses, milliseconds_left) -> WindowCount:
    return WindowCount(
        uses=int(uses), seconds_left=max(math.ceil(int(milliseconds_left) / 1000), 1)
    )


def window_count(*, key: str, period: int) -> WindowCount:
    """Count one use of `key` in its current window of `period` seconds."""
    backend = caches["default"]
    if isinstance(backend, RedisCache):
        return _counted_in_redis(*_redis_script(backend, _COUNT, [key], period))
    # Other caches (a developer's file cache): add() opens the window, incr() counts.
    backend.add(key, 0, timeout=period)
    try:
        uses = backend.incr(key)
    except ValueError:  # the window closed between add() and incr()
        backend.add(key, 1, timeout=period)
        uses = 1
    return WindowCount(uses=uses, seconds_left=period)


def stored_and_counted(*, key: str, window: str, period: int) -> tuple[Any, WindowCount] | None:
    """The value the cache keeps under `key` and, when there is one, a use of `window`
    counted (window_count); None, and nothing counted, when it keeps nothing. One round trip
    on Redis."""
    backend = caches["default"]
    if not isinstance(backend, RedisCache):
        value = backend.get(key)
        return None if value is None else (value, window_count(key=window, period=period))
    found = _redis_script(backend, _READ_AND_COUNT, [key, window], period)
    if not found:
        return None
    value, uses, milliseconds_left = found
    counted = _counted_in_redis(uses, milliseconds_left)
    # Read as the cache reads what it stored (Django's RedisSerializer; private, like the
    # client above: tests/api/test_throttle.py reads stored keys through here).
    return backend._cache._serializer.loads(value), counted  # type: ignore[attr-defined]


def _limit_key(scope: str, key: str) -> str:
    return f"ratelimit:{scope}:{key}"


def rate_limit_exceeded(*, scope: str, key: str, limit: int, period: int) -> bool:
    """Count one use of `scope` by `key`; True once more than `limit` uses fall in `period` s."""
    return window_count(key=_limit_key(scope, key), period=period).uses > limit


def rate_limit_uses(*, scope: str, key: str) -> int:
    """The uses of `scope` by `key` in its open window (0 when none is open); counts none."""
    return int(caches["default"].get(_limit_key(scope, key)) or 0)


def rate_limit_reset(*, scope: str, key: str) -> None:
    """Close the window of `scope` by `key` now: its next use opens a new one."""
    caches["default"].delete(_limit_key(scope, key))

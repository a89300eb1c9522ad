"""Fixed-window counters in the shared cache: the API throttle and the few browser actions
that need a limit.

A window opens at its key's first use and lasts `period` seconds. On Redis a use costs one
round trip of a few bytes whatever the limit (a Lua script: count, start the expiry, read
what is left), where a list of request times would be read and written whole every time.
A value kept in the cache can be read in that same round trip (stored_and_counted).

A caller that names the limit (the API throttle) may have a use counted in this process and
sent with the next one that goes to Redis, while its window is under half of the limit:
at most one use in BATCH_SHARE of the limit and SEND_WITHIN seconds are held back per
process, so a busy key costs a round trip per batch, not per request. Past half of the limit
every use is counted in Redis as it comes, so a key is refused at its rate as before: what
the processes held back (a batch each at most) may let that many more through, never fewer.
Limits under 2 x BATCH_SHARE hold nothing back, nor does a caller that names no limit (every
browser action's, rate_limit_exceeded). Should Redis stop
answering, a key used in the last second may still be let through until its batch is full or
SEND_WITHIN has passed (counted here, as any other use); then its requests are refused (503).
"""

import functools
import hashlib
import math
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from redis.exceptions import NoScriptError, RedisError, TimeoutError


def _counted(window: str) -> str:
    """Lua: ARGV[2] uses counted in the window at `window` (a key), opened for ARGV[1]
    seconds; `uses` and `left` (milliseconds) are what it says then."""
    return (
        f"local uses = redis.call('INCRBY', {window}, ARGV[2])\n"
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
# A use held back in this process: at most 1/BATCH_SHARE of the limit, MAX_BATCH uses...
BATCH_SHARE = 100
MAX_BATCH = 100
# ... and sent with the first use after this many seconds.
SEND_WITHIN = 1.0
# Two answers whose windows close this close (seconds) are of the same window: periods are
# whole seconds, and a window opens only once the last one closed.
SAME_WINDOW = 0.1
# Windows this process follows; past this, those closed are dropped (then all).
MAX_WINDOWS = 10_000


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


@dataclass
class _Window:
    """A window as this process last heard of it from Redis, and the uses it held back since."""

    closes: float  # time.monotonic()
    uses: int  # counted in Redis, by every process
    held: int  # counted here, not yet sent
    heard_at: float


_windows: dict[str, _Window] = {}
_windows_lock = threading.Lock()


def _seconds_left(closes: float, now: float) -> int:
    return max(math.ceil(closes - now), 1)


def counted_here(*, key: str, limit: int) -> WindowCount | None:
    """One use of `key` counted in this process, to be sent with the next one counted in
    Redis (window_count, stored_and_counted): while its window, as Redis last said, is under
    half of `limit`, with this process's batch not full nor SEND_WITHIN old. None otherwise:
    nothing counted."""
    batch = min(MAX_BATCH, limit // BATCH_SHARE)
    now = time.monotonic()
    with _windows_lock:
        window = _windows.get(key)
        if (
            window is None
            or key in _sending
            or now >= window.closes
            or now - window.heard_at >= SEND_WITHIN
            or window.held + 1 >= batch
            or 2 * (window.uses + window.held + 1) > limit
        ):
            return None
        window.held += 1
        return WindowCount(
            uses=window.uses + window.held, seconds_left=_seconds_left(window.closes, now)
        )


# Round trips on their way, per key: meanwhile nothing is held back (counted_here).
_sending: dict[str, int] = {}


@contextmanager
def _held_sent(key: str) -> Iterator[int]:
    """The uses of `key` held back in an open window, to be sent with a round trip. While it is
    on its way no use is held back (another thread's goes to Redis too), so the count here
    is never further behind than one batch. Should it fail before Redis counted them (any
    error but a timeout, after which Redis may have), they are held again."""
    with _windows_lock:
        window = _windows.get(key)
        held = 0
        if window is not None and time.monotonic() < window.closes:
            held, window.held = window.held, 0
        _sending[key] = _sending.get(key, 0) + 1
    try:
        yield held
    except TimeoutError:  # also when connecting timed out, which cannot be told apart
        raise
    except RedisError:
        _held_return(key, held)
        raise
    finally:
        with _windows_lock:
            if _sending[key] > 1:
                _sending[key] -= 1
            else:
                del _sending[key]


def _held_return(key: str, held: int) -> None:
    with _windows_lock:
        window = _windows.get(key)
        if window is not None:
            window.held += held


def _heard(key: str, uses, milliseconds_left) -> WindowCount:
    """What Redis said of the window of `key` after counting: remembered for counted_here."""
    now = time.monotonic()
    closes = now + int(milliseconds_left) / 1000
    with _windows_lock:
        window = _windows.get(key)
        # Held back while this round trip was on its way: sent with the next (those of a
        # window that closed meanwhile are not counted in the next).
        held = window.held if window is not None and now < window.closes else 0
        known = int(uses)
        if window is not None and abs(window.closes - closes) < SAME_WINDOW:
            # Of answers that crossed, the later count.
            known = max(known, window.uses)
        if window is None and len(_windows) >= MAX_WINDOWS:
            for closed in [name for name, other in _windows.items() if other.closes <= now]:
                del _windows[closed]
            if len(_windows) >= MAX_WINDOWS:
                _windows.clear()
        _windows[key] = _Window(closes=closes, uses=known, held=held, heard_at=now)
    return WindowCount(uses=int(uses), seconds_left=_seconds_left(closes, now))


def windows_forget() -> None:
    """Drop what this process knows of every window (a test starting afresh)."""
    with _windows_lock:
        _windows.clear()


def window_count(*, key: str, period: int, limit: int | None = None) -> WindowCount:
    """Count one use of `key` in its current window of `period` seconds; with its `limit`,
    in this process while it may (counted_here)."""
    backend = caches["default"]
    if isinstance(backend, RedisCache):
        counted = None if limit is None else counted_here(key=key, limit=limit)
        if counted is not None:
            return counted
        with _held_sent(key) as held:
            return _heard(key, *_redis_script(backend, _COUNT, [key], period, held + 1))
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
    counted (window_count, with the uses held back in this process); None, and nothing
    counted, when it keeps nothing. One round trip on Redis."""
    backend = caches["default"]
    if not isinstance(backend, RedisCache):
        value = backend.get(key)
        return None if value is None else (value, window_count(key=window, period=period))
    with _held_sent(window) as held:
        found = _redis_script(backend, _READ_AND_COUNT, [key, window], period, held + 1)
        if not found:
            _held_return(window, held)
            return None
        value, uses, milliseconds_left = found
        counted = _heard(window, uses, milliseconds_left)
    # Read as the cache reads what it stored (Django's RedisSerializer; private, like the
    # client above: tests/api/test_throttle.py reads stored keys through here).
    return backend._cache._serializer.loads(value), counted


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

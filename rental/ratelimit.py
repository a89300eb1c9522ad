"""Fixed-window counters in the shared cache: the API throttle and the few browser actions
that need a limit.

A window opens at its key's first use and lasts `period` seconds: `incr()` counts (Redis's
INCR keeps the expiry), and when no window is open `add()` opens one with its expiry, through
Django's cache API alone. Counting first makes a use two round trips in an open window (Django's
incr: EXISTS, INCR), the common case, rather than three.
Every use is counted in the cache as it comes: a key is refused at its rate on every process
at once.
"""

from dataclasses import dataclass

from django.core.cache import caches


@dataclass(frozen=True)
class WindowCount:
    uses: int  # in the current window, this one included
    seconds_left: int  # until the window closes, at most


def window_count(*, key: str, period: int) -> WindowCount:
    """Count one use of `key` in its current window of `period` seconds."""
    backend = caches["default"]
    try:
        uses = backend.incr(key)
    except ValueError:
        # No window open: this use opens one, unless another process just did (counted in it).
        uses = 1 if backend.add(key, 1, timeout=period) else backend.incr(key)
    return WindowCount(uses=uses, seconds_left=period)


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

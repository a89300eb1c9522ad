"""A fixed-window counter in the shared cache, for the few browser actions that need a limit."""

from django.core.cache import cache


def rate_limit_exceeded(*, scope: str, key: str, limit: int, period: int) -> bool:
    """Count one use of `scope` by `key`; True once more than `limit` uses fall in `period` s."""
    cache_key = f"ratelimit:{scope}:{key}"
    # add() starts the window only if none is open; incr() is atomic in Redis.
    cache.add(cache_key, 0, timeout=period)
    try:
        return cache.incr(cache_key) > limit
    except ValueError:  # the window closed between add() and incr()
        cache.add(cache_key, 1, timeout=period)
        return False

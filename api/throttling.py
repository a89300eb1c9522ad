from typing import Any

from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle

from accounts.apikeycache import api_key_cache_key
from accounts.models import ApiKey
from rental.ratelimit import WindowCount, stored_and_counted, window_count

SCOPE = "api"
# Set on the request when the key's use was counted as the key was read (api.authentication).
COUNTED_USE = "api_key_counted_use"


def throttle_rate() -> tuple[int, int] | None:
    """(requests, seconds) allowed, read at request time (a changed setting applies at once);
    None when the API is not throttled."""
    rate = api_settings.DEFAULT_THROTTLE_RATES.get(SCOPE)
    if rate is None:
        return None
    limit, period = ApiKeyRateThrottle().parse_rate(str(rate))
    assert limit is not None and period is not None  # a rate given parses to both
    return limit, period


def key_window(key_hash: str) -> str:
    """The cache key counting the requests of the API key with that hash."""
    return ApiKeyRateThrottle.cache_format % {"scope": SCOPE, "ident": f"key-{key_hash}"}


def key_stored_and_counted(*, key_hash: str, period: int) -> tuple[Any, WindowCount] | None:
    """What the cache keeps for the key with that hash (accounts.apikeycache: its values or
    the mark left once it was forgotten) and this request counted against the key's rate, in
    one round trip; None, and nothing counted, when the cache keeps nothing for it. Raises
    RedisError when the cache does not answer: the throttle cannot count, so the request is
    refused (503) before anything is read or written."""
    return stored_and_counted(
        key=api_key_cache_key(key_hash), window=key_window(key_hash), period=period
    )


class ApiKeyRateThrottle(SimpleRateThrottle):
    """Counts requests per API key (per user for a browser session, per IP otherwise).

    A counter per window (rental.ratelimit), not DRF's list of request times: that list is
    read and written whole on every request and grows with the allowed rate. A key found in
    the cache was counted in the round trip that read it (api.authentication): so a
    request with a valid key counts even when a permission then refuses it (403), as it does
    whenever the key was read from the database.
    """

    scope = SCOPE

    def __init__(self):
        # DRF's __init__ parses the rate; allow_request reads it per request instead.
        self.seconds_left = None

    def allow_request(self, request, view) -> bool:
        rate = throttle_rate()
        if rate is None:
            return True
        limit, period = rate
        count = getattr(request, COUNTED_USE, None)
        if count is None:
            count = window_count(key=self.get_cache_key(request, view), period=period)
        self.seconds_left = count.seconds_left
        return count.uses <= limit

    def wait(self) -> int | None:
        return self.seconds_left

    def get_cache_key(self, request, view) -> str:
        if isinstance(request.auth, ApiKey):
            return key_window(request.auth.key_hash)
        if request.user and request.user.is_authenticated:
            ident = f"user-{request.user.pk}"
        else:
            ident = f"ip-{self.get_ident(request)}"
        return self.cache_format % {"scope": self.scope, "ident": ident}

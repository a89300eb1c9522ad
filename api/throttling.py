from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle

from accounts.models import ApiKey
from rental.ratelimit import window_count

SCOPE = "api"
# Set on the request when the key's use was counted as the key was read (api.authentication).
COUNTED_USE = "api_key_counted_use"


def throttle_rate() -> tuple[int, int] | None:
    """(requests, seconds) allowed, read at request time (a changed setting applies at once);
    None when the API is not throttled."""
    rate = api_settings.DEFAULT_THROTTLE_RATES.get(SCOPE)
    return None if rate is None else ApiKeyRateThrottle().parse_rate(rate)


def key_window(key_hash: str) -> str:
    """The cache key counting the requests of the API key with that hash."""
    return ApiKeyRateThrottle.cache_format % {"scope": SCOPE, "ident": f"key-{key_hash}"}


class ApiKeyRateThrottle(SimpleRateThrottle):
    """Counts requests per API key (per user for a browser session, per IP otherwise).

    A counter per window (rental.ratelimit), not DRF's list of request times: that list is
    read and written whole on every request and grows with the allowed rate. A key's use is
    counted as the key is read from the cache, in one round trip (api.authentication).
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
        count = getattr(request, COUNTED_USE, None) or window_count(
            key=self.get_cache_key(request, view), period=period
        )
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

from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle

from accounts.models import ApiKey
from rental.ratelimit import window_count

SCOPE = "api"


def throttle_rate() -> tuple[int, int] | None:
    """(requests, seconds) allowed, read at request time (a changed setting applies at once);
    None when the API is not throttled."""
    rate = api_settings.DEFAULT_THROTTLE_RATES.get(SCOPE)
    if rate is None:
        return None
    limit, period = ApiKeyRateThrottle().parse_rate(str(rate))
    assert limit is not None and period is not None  # a rate given parses to both
    return limit, period


class ApiKeyRateThrottle(SimpleRateThrottle):
    """Counts requests per API key (per user for a browser session, per IP otherwise).

    A counter per window (rental.ratelimit), not DRF's list of request times: that list is
    read and written whole on every request and grows with the allowed rate.
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
        count = window_count(key=self.get_cache_key(request, view), period=period)
        self.seconds_left = count.seconds_left
        return count.uses <= limit

    def wait(self) -> int | None:
        return self.seconds_left

    def get_cache_key(self, request, view) -> str:
        if isinstance(request.auth, ApiKey):
            ident = f"key-{request.auth.key_hash}"
        elif request.user and request.user.is_authenticated:
            ident = f"user-{request.user.pk}"
        else:
            ident = f"ip-{self.get_ident(request)}"
        return self.cache_format % {"scope": self.scope, "ident": ident}

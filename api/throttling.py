from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle

from api.authentication import request_api_key
from rental.ratelimit import window_count


class ApiKeyRateThrottle(SimpleRateThrottle):
    """Counts requests per API key (per user for a browser session, per IP otherwise).

    A counter per window (rental.ratelimit), not DRF's list of request times: that list is
    read and written whole on every request and grows with the allowed rate.
    """

    scope = "api"

    def __init__(self):
        # DRF's __init__ parses the rate; allow_request reads it per request instead.
        self.seconds_left = None

    def allow_request(self, request, view) -> bool:
        # Read at request time, so a changed REST_FRAMEWORK setting applies at once.
        rate = api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)
        if rate is None:
            return True
        limit, period = self.parse_rate(rate)
        count = window_count(key=self.get_cache_key(request, view), period=period)
        self.seconds_left = count.seconds_left
        return count.uses <= limit

    def wait(self) -> int | None:
        return self.seconds_left

    def get_cache_key(self, request, view) -> str:
        api_key = request_api_key(request)
        if api_key is not None:
            ident = f"key-{api_key.pk}"
        elif request.user and request.user.is_authenticated:
            ident = f"user-{request.user.pk}"
        else:
            ident = f"ip-{self.get_ident(request)}"
        return self.cache_format % {"scope": self.scope, "ident": ident}

from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle

from api.authentication import request_api_key


class ApiKeyRateThrottle(SimpleRateThrottle):
    """Counts requests per API key (per user for a browser session, per IP otherwise)."""

    scope = "api"

    def get_rate(self):
        # Read at request time, so a changed REST_FRAMEWORK setting applies at once.
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)

    def get_cache_key(self, request, view):
        api_key = request_api_key(request)
        if api_key is not None:
            ident = f"key-{api_key.pk}"
        elif request.user and request.user.is_authenticated:
            ident = f"user-{request.user.pk}"
        else:
            ident = f"ip-{self.get_ident(request)}"
        return self.cache_format % {"scope": self.scope, "ident": ident}

"""When Redis does not answer.

What the cache only makes faster is computed again (rental.cachesafe). What cannot be done
safely without it, the rate limits (logging in, signing up, second-factor codes, "I've paid"),
is refused before it acts: a 503 page that says to retry shortly, never a 500. The API answers
the same in its own error shape (api.errors).
"""

import logging

from django.shortcuts import render
from django.utils.translation import gettext as _
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 30


class CacheUnreachableMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not isinstance(exception, RedisError):
            return None
        logger.error(
            "cache unreachable: %s %s answered 503: %s", request.method, request.path, exception
        )
        response = render(
            request,
            "503.html",
            {"retry_after": RETRY_AFTER_SECONDS, "title": _("Back in a moment")},
            status=503,
        )
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response

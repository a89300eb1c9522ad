"""The project's own middleware.

CacheUnreachableMiddleware, when Redis does not answer: the anonymous catalog pages do not
use it (their cache is in memory, catalog.views). What cannot be done safely without it, the
rate limits (logging in, signing up, second-factor codes, "I've paid"), is refused before it
acts: a 503 page that says to retry shortly, never a 500. The API answers the same in its own
error shape (api.errors).

DatabaseUnreachableMiddleware, when PostgreSQL does not answer in time (rental.database) or
refuses connections: the same 503 page, within the query deadline.

ContentSecurityPolicyMiddleware builds the store's policy once.
"""

import functools
import logging

from csp import middleware as csp_middleware
from csp.constants import HEADER, HEADER_REPORT_ONLY
from csp.utils import build_policy
from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.core.signals import setting_changed
from django.db import OperationalError
from django.dispatch import receiver
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
        return unavailable_page(request, "cache", exception)


def database_unavailable_page(request, error: Exception):
    """The store's 503 page for a request whose database did not answer in time (or refused
    the connection), drawn without another query: it names no account."""
    request.user = AnonymousUser()
    return unavailable_page(request, "database", error)


def unavailable_page(request, what: str, error: Exception):
    """The store's 503 page saying to retry shortly, `what` did not answer."""
    logger.error(
        "%s unreachable: %s %s answered 503: %s", what, request.method, request.path, error
    )
    response = render(
        request,
        "503.html",
        {"retry_after": RETRY_AFTER_SECONDS, "title": _("Back in a moment")},
        status=503,
    )
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


class DatabaseUnreachableMiddleware:
    """A view's OperationalError is a 503, never a 500 (the other middleware's are too,
    through handler500: api.errors.server_error)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if isinstance(exception, OperationalError):
            return database_unavailable_page(request, exception)
        return None


class ContentSecurityPolicyMiddleware(csp_middleware.CSPMiddleware):
    """django-csp's, with the store's policy built once per process: a response none of
    django-csp's decorators changed, for a request that asked no nonce, gets the header built
    for all (django-csp builds it again for every response). Any other goes through
    django-csp as before."""

    def process_response(self, request, response):
        plain = csp_middleware.PolicyParts()
        if (
            self.get_policy_parts(request=request, response=response) != plain
            or self.get_policy_parts(request=request, response=response, report_only=True) != plain
            or (settings.DEBUG and response.status_code in (500, 404))
        ):
            return super().process_response(request, response)
        for header, report_only, exempt in (
            (HEADER, False, "_csp_exempt"),
            (HEADER_REPORT_ONLY, True, "_csp_exempt_ro"),
        ):
            policy, excluded = _store_policy(report_only)
            if (
                policy
                and header not in response
                and not getattr(response, exempt, False)
                and not request.path_info.startswith(excluded)
            ):
                response[header] = policy
        # As django-csp: a nonce asked after the header is written is an error.
        request.csp_nonce = csp_middleware.CheckableLazyObject(self._csp_nonce_post_response)
        return response


@functools.cache
def _store_policy(report_only: bool) -> tuple[str, tuple[str, ...]]:
    """The policy of settings (CONTENT_SECURITY_POLICY or its _REPORT_ONLY) and the path
    prefixes it leaves out, as django-csp builds them."""
    name = "CONTENT_SECURITY_POLICY_REPORT_ONLY" if report_only else "CONTENT_SECURITY_POLICY"
    config = getattr(settings, name, None) or {}
    return build_policy(report_only=report_only), tuple(config.get("EXCLUDE_URL_PREFIXES") or ())


@receiver(setting_changed)
def _store_policy_forget(*, setting: str, **kwargs) -> None:
    if setting.startswith("CONTENT_SECURITY_POLICY"):
        _store_policy.cache_clear()

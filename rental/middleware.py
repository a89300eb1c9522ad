"""The project's own middleware.

CacheUnreachableMiddleware, when Redis does not answer: what the cache only makes faster is
computed again (rental.cachesafe). What cannot be done safely without it, the rate limits
(logging in, signing up, second-factor codes, "I've paid"), is refused before it acts: a 503
page that says to retry shortly, never a 500. The API answers the same in its own error shape
(api.errors).

KeptReadsMiddleware says which requests may be answered from the process's memory;
ContentSecurityPolicyMiddleware builds the store's policy once.
"""

import functools
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from csp import middleware as csp_middleware
from csp.constants import HEADER, HEADER_REPORT_ONLY
from csp.utils import build_policy
from django.conf import settings
from django.core.signals import setting_changed
from django.db import DEFAULT_DB_ALIAS, connections
from django.dispatch import receiver
from django.shortcuts import render
from django.utils.translation import gettext as _
from redis.exceptions import RedisError

from rental.changes import reads_from_memory

logger = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 30
# A browser that has just written reads the database for this long (KeptReadsMiddleware).
JUST_WROTE_COOKIE = "just_wrote"
JUST_WROTE_SECONDS = 3


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


def _writes_noted(wrote: list[bool]):
    """A database execute wrapper: notes in `wrote` that a statement wrote, unless inside
    unseen_write()."""

    def wrapper(execute, sql, params, many, context):
        if not wrote and not _unseen.get() and sql.lstrip()[:6].upper() in _WRITES:
            wrote.append(True)
        return execute(sql, params, many, context)

    return wrapper


_WRITES = frozenset({"INSERT", "UPDATE", "DELETE"})
_unseen: ContextVar[bool] = ContextVar("rental_unseen_write", default=False)


@contextmanager
def unseen_write() -> Iterator[None]:
    """Around a write of what no answer shows (a column rental.changes.watch() calls unseen:
    an API key's last use): it does not mark the browser as having written, so its next reads
    may still come from memory."""
    token = _unseen.set(True)
    try:
        yield
    finally:
        _unseen.reset(token)


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


class KeptReadsMiddleware:
    """Which requests may be answered from what the process keeps (rental.changes): reads
    only, and not those of a browser that has just written. A write's answer (a POST, or any
    request that wrote to the database: a GET that saved its session, say) marks the browser
    for a few seconds (a cookie): the page it goes to next, another tab, the next poll read
    the database, so its own change always shows there, even in the instant before the other
    processes have heard of it. First in MIDDLEWARE: the session is read from memory too, and
    saved inside it."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        token = reads_from_memory.set(request.method in ("GET", "HEAD") and _not_written(request))
        wrote: list[bool] = []
        try:
            with connections[DEFAULT_DB_ALIAS].execute_wrapper(_writes_noted(wrote)):
                response = self.get_response(request)
        finally:
            reads_from_memory.reset(token)
        safe = request.method in ("GET", "HEAD", "OPTIONS", "TRACE")
        if wrote or not (safe or getattr(request, _READS_ONLY, False)):
            response.set_cookie(
                JUST_WROTE_COOKIE,
                "1",
                max_age=JUST_WROTE_SECONDS,
                secure=settings.SESSION_COOKIE_SECURE,
                httponly=True,
                samesite="Lax",
            )
        return response


def _not_written(request) -> bool:
    return JUST_WROTE_COOKIE not in request.COOKIES


# Set on a request by reads_only().
_READS_ONLY = "_kept_reads_only"


@contextmanager
def reads_only(request) -> Iterator[None]:
    """Around a view that writes nothing whatever the method (the API's quote: a POST for
    its body): its request may be answered from memory as a GET's (KeptReadsMiddleware), and
    marks the browser as having written only if it did write."""
    setattr(request, _READS_ONLY, True)
    token = reads_from_memory.set(_not_written(request))
    try:
        yield
    finally:
        reads_from_memory.reset(token)

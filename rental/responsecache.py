"""Signed-in answers served from the cache while what they show stays the same.

The caller names a version of everything the answer reads (orders.versions: one query); the
answer is stored under that version and under who asks, for what path, in which language and
time zone: a stored answer is only ever served again to the same account, and any change to
what it shows makes a new version, so the next request renders afresh.

A stored page holds no CSRF token: forms are rendered with a placeholder that each answer
replaces with the token of the browser asking (django.middleware.csrf.get_token).
"""

import hashlib
from collections.abc import Callable
from typing import TypeVar

from django.contrib.messages import get_messages
from django.http import HttpRequest, HttpResponse
from django.middleware.csrf import get_token
from django.utils import timezone
from django.utils.translation import get_language

from rental.cachesafe import cache_get, cache_set

# Stored answers drop out of the cache by themselves after this (seconds). A stored answer is
# never stale (a change makes a new version), so this only bounds what Redis holds: an order
# page watched while nothing changes is rendered again once per LIFETIME (its payment poll
# draws the QR code again), and at 120 s those renders made the tail of every poll.
LIFETIME = 600
# Answers kept per path and version, whatever the number of queries sent.
MAX_QUERIES = 2
CSRF_PLACEHOLDER = "csrf-token-placeholder-7f3a9c"
_PLACEHOLDER = CSRF_PLACEHOLDER.encode()
_RENDERING_SHARED = "_rendering_shared_page"

T = TypeVar("T")


def csrf_placeholder(request: HttpRequest) -> dict:
    """Context processor: pages rendered to be stored get the placeholder as their token."""
    return {"csrf_token": CSRF_PLACEHOLDER} if getattr(request, _RENDERING_SHARED, False) else {}


def _key(request: HttpRequest, kind: str, version: str) -> str:
    # The path without its query: the answers of one path are stored together, by query
    # (cached_page), so that no sender of made-up queries can store more than a few.
    parts = [
        str(request.user.pk),
        request.path,
        request.headers.get("HX-Request", ""),
        get_language() or "",
        timezone.get_current_timezone_name(),
        version,
    ]
    return f"answer:{kind}:" + hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _with_token(request: HttpRequest, body: bytes) -> bytes:
    return body.replace(_PLACEHOLDER, get_token(request).encode()) if _PLACEHOLDER in body else body


def cached_page(
    request: HttpRequest, *, version: str, render: Callable[[], HttpResponse]
) -> HttpResponse:
    """`render()`'s page for this request, stored under `version` of what it shows."""
    if request.method != "GET" or len(get_messages(request)):
        return render()  # one-off messages belong to this answer alone
    key, query = _key(request, "page", version), request.META.get("QUERY_STRING", "")
    # {query: (body, content type)} of the latest MAX_QUERIES queries (a poll sends the
    # version of the part it shows; the language links carry the page's query along).
    stored: dict[str, tuple[bytes, str]] = cache_get(key) or {}
    if query not in stored:
        setattr(request, _RENDERING_SHARED, True)
        try:
            response = render()
        finally:
            setattr(request, _RENDERING_SHARED, False)
        if response.streaming:
            return response
        if response.status_code != 200 or response.cookies:
            response.content = _with_token(request, response.content)
            return response
        kept = dict(list(stored.items())[-(MAX_QUERIES - 1) :])
        stored = {**kept, query: (response.content, response["Content-Type"])}
        cache_set(key, stored, LIFETIME)
    body, content_type = stored[query]
    return HttpResponse(_with_token(request, body), content_type=content_type)


def cached_data(request: HttpRequest, *, version: str, compute: Callable[[], T]) -> T:
    """`compute()` (an API answer's data) for this request, stored under `version`."""
    key = _key(request, "data", version)
    data = cache_get(key)
    if data is None:
        data = compute()
        cache_set(key, data, LIFETIME)
    return data

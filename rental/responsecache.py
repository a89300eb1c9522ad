"""Pages and answers served from the shared cache (Django's cache framework, on Redis) while
what they show stays the same.

An answer names the versions of what it shows ("catalog", "account:12", "order:LG-2026-0001"):
a token each in the cache, replaced by the one service that changes what it stands for
(versions_bump: at once, and again as its transaction commits). The answer is stored with
the tokens it was rendered under, keyed by who asks, the path, the language and the time
zone, and served again while the cache holds the same tokens: tokens and answer come back in
one round trip. A token the cache lost (evicted, flushed) is made anew, so the next answer
renders afresh. What changes by the clock alone (a payment window closing) is stored no
longer than it holds.

Nothing is kept in the process: every process reads the same cache, so a change shows on all
of them at the next request. The release is in the cache's VERSION (settings.RELEASE): a
deploy never reads what another release stored. Should Redis not answer, the answer is
rendered (rental.cachesafe); a bump that was lost then leaves an answer at most LIFETIME old.

A stored page holds no CSRF token: forms are rendered with a placeholder that each answer
replaces with the token of the browser asking (django.middleware.csrf.get_token).
"""

import hashlib
import os
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any, TypeVar
from uuid import uuid4

from django.contrib.messages import get_messages
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.middleware.csrf import CSRF_ALLOWED_CHARS, get_token
from django.utils import timezone
from django.utils.translation import get_language

from rental.cachesafe import cache_add, cache_get_many, cache_set, cache_set_many

# Stored answers drop out of the cache by themselves after this (seconds): it bounds what Redis
# holds, and how long an answer may outlive a bump lost with Redis.
LIFETIME = 600
# Queries stored per path and versions, whatever the number of queries sent.
MAX_QUERIES = 2
CSRF_PLACEHOLDER = "csrf-token-placeholder-7f3a9c"
_PLACEHOLDER = CSRF_PLACEHOLDER.encode()
_RENDERING_SHARED = "_rendering_shared_page"
_UNSTORED = object()

T = TypeVar("T")


def version_key(name: str) -> str:
    return f"version:{name}"


def _bump(names: tuple[str, ...]) -> None:
    cache_set_many({version_key(name): uuid4().hex for name in names}, timeout=None)


def versions_bump(*names: str) -> None:
    """What `names` stand for changed: answers stored under them are not served again. Bumped
    at once (this transaction's own next reads render afresh), and again as it commits: an
    answer another request rendered meanwhile from the rows of before is not served either."""
    if not names:
        return
    _bump(names)
    if transaction.get_connection().in_atomic_block:
        transaction.on_commit(partial(_bump, names))


def _tokens(names: Iterable[str], found: dict[str, Any]) -> tuple[str, ...]:
    """The current token of each version, made anew where the cache holds none."""
    tokens = []
    for name in names:
        token = found.get(version_key(name))
        if token is None:
            token = uuid4().hex
            cache_add(version_key(name), token, None)
        tokens.append(token)
    return tuple(tokens)


def _stored(key: str, versions: list[str], missing: Any) -> tuple[tuple[str, ...], Any]:
    """The current tokens of `versions` and what `key` holds under them (else `missing`),
    in one round trip."""
    found = cache_get_many([*map(version_key, versions), key])
    tokens = _tokens(versions, found)
    stored_tokens, value = found.get(key, (None, missing))
    return tokens, value if stored_tokens == tokens else missing


def versioned_value(
    key: str,
    *,
    versions: list[str],
    compute: Callable[[], T],
    lifetime: Callable[[], int] | None = None,
) -> T:
    """`compute()` as stored under `key` with the current tokens of `versions` (one round
    trip), computed and stored for `lifetime()` seconds at most when it was not (asked before
    computing, only then). Raises whatever compute() raises, having stored nothing."""
    tokens, value = _stored(key, versions, _UNSTORED)
    if value is not _UNSTORED:
        return value
    seconds = _seconds(lifetime)
    value = compute()
    if seconds:
        cache_set(key, (tokens, value), seconds)
    return value


def _who(request: HttpRequest, kind: str) -> str:
    """The key of what `request` asks for, whoever else asks: an answer stored is only ever
    served again to the same account, in the same language and time zone. The path without
    its query: the queries of one path are stored together (cached_page), so that no sender
    of made-up queries can store more than a few."""
    parts = (
        str(request.user.pk),
        request.path,
        request.META.get("HTTP_HX_REQUEST", ""),
        get_language() or "",
        timezone.get_current_timezone_name(),
    )
    return f"answer:{kind}:" + hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _with_token(request: HttpRequest, body: bytes) -> bytes:
    return body.replace(_PLACEHOLDER, _token(request).encode()) if _PLACEHOLDER in body else body


def _token(request: HttpRequest) -> str:
    """A CSRF token for one answer: the browser's secret masked afresh, as Django's get_token
    masks it, with the mask drawn from one read of the system's randomness where Django reads
    it once per character (32 system calls, a tenth of a poll's time). Unlike get_token it
    does not send the cookie again to renew it: the pages rendered afresh do. A browser with
    no secret yet gets Django's token, which makes one and sets its cookie."""
    secret = request.META.get("CSRF_COOKIE")
    if not secret:
        return get_token(request)
    chars, index = CSRF_ALLOWED_CHARS, _CSRF_CHAR_INDEX
    mask = _random_string(len(secret), chars)
    cipher = "".join(
        chars[(index[s] + index[m]) % len(chars)] for s, m in zip(secret, mask, strict=True)
    )
    return mask + cipher


_CSRF_CHAR_INDEX = {char: position for position, char in enumerate(CSRF_ALLOWED_CHARS)}


def _random_string(length: int, chars: str) -> str:
    """`length` characters of `chars`, each as likely: bytes past the last whole multiple of
    len(chars) are drawn again, so no character is favoured."""
    limit = 256 - 256 % len(chars)
    drawn: list[str] = []
    while len(drawn) < length:
        drawn += [chars[byte % len(chars)] for byte in os.urandom(2 * length) if byte < limit]
    return "".join(drawn[:length])


def csrf_placeholder(request: HttpRequest) -> dict:
    """Context processor: pages rendered to be stored get the placeholder as their token."""
    return {"csrf_token": CSRF_PLACEHOLDER} if getattr(request, _RENDERING_SHARED, False) else {}


def _seconds(lifetime: Callable[[], int] | None) -> int:
    return LIFETIME if lifetime is None else max(0, min(LIFETIME, lifetime()))


def cached_page(
    request: HttpRequest,
    *,
    versions: list[str],
    render: Callable[[], HttpResponse],
    lifetime: Callable[[], int] | None = None,
) -> HttpResponse:
    """`render()`'s page for this request, stored under the tokens of `versions` of what it
    shows, for `lifetime()` seconds at most (how long it holds by the clock, asked before it
    renders). Only a 200 that sets no cookie is stored."""
    if request.method != "GET" or len(get_messages(request)):
        return render()  # one-off messages belong to this answer alone
    query = request.META.get("QUERY_STRING", "")
    key = _who(request, "page")
    tokens, stored = _stored(key, versions, {})
    if query in stored:
        body, content_type = stored[query]
        return HttpResponse(_with_token(request, body), content_type=content_type)
    seconds = _seconds(lifetime)
    setattr(request, _RENDERING_SHARED, True)
    try:
        response = render()
    finally:
        setattr(request, _RENDERING_SHARED, False)
    # Django's token: it also has the CSRF cookie sent again, renewing it (_token does not),
    # so a browser's cookie is renewed each time a page it reads is rendered afresh.
    get_token(request)
    if response.streaming:
        return response
    rendered_body = response.content
    response.content = _with_token(request, rendered_body)
    if response.status_code == 200 and not response.cookies and seconds:
        # The latest MAX_QUERIES queries (a poll sends the version of the part it shows; the
        # language links carry the page's query along).
        kept = dict(list(stored.items())[-(MAX_QUERIES - 1) :])
        page = (rendered_body, response["Content-Type"])
        cache_set(key, (tokens, {**kept, query: page}), seconds)
    return response


def cached_data(
    request: HttpRequest,
    *,
    versions: list[str],
    compute: Callable[[], T],
    lifetime: Callable[[], int] | None = None,
) -> T:
    """`compute()` (an API answer's data) for this request, stored under `versions`."""
    return versioned_value(
        _who(request, "data"), versions=versions, compute=compute, lifetime=lifetime
    )

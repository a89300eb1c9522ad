"""Signed-in answers served from the cache while what they show stays the same.

The caller names a version of everything the answer reads (orders.versions: one query); the
answer is stored under that version and under who asks, for what path, in which language and
time zone: a stored answer is only ever served again to the same account, and any change to
what it shows makes a new version, so the next request renders afresh.

Each process also keeps the answers it served last in memory (Kept), with the tags of what
they show (rental.changes): while none of those was heard changing, an answer is served again
without asking for its version, so a customer watching an order nobody touched costs no round
trip at all.

A stored page holds no CSRF token: forms are rendered with a placeholder that each answer
replaces with the token of the browser asking (django.middleware.csrf.get_token).
"""

import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, TypeVar

from django.contrib.messages import get_messages
from django.http import HttpRequest, HttpResponse
from django.middleware.csrf import CSRF_ALLOWED_CHARS, get_token
from django.utils import timezone
from django.utils.translation import get_language

from rental.cachesafe import cache_get, cache_set
from rental.changes import Feed, Seen, now_seen

# Stored answers drop out of the cache by themselves after this (seconds). A stored answer is
# never stale (a change makes a new version), so this only bounds what Redis holds: an order
# page watched while nothing changes is rendered again once per LIFETIME (its payment poll
# draws the QR code again), and at 120 s those renders made the tail of every poll.
LIFETIME = 600
# Answers kept per path and version, whatever the number of queries sent.
MAX_QUERIES = 2
# What each process keeps in memory (the latest used), whatever the number of customers:
# answers' data and sessions by count, pages by their bytes.
MAX_KEPT = 2_000
MAX_KEPT_PAGE_BYTES = 8 * 1024 * 1024
CSRF_PLACEHOLDER = "csrf-token-placeholder-7f3a9c"
_PLACEHOLDER = CSRF_PLACEHOLDER.encode()
_RENDERING_SHARED = "_rendering_shared_page"

T = TypeVar("T")


@dataclass(frozen=True)
class Version:
    """What an answer shows, in a word (`name`); the rental.changes tags it changes with and
    when it changes by the clock alone, for keeping it in memory (none: it is not kept)."""

    name: str
    tags: frozenset[str] = frozenset()
    valid_until: datetime | None = None


@dataclass(frozen=True)
class _Kept:
    seen: Seen
    tags: frozenset[str]
    valid_until: datetime
    value: Any
    weight: int


def _one(value) -> int:
    return 1


class Kept:
    """Answers kept in this process's memory, served again while nothing they show was heard
    changing (rental.changes) and their time has not come: the latest used, up to `limit`
    in all by `weight` (each counts 1 by default), and the latest `per_group` of keys that
    differ only in their last part (the queries of one page: nobody can fill the memory with
    made-up ones)."""

    def __init__(
        self,
        limit: int = MAX_KEPT,
        weight: Callable[[Any], int] = _one,
        per_group: int | None = None,
    ) -> None:
        self._limit = limit
        self._weight = weight
        self._per_group = per_group
        self._total = 0
        self._entries: OrderedDict[tuple, _Kept] = OrderedDict()
        self._groups: dict[tuple, list[tuple]] = {}
        self._lock = threading.Lock()
        _every_kept.append(self)

    def get(self, key: tuple, heard: tuple[Feed, Seen] | None) -> Any:
        if heard is None:
            return None
        feed = heard[0]
        with self._lock:
            kept = self._entries.get(key)
            if kept is None:
                return None
            if timezone.now() >= kept.valid_until or not feed.unchanged(kept.seen, kept.tags):
                self._drop(key)
                return None
            self._entries.move_to_end(key)
            return kept.value

    def put(
        self,
        key: tuple,
        heard: tuple[Feed, Seen] | None,
        *,
        tags: frozenset[str],
        valid_until: datetime | None,
        value,
    ) -> None:
        """Keep `value`, read after `heard` (now_seen() before reading anything of it), while
        none of `tags` is heard, until `valid_until` and for LIFETIME at most (what the
        stored answers live: what changes by the clock unnamed is read again as often)."""
        weight = self._weight(value)
        if heard is None or not tags or weight > self._limit:
            return
        latest = timezone.now() + timedelta(seconds=LIFETIME)
        kept = _Kept(
            seen=heard[1],
            tags=tags,
            valid_until=latest if valid_until is None else min(valid_until, latest),
            value=value,
            weight=weight,
        )
        with self._lock:
            self._drop(key)
            self._entries[key] = kept
            self._total += weight
            if self._per_group is not None:
                group = self._groups.setdefault(key[:-1], [])
                group.append(key)
                while len(group) > self._per_group:
                    self._drop(group[0])
            while self._total > self._limit:
                self._drop(next(iter(self._entries)))

    def _drop(self, key: tuple) -> None:
        kept = self._entries.pop(key, None)
        if kept is None:
            return
        self._total -= kept.weight
        group = self._groups.get(key[:-1])
        if group is not None:
            group.remove(key)
            if not group:
                del self._groups[key[:-1]]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._groups.clear()
            self._total = 0


_every_kept: list[Kept] = []


def kept_forget() -> None:
    """Drop every answer this process keeps (a test starting afresh)."""
    for kept in _every_kept:
        kept.clear()


_kept_pages = Kept(MAX_KEPT_PAGE_BYTES, weight=lambda page: len(page[0]), per_group=MAX_QUERIES)
_kept_data = Kept()


def csrf_placeholder(request: HttpRequest) -> dict:
    """Context processor: pages rendered to be stored get the placeholder as their token."""
    return {"csrf_token": CSRF_PLACEHOLDER} if getattr(request, _RENDERING_SHARED, False) else {}


def _key(request: HttpRequest, kind: str) -> tuple[str, ...]:
    """Who asks, for what, how: the key of the answer in memory, and of those stored in the
    cache under each version (_stored_key). The path without its query: the answers of one
    path are stored together, by query (cached_page), so that no sender of made-up queries
    can store more than a few."""
    return (
        kind,
        str(request.user.pk),
        request.path,
        request.headers.get("HX-Request", ""),
        get_language() or "",
        timezone.get_current_timezone_name(),
    )


def _stored_key(key: tuple[str, ...], version: Version) -> str:
    who = hashlib.sha256("\n".join(key).encode()).hexdigest()
    return f"answer:{key[0]}:{who}:" + hashlib.sha256(version.name.encode()).hexdigest()


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


def cached_page(
    request: HttpRequest, *, version: Callable[[], Version], render: Callable[[], HttpResponse]
) -> HttpResponse:
    """`render()`'s page for this request, stored under `version()` of what it shows (asked
    only when this process kept no current answer)."""
    if request.method != "GET" or len(get_messages(request)):
        return render()  # one-off messages belong to this answer alone
    key, query = _key(request, "page"), request.META.get("QUERY_STRING", "")
    heard = now_seen()  # before anything is read
    kept = _kept_pages.get((*key, query), heard)
    if kept is not None:
        body, content_type = kept
        return HttpResponse(_with_token(request, body), content_type=content_type)
    current = version()
    stored_key = _stored_key(key, current)
    # {query: (body, content type)} of the latest MAX_QUERIES queries (a poll sends the
    # version of the part it shows; the language links carry the page's query along).
    stored: dict[str, tuple[bytes, str]] = cache_get(stored_key) or {}
    if query not in stored:
        setattr(request, _RENDERING_SHARED, True)
        try:
            response = render()
        finally:
            setattr(request, _RENDERING_SHARED, False)
        # Django's token: it also has the CSRF cookie sent again, renewing it (_token does
        # not), so a browser's cookie is renewed each time a page it reads is rendered afresh.
        get_token(request)
        if response.streaming:
            return response
        if response.status_code != 200 or response.cookies:
            response.content = _with_token(request, response.content)
            return response
        kept_queries = dict(list(stored.items())[-(MAX_QUERIES - 1) :])
        stored = {**kept_queries, query: (response.content, response["Content-Type"])}
        cache_set(stored_key, stored, LIFETIME)
    _kept_pages.put(
        (*key, query),
        heard,
        tags=current.tags,
        valid_until=current.valid_until,
        value=stored[query],
    )
    body, content_type = stored[query]
    return HttpResponse(_with_token(request, body), content_type=content_type)


def cached_data(
    request: HttpRequest, *, version: Callable[[], Version], compute: Callable[[], T]
) -> T:
    """`compute()` (an API answer's data) for this request, stored under `version()`."""
    key = _key(request, "data")
    heard = now_seen()  # before anything is read
    data = _kept_data.get(key, heard)
    if data is not None:
        return data
    current = version()
    stored_key = _stored_key(key, current)
    data = cache_get(stored_key)
    if data is None:
        data = compute()
        cache_set(stored_key, data, LIFETIME)
    _kept_data.put(key, heard, tags=current.tags, valid_until=current.valid_until, value=data)
    return data

"""Catalog pages for anonymous visitors, served from the cache until stock or prices change.

Every write that changes what the pages show (an order placed or moving status, a staff edit,
the seed) calls `catalog_changed()`, which starts a new version in the shared cache. Each web
process also keeps the pages it served for one second, so a burst of visitors costs no cache
round trip: another process's change shows within that second, this process's at once. Holds
that lapse at their payment deadline change nothing in the database until the expiry beat
task moves the order; the page lifetime bounds that wait.
"""

from collections.abc import Callable
from time import monotonic
from typing import TypeVar
from uuid import uuid4

from django.contrib.messages import get_messages
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.utils.translation import get_language

from rental.cachesafe import cache_add, cache_get_many, cache_set

VERSION_KEY = "catalog:version"
PAGE_LIFETIME = 30  # seconds, in the shared cache
PROCESS_LIFETIME = 1.0  # seconds, in this process

T = TypeVar("T")

# key -> (stored at, value): whole pages (body, content type), never a response object, which
# middleware would change while serving one visitor; or the data an API answer is made of.
_served: dict[str, tuple[float, object]] = {}


def forget_served_pages() -> None:
    """Drop this process's copies (a new version, or a test starting afresh)."""
    _served.clear()


def _new_version() -> None:
    forget_served_pages()
    # Unreachable, the cache serves no page either; what it held ends with PAGE_LIFETIME.
    cache_set(VERSION_KEY, uuid4().hex, None)


def catalog_changed() -> None:
    """Start a new version of the catalog pages once the current transaction commits."""
    transaction.on_commit(_new_version)


def _cacheable(request: HttpRequest) -> bool:
    # Logged-in headers and one-off messages ("you are logged out") are someone's own page.
    return (
        request.method == "GET"
        and not request.GET
        and not request.user.is_authenticated
        and not len(get_messages(request))
    )


_UNSHARED = object()


def _shared_value(key: str, compute: Callable[[], object], shareable: Callable[[object], bool]):
    """`compute()` as of the current version, from the shared cache when it holds it."""
    # One round trip for both: the value is stored with the version it was computed at.
    found = cache_get_many([VERSION_KEY, key])
    version = found.get(VERSION_KEY)
    if version is None:
        version = uuid4().hex
        cache_add(VERSION_KEY, version, None)
    cached_version, value = found.get(key, (None, _UNSHARED))
    if cached_version == version:
        return value
    value = compute()
    if shareable(value):
        cache_set(key, (version, value), PAGE_LIFETIME)
    return value


def _served_value(key: str, compute: Callable[[], T], shareable: Callable[[T], bool]) -> T:
    """The value of `key` this process served less than PROCESS_LIFETIME ago, else the shared
    one (computed if need be); a value that is not `shareable` is neither kept nor shared."""
    now = monotonic()
    served = _served.get(key)
    if served is None or now - served[0] > PROCESS_LIFETIME:
        value = _shared_value(key, compute, shareable)  # type: ignore[arg-type]
        if not shareable(value):
            return value  # type: ignore[return-value]
        served = (now, value)
        _served[key] = served
    return served[1]  # type: ignore[return-value]


def catalog_value(name: str, compute: Callable[[], T]) -> T:
    """What `compute()` returns as long as the catalog (stock, prices) does not change: for
    reads anyone may see, the same for every visitor (the partner API's GPUs and quotes)."""
    return _served_value(f"catalog:value:{name}", compute, lambda _value: True)


def _page(response: HttpResponse) -> tuple[bytes, str] | HttpResponse:
    # Not a page to share: an error, or one that sets a cookie.
    if response.status_code != 200 or response.cookies:
        return response
    return response.content, response["Content-Type"]


def cached_page(
    request: HttpRequest, name: str, render_page: Callable[[], HttpResponse]
) -> HttpResponse:
    if not _cacheable(request):
        return render_page()
    page = _served_value(
        # Not "catalog:body:": pages stored by the previous release, (version, body, content
        # type), stay unread while it is replaced.
        f"catalog:page:{name}:{get_language()}",
        lambda: _page(render_page()),
        lambda value: not isinstance(value, HttpResponse),
    )
    if isinstance(page, HttpResponse):
        return page
    body, content_type = page
    return HttpResponse(body, content_type=content_type)

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
from uuid import uuid4

from django.contrib.messages import get_messages
from django.core.cache import cache
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.utils.translation import get_language

VERSION_KEY = "catalog:version"
PAGE_LIFETIME = 30  # seconds, in the shared cache
PROCESS_LIFETIME = 1.0  # seconds, in this process

# page key -> (stored at, body, content type); only whole pages, never a response object,
# which middleware would change while serving one visitor.
_served: dict[str, tuple[float, bytes, str]] = {}


def forget_served_pages() -> None:
    """Drop this process's copies (a new version, or a test starting afresh)."""
    _served.clear()


def _new_version() -> None:
    forget_served_pages()
    cache.set(VERSION_KEY, uuid4().hex, None)


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


def _shared_page(page_key: str, render_page: Callable[[], HttpResponse]):
    """(body, content type) of the current version, rendered if the shared cache lacks it."""
    # One round trip for both: the page is stored with the version it was rendered at.
    found = cache.get_many([VERSION_KEY, page_key])
    version = found.get(VERSION_KEY)
    if version is None:
        version = uuid4().hex
        cache.add(VERSION_KEY, version, None)
    cached_version, body, content_type = found.get(page_key, (None, None, None))
    if cached_version == version:
        return body, content_type
    response = render_page()
    if response.status_code != 200 or response.cookies:
        return response
    body, content_type = response.content, response["Content-Type"]
    cache.set(page_key, (version, body, content_type), PAGE_LIFETIME)
    return body, content_type


def cached_page(
    request: HttpRequest, name: str, render_page: Callable[[], HttpResponse]
) -> HttpResponse:
    if not _cacheable(request):
        return render_page()
    page_key = f"catalog:body:{name}:{get_language()}"
    now = monotonic()
    served = _served.get(page_key)
    if served is None or now - served[0] > PROCESS_LIFETIME:
        page = _shared_page(page_key, render_page)
        if isinstance(page, HttpResponse):
            return page  # not a page to share (an error, or one that sets a cookie)
        served = (now, *page)
        _served[page_key] = served
    _stored_at, body, content_type = served
    return HttpResponse(body, content_type=content_type)

"""Catalog pages for anonymous visitors, served from the cache until stock or prices change.

Every write that changes what the pages show (an order placed or moving status, a staff edit,
the seed) calls `catalog_changed()`, which starts a new version: pages are never older than
the last such write. Holds that lapse at their payment deadline change nothing in the
database until the expiry beat task moves the order; the short lifetime bounds that wait.
"""

from collections.abc import Callable
from uuid import uuid4

from django.contrib.messages import get_messages
from django.core.cache import cache
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.utils.translation import get_language

VERSION_KEY = "catalog:version"
PAGE_LIFETIME = 30  # seconds


def catalog_changed() -> None:
    """Start a new version of the catalog pages once the current transaction commits."""
    transaction.on_commit(lambda: cache.set(VERSION_KEY, uuid4().hex, None))


def _cacheable(request: HttpRequest) -> bool:
    # Logged-in headers and one-off messages ("you are logged out") are someone's own page.
    return (
        request.method == "GET"
        and not request.GET
        and not request.user.is_authenticated
        and not len(get_messages(request))
    )


def cached_page(
    request: HttpRequest, name: str, render_page: Callable[[], HttpResponse]
) -> HttpResponse:
    if not _cacheable(request):
        return render_page()
    page_key = f"catalog:page:{name}:{get_language()}"
    # One round trip for both: the page is stored with the version it was rendered at.
    found = cache.get_many([VERSION_KEY, page_key])
    version = found.get(VERSION_KEY)
    if version is None:
        version = uuid4().hex
        cache.add(VERSION_KEY, version, None)
    cached_version, response = found.get(page_key, (None, None))
    if cached_version != version:
        response = render_page()
        if response.status_code == 200 and not response.cookies:
            cache.set(page_key, (version, response), PAGE_LIFETIME)
    return response

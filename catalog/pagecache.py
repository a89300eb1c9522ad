"""Catalog pages for anonymous visitors, and what the partner API reads of the catalog, served
from the shared cache until stock or prices change (rental.responsecache).

Every write that changes what they show (an order placed or moving status, a staff edit, the
seed) calls `catalog_changed()`, which replaces the catalog's version (at once and again as
it commits). Each
web process also keeps the values it read for one second, the latest MAX_SERVED of them, so a
burst of partners costs no cache round trip: a little inexact for the sake of simplicity (a
change shows everywhere within that second), never a copy that needs telling. Holds that
lapse at their payment deadline change nothing in the database until the expiry beat task
moves the order; the page lifetime bounds that wait.
"""

import threading
from collections import OrderedDict
from collections.abc import Callable
from time import monotonic
from typing import Any, TypeVar

from django.contrib.messages import get_messages
from django.http import HttpRequest, HttpResponse

from rental.responsecache import cached_page, versioned_value, versions_bump

CATALOG = "catalog"
# What staff set up for every page (GPUs, environments, prices, chains, currencies): the
# customers' own pages show it too (orders.versions).
STORE = "store"
PAGE_LIFETIME = 30  # seconds, in the shared cache
PROCESS_LIFETIME = 1.0  # seconds, in this process
MAX_SERVED = 256  # values kept in this process (the valid quotes are a few hundred at most)

T = TypeVar("T")

# key -> (read at, value), the latest used last.
_served: OrderedDict[str, tuple[float, Any]] = OrderedDict()
_served_lock = threading.Lock()


def forget_served_pages() -> None:
    """Drop this process's copies (a test starting afresh)."""
    with _served_lock:
        _served.clear()


def catalog_changed() -> None:
    """Start a new version of the catalog (rental.responsecache.versions_bump)."""
    versions_bump(CATALOG)


def store_changed() -> None:
    """A staff edit or the seed changed what every page may show (the catalog with it)."""
    versions_bump(CATALOG, STORE)


def catalog_value(name: str, compute: Callable[[], T]) -> T:
    """What `compute()` returns as long as the catalog (stock, prices) does not change: for
    reads anyone may see, the same for every visitor (the partner API's GPUs and quotes)."""
    key = f"catalog:value:{name}"
    now = monotonic()
    with _served_lock:
        served = _served.get(key)
    if served is not None and now - served[0] <= PROCESS_LIFETIME:
        return served[1]
    value = versioned_value(
        key, versions=[CATALOG], compute=compute, lifetime=lambda: PAGE_LIFETIME
    )
    with _served_lock:
        _served[key] = (now, value)
        _served.move_to_end(key)
        while len(_served) > MAX_SERVED:
            _served.popitem(last=False)
    return value


def catalog_page(request: HttpRequest, render_page: Callable[[], HttpResponse]) -> HttpResponse:
    """A catalog page, from the shared cache for anonymous visitors: signed-in headers and
    one-off messages ("you are logged out") are someone's own page."""
    if request.GET or request.user.is_authenticated or len(get_messages(request)):
        return render_page()
    return cached_page(
        request, versions=[CATALOG], render=render_page, lifetime=lambda: PAGE_LIFETIME
    )

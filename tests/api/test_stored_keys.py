"""Keys verified a few seconds ago answer from the cache (accounts.apikeycache), and stop at
once when revoked, when the password changes or when staff change the account."""

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import URLResolver, get_resolver

from accounts.apikeycache import api_key_cache_key
from accounts.services import account_password_changed, api_key_revoke
from tests.accounts.helpers import account_deactivated_by_staff
from tests.api.conftest import key_client

pytestmark = pytest.mark.django_db

URL = "/api/v1/environments/"


def test_a_stored_key_revoked_is_refused_at_the_next_request(customer_key, api):
    assert api.get(URL).status_code == 200
    assert api.get(URL).status_code == 200  # from the stored key
    api_key_revoke(api_key=customer_key[0])
    assert api.get(URL).status_code == 401


def test_a_stored_key_is_refused_once_the_password_changed(customer, customer_key, api):
    assert api.get(URL).status_code == 200
    account_password_changed(user=customer)
    assert api.get(URL).status_code == 401


def test_a_stored_key_stops_when_staff_deactivate_the_account(
    admin_client, customer, customer_key, api
):
    assert api.get(URL).status_code == 200
    account_deactivated_by_staff(admin_client, customer)
    assert api.get(URL).status_code == 401


def test_the_stored_key_holds_no_password_hash_and_no_key(customer, customer_key, api):
    api_key, raw_key = customer_key
    api.get(URL)
    stored = repr(cache.get(api_key_cache_key(api_key.key_hash)))
    assert customer.password not in stored
    assert raw_key not in stored


def test_an_unknown_key_is_not_stored_nor_counted(db):
    assert key_client("lg_00000000_nope").get(URL).status_code == 401
    assert key_client("lg_00000000_nope").get(URL).status_code == 401
    assert not [key for key in cache._cache.get_client().keys(cache.make_key("*api?key*"))]


QUOTE_URL = "/api/v1/quotes/"
QUOTE = {"gpu": "h100-sxm", "environment": "pytorch", "quantity": 1, "term_days": 7}


def test_a_stored_key_revoked_is_refused_at_the_next_quote(customer_key, api, gpu, pytorch):
    assert api.post(QUOTE_URL, QUOTE, format="json").status_code == 200
    assert api.post(QUOTE_URL, QUOTE, format="json").status_code == 200  # the stored key
    api_key_revoke(api_key=customer_key[0])
    assert api.post(QUOTE_URL, QUOTE, format="json").status_code == 401


def test_only_views_that_write_nothing_take_a_posted_key_from_the_cache():
    """Writes always read their key from the database: the quote alone is let off, and it
    writes nothing (tests/api/test_query_counts.py counts its queries)."""
    assert {
        view.__name__
        for view in _views(get_resolver())
        if getattr(view, "cached_key_suffices", False)
    } == {"QuoteApi"}


def _views(resolver) -> set[type]:
    """Every DRF view class the URLs reach."""
    views = set()
    for pattern in resolver.url_patterns:
        if isinstance(pattern, URLResolver):
            views |= _views(pattern)
        elif isinstance(getattr(pattern.callback, "cls", None), type):
            views.add(pattern.callback.cls)
    return views


def test_a_quote_from_the_stored_key_writes_nothing(customer_key, api, gpu, pytorch):
    api.post(QUOTE_URL, QUOTE, format="json")
    with CaptureQueriesContext(connection) as queries:
        assert api.post(QUOTE_URL, QUOTE, format="json").status_code == 200
    assert not [q for q in queries.captured_queries if not q["sql"].startswith("SELECT")]

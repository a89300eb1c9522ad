"""No sender can grow a web process's memory, nor the shared cache, with made-up quotes: the
quote's key is built from the validated configuration ("1", "01" and "1.0" are one quantity),
and what a process keeps is bounded (catalog.pagecache.MAX_SERVED)."""

import pytest
from django.core.cache import cache
from rest_framework.test import APIRequestFactory, force_authenticate

from api.views.orders import QuoteApi
from catalog import pagecache

pytestmark = pytest.mark.django_db

BODIES = 10_000


def _bodies():
    """10,000 distinct bodies: 8 quantities, each written with up to 400 leading zeros, the
    term as a number or a string, with or without an empty description."""
    for index in range(BODIES):
        zeros, quantity, variant = index % 400, 1 + index // 400 % 8, index // 3200
        body = {
            "gpu": "h100-sxm",
            "environment": "pytorch",
            "quantity": "0" * zeros + str(quantity),
            "term_days": 7 if variant % 2 else "7",
        }
        if variant >= 2:
            body["environment_details"] = ""
        yield body


def test_ten_thousand_distinct_quote_bodies_keep_memory_and_cache_bounded(settings, customer, gpu):
    # One sender, unthrottled: what the bodies do, not what the rate stops.
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {}}
    view, factory = QuoteApi.as_view(), APIRequestFactory()
    bodies = list(_bodies())
    assert len({repr(body) for body in bodies}) == BODIES
    priced = 0
    for body in bodies:
        request = factory.post("/api/v1/quotes/", body, format="json")
        force_authenticate(request, user=customer)
        response = view(request)
        assert response.status_code == 200, response.data
        priced += response.data["quantity"] == int(body["quantity"])
    assert priced == BODIES
    assert len(pagecache._served) <= 8  # one per configuration, whatever the spelling
    stored = list(
        cache._cache.get_client().scan_iter(match=cache.make_key("*catalog:value:api:quote:*"))
    )
    assert len(stored) <= 8


def test_what_a_process_keeps_is_bounded_whatever_the_names():
    for index in range(pagecache.MAX_SERVED * 3):
        pagecache.catalog_value(f"test:{index}", lambda index=index: index)
    assert len(pagecache._served) == pagecache.MAX_SERVED

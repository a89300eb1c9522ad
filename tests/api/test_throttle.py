"""The API's rate limit: refused past the rate, at the same few bytes per request whatever the
rate (a counter per window, not a list of request times)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.services import api_key_touch
from tests.redis_calls import redis_sent

pytestmark = pytest.mark.django_db


@pytest.fixture
def rate(settings):
    def set_rate(value: str) -> None:
        settings.REST_FRAMEWORK = {
            **settings.REST_FRAMEWORK,
            "DEFAULT_THROTTLE_RATES": {"api": value},
        }

    return set_rate


def test_past_the_rate_the_request_is_refused_with_the_wait(api, gpu, rate):
    rate("5/min")
    statuses = [api.get("/api/v1/gpus/").status_code for _ in range(6)]
    assert statuses == [200] * 5 + [429]
    refused = api.get("/api/v1/gpus/")
    assert refused.json()["error"]["code"] == "throttled"
    assert 0 < int(refused["Retry-After"]) <= 60


def test_a_request_costs_the_same_few_bytes_whatever_the_rate(api, gpu, rate):
    """A throttle that keeps the time of every request reads and writes a list growing with
    the allowed rate; a counter per window sends the same few bytes every time."""
    url = "/api/v1/environments/"
    rate(None)
    with redis_sent() as unthrottled:
        assert api.get(url).status_code == 200
    rate("100000/min")
    for _ in range(200):
        api.get(url)
    with redis_sent() as later:
        for _ in range(100):
            assert api.get(url).status_code == 200
    assert unthrottled == []  # an unthrottled API answers without the cache
    # Each time, in the open window: counted (Django's incr: EXISTS, INCR), the same two
    # commands and bytes whatever the rate.
    assert len(later) == 200
    assert len(set(later)) == 2 and max(later) < 400


def test_last_used_is_written_at_most_once_a_minute_and_stays_right_to_the_minute(
    customer_key, django_assert_num_queries
):
    api_key, _raw = customer_key
    start = timezone.now()
    api_key_touch(api_key=api_key, now=start)
    with django_assert_num_queries(0):
        api_key_touch(api_key=api_key, now=start + timedelta(seconds=59))
    api_key_touch(api_key=api_key, now=start + timedelta(seconds=61))
    api_key.refresh_from_db()
    assert api_key.last_used_at == start + timedelta(seconds=61)


def test_on_the_file_cache_of_make_run_the_rate_still_holds(api, gpu, rate, settings, tmp_path):
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(tmp_path),
        }
    }
    rate("3/min")
    statuses = [api.get("/api/v1/environments/").status_code for _ in range(4)]
    assert statuses == [200] * 3 + [429]

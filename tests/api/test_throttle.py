"""The API's rate limit: refused past the rate, at one small Redis round trip per request."""

from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.apikeycache import api_keys_forget
from accounts.services import api_key_touch
from tests.cache import cache_server
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


def test_a_request_costs_one_round_trip_of_the_same_size_whatever_the_rate(api, gpu, rate):
    """A throttle that keeps the time of every request reads and writes a list growing with
    the allowed rate; a counter per window sends the same few bytes every time, in the round
    trip that reads the stored key."""
    url = "/api/v1/environments/"  # an answer read afresh every time (no stored catalog)
    api.get(url)  # the key is read from the database and stored (accounts.apikeycache)
    rate(None)
    with redis_sent() as unthrottled:
        assert api.get(url).status_code == 200
    rate("100000/min")
    with redis_sent() as first:
        assert api.get(url).status_code == 200
    for _ in range(200):
        api.get(url)
    with redis_sent() as later:
        for _ in range(100):
            assert api.get(url).status_code == 200
    assert len(unthrottled) == len(first) == 1  # the stored key (and the count)
    assert len(later) == 100  # one each: the stored key with the count
    assert len(set(later)) == 1 and max(later) < 400  # bytes, whatever the rate


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


def test_on_the_file_cache_of_make_run_the_key_is_stored_and_the_rate_still_holds(
    api, gpu, rate, settings, tmp_path
):
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(tmp_path),
        }
    }
    rate("3/min")
    statuses = [api.get("/api/v1/environments/").status_code for _ in range(4)]
    assert statuses == [200] * 3 + [429]  # the first read the key, the others the stored key


def test_a_key_read_again_after_it_was_forgotten_counts_once(api, customer_key, gpu, rate):
    """The forgotten mark is counted with its reading; the key then read from the database
    is not counted a second time."""
    rate("4/min")
    assert api.get("/api/v1/environments/").status_code == 200
    api_keys_forget(key_hashes=[customer_key[0].key_hash])
    statuses = [api.get("/api/v1/environments/").status_code for _ in range(4)]
    assert statuses == [200] * 3 + [429]


def test_a_redis_that_forgot_its_scripts_still_counts(api, gpu, rate):
    rate("3/min")
    statuses = [api.get("/api/v1/environments/").status_code for _ in range(2)]
    cache_server().script_flush()  # as after a restart
    statuses += [api.get("/api/v1/environments/").status_code for _ in range(2)]
    assert statuses == [200] * 3 + [429]

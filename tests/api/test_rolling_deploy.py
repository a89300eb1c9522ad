"""A rolling deploy runs two releases at once on one cache: neither reads what the other stored
as if it were its own (the release is in every key: settings.CACHES VERSION), and an API key
stored with one field fewer than this release's models still answers (accounts.apikeycache:
dicts by field name, under a fingerprint of the fields)."""

import pytest
from django.conf import settings
from django.core.cache import cache

from accounts.apikeycache import (
    _KEY_FIELDS,
    SCHEMA,
    USER_FIELDS,
    api_key_cache_key,
    schema_fingerprint,
)
from rental.release import code_release

pytestmark = pytest.mark.django_db

URL = "/api/v1/environments/"


def test_a_key_stored_by_a_model_with_one_field_fewer_answers_200(api, customer, customer_key):
    """As a release whose User had no `time_zone` yet stored it, under the key read here: the
    field is read from the database when asked for, never taken from another attribute."""
    api_key, _raw = customer_key
    assert api.get(URL).status_code == 200  # stored by this release
    key = api_key_cache_key(api_key.key_hash)
    stored = cache.get(key)
    del stored["user"]["time_zone"]
    cache.set(key, stored, 10)
    response = api.get(URL)
    assert response.status_code == 200
    assert response.wsgi_request.user.time_zone == customer.time_zone  # deferred, then read


def test_what_the_release_before_stored_positionally_is_not_read_as_a_key(api, customer_key):
    """The session-15 format: lists of values in the order of the model's fields."""
    api_key, _raw = customer_key
    cache.set(f"api-key:{api_key.key_hash}", ([1, 2], [3], True), 10)
    cache.set(api_key_cache_key(api_key.key_hash), ([1, 2], [3], True), 10)
    assert api.get(URL).status_code == 200


def test_a_model_with_one_field_fewer_stores_its_keys_under_another_fingerprint():
    assert schema_fingerprint(_KEY_FIELDS, USER_FIELDS - {"time_zone"}) != SCHEMA


def test_every_cache_key_holds_the_release(tmp_path):
    assert settings.RELEASE in cache.make_key("anything")
    (tmp_path / "app.py").write_text("A = 1\n")
    before = code_release(tmp_path)
    (tmp_path / "app.py").write_text("A = 2\n")
    assert code_release(tmp_path) != before

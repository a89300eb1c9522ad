"""Keys verified a few seconds ago answer from the cache (accounts.apikeycache), and stop at
once when revoked, when the password changes or when staff change the account."""

import pytest
from django.core.cache import cache

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
    assert not [key for key in cache._cache.get_client().keys("*api?key*")]

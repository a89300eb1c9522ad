"""An API key is read from the database at every request (one indexed query with its
account): revoked, its password changed or its account deactivated by staff, it is refused at
its very next request, a read or a quote as much as a write."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.services import account_password_changed, api_key_revoke
from tests.accounts.helpers import account_deactivated_by_staff

pytestmark = pytest.mark.django_db

URL = "/api/v1/environments/"
QUOTE_URL = "/api/v1/quotes/"
QUOTE = {"gpu": "h100-sxm", "environment": "pytorch", "quantity": 1, "term_days": 7}


def test_a_revoked_key_is_refused_at_the_next_request(customer_key, api):
    assert api.get(URL).status_code == 200
    api_key_revoke(api_key=customer_key[0])
    assert api.get(URL).status_code == 401


def test_a_key_is_refused_once_the_password_changed(customer, customer_key, api):
    assert api.get(URL).status_code == 200
    account_password_changed(user=customer)
    assert api.get(URL).status_code == 401


def test_a_key_stops_when_staff_deactivate_the_account(admin_client, customer, customer_key, api):
    assert api.get(URL).status_code == 200
    account_deactivated_by_staff(admin_client, customer)
    assert api.get(URL).status_code == 401


def test_a_revoked_key_is_refused_at_the_next_quote(customer_key, api, gpu, pytorch):
    assert api.post(QUOTE_URL, QUOTE, format="json").status_code == 200
    api_key_revoke(api_key=customer_key[0])
    assert api.post(QUOTE_URL, QUOTE, format="json").status_code == 401


def test_a_quote_writes_nothing(customer_key, api, gpu, pytorch):
    api.post(QUOTE_URL, QUOTE, format="json")  # the key's last use is written once a minute
    with CaptureQueriesContext(connection) as queries:
        assert api.post(QUOTE_URL, QUOTE, format="json").status_code == 200
    assert not [q for q in queries.captured_queries if not q["sql"].startswith("SELECT")]

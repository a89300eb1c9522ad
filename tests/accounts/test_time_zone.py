"""Times in the customer's own zone, named next to them: taken from the browser at sign-up,
changed on the account page; visitors see the store's zone."""

from datetime import UTC, datetime

import pytest

from accounts.models import User
from tests.accounts.helpers import code_in, last_mail_to
from tests.factories import OrderFactory

pytestmark = pytest.mark.django_db

PASSWORD = "correct-Horse-battery-9"
# 13:05 UTC: 14:05 in Paris (winter), 08:05 in New York.
CREATED = datetime(2026, 12, 1, 13, 5, tzinfo=UTC)


def sign_up(client, time_zone: str) -> User:
    client.post(
        "/en/accounts/signup/",
        {
            "first_name": "Ada",
            "last_name": "Lovelace",
            "email": "ada@example.com",
            "password1": PASSWORD,
            "password2": PASSWORD,
            "time_zone": time_zone,
        },
    )
    return User.objects.get(email="ada@example.com")


def test_sign_up_keeps_the_browsers_time_zone(client, worker_runs):
    page = client.get("/en/accounts/signup/").content.decode()
    assert 'type="hidden" name="time_zone"' in page
    assert "/static/js/time-zone.js" in page
    with worker_runs():
        user = sign_up(client, "America/New_York")
    assert user.time_zone == "America/New_York"
    assert last_mail_to("ada@example.com")  # the sign-up went through


@pytest.mark.parametrize("sent", ["Mars/Olympus_Mons", "x" * 500, ""])
def test_an_unknown_browser_zone_falls_back_to_the_stores_without_refusing_the_sign_up(
    client, worker_runs, sent
):
    with worker_runs():
        user = sign_up(client, sent)
    assert user.time_zone == ""
    assert code_in(last_mail_to("ada@example.com"))


def test_order_times_are_in_the_customers_zone_and_name_it(client, customer):
    OrderFactory(user=customer, created_at=CREATED)
    client.force_login(customer)
    paris = client.get("/en/account/orders/").content.decode()
    assert "14:05 (Europe/Paris)" in paris

    customer.time_zone = "America/New_York"
    customer.save()
    new_york = client.get("/en/account/orders/").content.decode()
    assert "(America/New_York)" in new_york
    assert "8:05" in new_york and "(Europe/Paris)" not in new_york


def test_the_profile_page_changes_the_zone_and_refuses_an_unknown_one(client, customer):
    client.force_login(customer)
    page = client.get("/fr/account/").content.decode()
    assert '<option value="Asia/Tokyo">Asia/Tokyo</option>' in page
    saved = client.post(
        "/fr/account/",
        {"first_name": "Ada", "last_name": "L", "language": "fr", "time_zone": "Asia/Tokyo"},
    )
    assert saved.status_code == 302
    customer.refresh_from_db()
    assert customer.time_zone == "Asia/Tokyo"

    refused = client.post(
        "/fr/account/",
        {"first_name": "Ada", "last_name": "L", "language": "fr", "time_zone": "Mars/Base"},
    )
    assert refused.status_code == 200
    assert "time_zone" in refused.context["form"].errors
    customer.refresh_from_db()
    assert customer.time_zone == "Asia/Tokyo"

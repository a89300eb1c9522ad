"""What every signed-in request reads first: its session (rental.sessions) and its account
with whether it has a second factor (accounts.backends), each in one query written once.
Django's own rules still hold: an expired session or a deactivated account signs nobody in."""

from datetime import timedelta

import pytest
from django.contrib.auth import BACKEND_SESSION_KEY
from django.contrib.sessions.models import Session
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from django_otp.plugins.otp_totp.models import TOTPDevice

from accounts.two_factor import signed_in_account, two_factor_enabled
from tests.accounts.two_factor import SecondFactorClient

pytestmark = pytest.mark.django_db

ORDERS = "/fr/account/orders/"


def test_a_session_signs_its_account_in_with_two_queries(client, customer):
    client.force_login(customer)
    with CaptureQueriesContext(connection) as queries:
        request = client.get("/fr/account/ssh-keys/").wsgi_request
    assert request.user == customer
    session, account = queries.captured_queries[:2]
    assert "django_session" in session["sql"] and "accounts_user" in account["sql"]


def test_an_expired_session_signs_nobody_in(client, customer):
    client.force_login(customer)
    Session.objects.update(expire_date=timezone.now() - timedelta(seconds=1))
    response = client.get(ORDERS)
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_a_deactivated_account_is_signed_out(client, customer):
    client.force_login(customer)
    customer.is_active = False
    customer.save(update_fields=["is_active"])
    response = client.get(ORDERS)
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_an_unknown_account_signs_nobody_in(client, customer):
    client.force_login(customer)
    customer.delete()
    assert client.get(ORDERS).status_code == 302


def test_the_account_says_whether_it_has_a_confirmed_authenticator(customer):
    def both() -> tuple[bool, bool]:
        loaded = signed_in_account(user_id=customer.pk)
        return loaded.has_second_factor, two_factor_enabled(user=customer)

    assert both() == (False, False)
    device = TOTPDevice.objects.create(user=customer, name="app", confirmed=False)
    assert both() == (False, False)  # enrolment started, not confirmed
    device.confirmed = True
    device.save(update_fields=["confirmed"])
    assert both() == (True, True)
    assert signed_in_account(user_id=customer.pk + 1000) is None


# What sessions signed in before accounts.backends name as their backend.
BACKENDS_BEFORE = [
    "django.contrib.auth.backends.ModelBackend",
    "allauth.account.auth_backends.AuthenticationBackend",
]


def _backend_named(client, path: str) -> None:
    session = client.session
    session[BACKEND_SESSION_KEY] = path
    session.save()


@pytest.mark.parametrize("path", BACKENDS_BEFORE)
def test_a_session_signed_in_before_the_backends_moved_stays_signed_in(client, customer, path):
    client.force_login(customer)
    _backend_named(client, path)
    response = client.get(ORDERS)
    assert response.status_code == 200
    assert response.wsgi_request.user == customer


def test_staff_signed_in_before_the_backends_moved_keep_their_second_factor(client, staff):
    client.force_login(staff)  # past the code too (tests/accounts/two_factor.py)
    _backend_named(client, BACKENDS_BEFORE[1])
    assert client.get("/admin/").status_code == 200
    past_the_password_only = SecondFactorClient()
    past_the_password_only.force_login(staff, second_factor=False)
    _backend_named(past_the_password_only, BACKENDS_BEFORE[1])
    assert "/account/security/verify/" in past_the_password_only.get("/admin/")["Location"]


def test_a_session_naming_a_backend_not_configured_signs_nobody_in(client, customer):
    client.force_login(customer)
    _backend_named(client, "django.contrib.auth.backends.RemoteUserBackend")
    response = client.get(ORDERS)
    assert response.status_code == 302 and "/login/" in response["Location"]

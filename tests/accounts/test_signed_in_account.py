"""What every signed-in request reads first: its session and the account it names, with
whether that account has a second factor, in one query written once (accounts.sessions,
accounts.backends). Django's own rules still hold: an expired session, a deactivated or
deleted account, a password changed since sign-in sign nobody in."""

from datetime import timedelta

import pytest
from django.apps import apps
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.sessions.backends.db import SessionStore as DjangoSessionStore
from django.contrib.sessions.models import Session as DjangoSession
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from django_otp.plugins.otp_totp.models import TOTPDevice

from accounts.account_rows import signed_in_account
from accounts.models import Session
from accounts.two_factor import two_factor_enabled
from tests.accounts.two_factor import SecondFactorClient

pytestmark = pytest.mark.django_db

ORDERS = "/fr/account/orders/"


def test_a_session_signs_its_account_in_with_one_query(client, customer):
    client.force_login(customer)
    with CaptureQueriesContext(connection) as queries:
        request = client.get("/fr/account/ssh-keys/").wsgi_request
    assert request.user == customer
    assert request.user.has_second_factor is False
    first, second = queries.captured_queries[:2]
    assert "accounts_session" in first["sql"] and "accounts_user" in first["sql"]
    assert "accounts_user" not in second["sql"]


def test_the_session_row_names_the_account_signed_in_on_it(client, customer):
    assert client.get(ORDERS).status_code == 302  # a visitor: no session row yet
    client.force_login(customer)
    assert Session.objects.get(session_key=client.session.session_key).account == customer
    client.post("/fr/accounts/logout/")
    assert not Session.objects.filter(account=customer).exists()


def test_deleting_an_account_ends_its_sessions(client, customer):
    client.force_login(customer)
    customer.delete()
    assert not Session.objects.exists()
    assert client.get(ORDERS).status_code == 302


def test_a_password_changed_elsewhere_signs_the_session_out(client, customer):
    client.force_login(customer)
    customer.set_password("a new password, changed elsewhere")
    customer.save(update_fields=["password"])
    response = client.get(ORDERS)
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_a_second_factor_is_read_with_the_session(client, customer):
    TOTPDevice.objects.create(user=customer, name="app", confirmed=True)
    past_the_password_only = SecondFactorClient()
    past_the_password_only.force_login(customer, second_factor=False)
    with CaptureQueriesContext(connection) as queries:
        response = past_the_password_only.get(ORDERS)
    assert "/account/security/verify/" in response["Location"]
    assert response.wsgi_request.user.has_second_factor is True
    assert len(queries) == 1


def test_the_sessions_open_before_the_move_stay_signed_in(client, customer):
    """Migration 0009 copies django_session's open sessions, naming their accounts."""
    migration = __import__(
        "accounts.migrations.0009_sessions_with_their_account", fromlist=["sessions_copy"]
    )
    signed_in, visitor, expired = DjangoSessionStore(), DjangoSessionStore(), DjangoSessionStore()
    signed_in.update({SESSION_KEY: str(customer.pk), BACKEND_SESSION_KEY: BACKENDS_BEFORE[0]})
    signed_in[HASH_SESSION_KEY] = customer.get_session_auth_hash()
    visitor["language"] = "fr"
    expired[SESSION_KEY] = str(customer.pk)
    for session in (signed_in, visitor, expired):
        session.create()
    DjangoSession.objects.filter(session_key=expired.session_key).update(
        expire_date=timezone.now() - timedelta(seconds=1)
    )

    migration.sessions_copy(apps, None)

    copied = {s.session_key: s.account_id for s in Session.objects.all()}
    assert copied == {signed_in.session_key: customer.pk, visitor.session_key: None}
    client.cookies["sessionid"] = signed_in.session_key
    response = client.get(ORDERS)
    assert response.status_code == 200 and response.wsgi_request.user == customer


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

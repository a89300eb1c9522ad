"""Sessions are Django's own (django.contrib.sessions.backends.db): a signed-in request reads
its session, then its account with whether it has a second factor, from the database; every
rule Django keeps for a session still holds, on every database the store runs on. The
sessions open before the move (accounts.Session, migration 0013) stay signed in."""

from datetime import timedelta

import pytest
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.sessions.models import Session
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from django_otp.plugins.otp_totp.models import TOTPDevice

from accounts.backends import signed_in_account
from accounts.tasks import sessions_clear_expired_task
from accounts.two_factor import two_factor_enabled
from tests.accounts.two_factor import SecondFactorClient, totp_code

pytestmark = pytest.mark.django_db

ORDERS = "/fr/account/orders/"
NEW_PASSWORD = "Another-horse-9z!"


def _signed_out(response) -> bool:
    return response.status_code == 302 and "/login/" in response["Location"]


def test_a_signed_in_request_reads_its_session_then_its_account_with_its_second_factor(
    client, customer
):
    client.force_login(customer)
    with CaptureQueriesContext(connection) as queries:
        request = client.get("/fr/account/ssh-keys/").wsgi_request
    assert request.user == customer and request.user.has_second_factor is False
    first, second = (query["sql"] for query in queries.captured_queries[:2])
    assert "django_session" in first and "accounts_user" not in first
    assert "accounts_user" in second and "otp_totp_totpdevice" in second


def test_a_session_asked_again_after_ten_seconds_still_answers(client, customer):
    """make run's 500: the expiry Django reads back is compared with an aware now()."""
    client.force_login(customer)
    Session.objects.update(expire_date=timezone.now() + timedelta(seconds=11))
    for _ in range(3):
        assert client.get("/fr/account/").status_code == 200


def test_login_as_another_account_in_the_same_browser(client, customer, outsider):
    client.force_login(customer)
    first_key = client.session.session_key
    client.force_login(outsider)
    assert client.session.session_key != first_key
    assert not Session.objects.filter(session_key=first_key).exists()
    assert client.get(ORDERS).wsgi_request.user == outsider


def test_login_cycles_the_key_of_a_visitor_session(client, customer, password):
    client.get("/fr/accounts/login/")
    session = client.session
    session["something"] = 1
    session.save()
    visitor_key = session.session_key
    client.post("/fr/accounts/login/", {"login": customer.email, "password": password})
    assert client.session.session_key != visitor_key
    assert client.get(ORDERS).wsgi_request.user == customer


def test_logout_ends_the_row_and_the_stolen_cookie(client, customer):
    client.force_login(customer)
    key = client.session.session_key
    client.post("/fr/accounts/logout/")
    assert not Session.objects.filter(session_key=key).exists()
    stolen = SecondFactorClient()
    stolen.cookies["sessionid"] = key
    assert _signed_out(stolen.get(ORDERS))


def test_a_password_change_keeps_this_session_and_ends_the_others(client, customer, password):
    other = SecondFactorClient()
    other.force_login(customer)
    client.force_login(customer)
    response = client.post(
        "/fr/accounts/password/change/",
        {"oldpassword": password, "password1": NEW_PASSWORD, "password2": NEW_PASSWORD},
    )
    assert response.status_code == 302, response.content[:500]
    assert client.get(ORDERS).status_code == 200
    assert _signed_out(other.get(ORDERS))


def test_a_password_changed_elsewhere_signs_the_session_out(client, customer):
    client.force_login(customer)
    customer.set_password("a new password, changed elsewhere")
    customer.save(update_fields=["password"])
    assert _signed_out(client.get(ORDERS))


def test_an_expired_session_signs_nobody_in(client, customer):
    client.force_login(customer)
    Session.objects.update(expire_date=timezone.now() - timedelta(seconds=1))
    assert _signed_out(client.get(ORDERS))


def test_a_deactivated_or_deleted_account_is_signed_out(client, customer, outsider):
    client.force_login(customer)
    customer.is_active = False
    customer.save(update_fields=["is_active"])
    assert _signed_out(client.get(ORDERS))
    other = SecondFactorClient()
    other.force_login(outsider)
    outsider.delete()
    assert _signed_out(other.get(ORDERS))


def test_a_confirmed_authenticator_is_asked_for_at_the_very_next_request(client, customer):
    past_the_password_only = SecondFactorClient()
    past_the_password_only.force_login(customer, second_factor=False)
    assert past_the_password_only.get(ORDERS).status_code == 200
    TOTPDevice.objects.create(user=customer, name="app", confirmed=True)  # as the admin would
    response = past_the_password_only.get(ORDERS)
    assert "/account/security/verify/" in response["Location"]
    assert response.wsgi_request.user.has_second_factor is True


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


def test_verifying_the_code_cycles_the_key(customer):
    device = TOTPDevice.objects.create(user=customer, name="app", confirmed=True)
    browser = SecondFactorClient()
    browser.force_login(customer, second_factor=False)
    before = browser.session.session_key
    assert browser.post("/fr/account/security/verify/", {"code": totp_code(device)}).status_code
    after = browser.session.session_key
    assert after != before and not Session.objects.filter(session_key=before).exists()
    request = browser.get(ORDERS).wsgi_request
    assert request.user == customer and request.user.is_verified()


def test_staff_need_their_code_for_the_admin(staff):
    TOTPDevice.objects.create(user=staff, name="app", confirmed=True)
    browser = SecondFactorClient()
    browser.force_login(staff, second_factor=False)
    response = browser.get("/admin/")
    assert response.status_code == 302 and "/account/security/verify/" in response["Location"]


def test_the_beat_clears_expired_sessions(client, customer, outsider, settings):
    client.force_login(customer)
    expired = SecondFactorClient()
    expired.force_login(outsider)
    Session.objects.filter(session_key=expired.session.session_key).update(
        expire_date=timezone.now()
    )
    entry = settings.CELERY_BEAT_SCHEDULE["accounts-sessions-clear"]
    assert entry["task"] == "accounts.tasks.sessions_clear_expired_task"
    sessions_clear_expired_task()
    assert list(Session.objects.values_list("session_key", flat=True)) == [
        client.session.session_key
    ]


@pytest.mark.django_db(transaction=True)
def test_the_sessions_open_before_the_move_stay_signed_in(customer):
    """Migration 0013 moves accounts.Session's open rows to django_session, renaming the
    backend a session signed in before accounts.backends names."""
    executor = MigrationExecutor(connection)
    before = [("accounts", "0012_i25_drop_change_feed")]
    executor.migrate(before)
    old = executor.loader.project_state(before).apps.get_model("accounts", "Session")
    store = Session.get_session_store_class()()
    data = {SESSION_KEY: str(customer.pk), HASH_SESSION_KEY: customer.get_session_auth_hash()}
    rows = {
        "current": {**data, BACKEND_SESSION_KEY: "accounts.backends.AllauthAccountBackend"},
        "renamed": {**data, BACKEND_SESSION_KEY: "django.contrib.auth.backends.ModelBackend"},
        "expired": data,
    }
    soon = timezone.now() + timedelta(days=1)
    for key, session_data in rows.items():
        expire = soon if key != "expired" else timezone.now() - timedelta(seconds=1)
        old.objects.create(
            session_key=f"{key}-session-key-of-forty-chars".ljust(40, "x"),
            session_data=store.encode(session_data),
            expire_date=expire,
            account_id=customer.pk,
        )
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
    moved = sorted(Session.objects.values_list("session_key", flat=True))
    assert [key.split("-", 1)[0] for key in moved] == ["current", "renamed"]
    for key in moved:
        browser = SecondFactorClient()
        browser.cookies["sessionid"] = key
        response = browser.get(ORDERS)
        assert response.status_code == 200 and response.wsgi_request.user == customer

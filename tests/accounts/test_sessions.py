"""Sessions that name their account (accounts.Session, accounts.sessions), attacked: the
account read with the session is only ever the one Django would sign in, and sessions moved
from django_session (migration 0009) never break a page nor come back to life. Written by a
reviewer of the first version; the migration and model cases failed on it."""

import threading
from datetime import timedelta
from unittest import mock

import pytest
from asgiref.sync import async_to_sync
from django.apps import apps
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.sessions.backends.db import SessionStore as DjangoSessionStore
from django.contrib.sessions.models import Session as DjangoSession
from django.core.cache import cache
from django.core.management import call_command
from django.db import connection
from django.test import RequestFactory
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from django_otp.plugins.otp_totp.models import TOTPDevice

from accounts.middleware import AuthenticationMiddleware
from accounts.models import Session, User
from accounts.sessioncache import session_cache_key
from accounts.sessions import SessionStore, account_read_with_session, session_in_use
from accounts.tasks import sessions_clear_expired_task
from tests.accounts.helpers import session_mark_lapsed
from tests.accounts.two_factor import SecondFactorClient, totp_code
from tests.factories import UserFactory

ORDERS = "/fr/account/orders/"
BACKEND = "accounts.backends.AccountBackend"
NEW_PASSWORD = "Another-horse-9z!"

migration = __import__(
    "accounts.migrations.0009_sessions_with_their_account", fromlist=["sessions_copy"]
)


def _old_session(user_pk, *, password_hash=None, **extra) -> DjangoSessionStore:
    """A django_session row as login() wrote it before the move."""
    old = DjangoSessionStore()
    old.update({SESSION_KEY: str(user_pk), BACKEND_SESSION_KEY: BACKEND, **extra})
    if password_hash:
        old[HASH_SESSION_KEY] = password_hash
    old.create()
    return old


# --- Never another account, never signed in when Django would sign out ----------------


@pytest.mark.django_db
def test_login_as_another_account_in_the_same_browser(client, customer, outsider, password):
    client.force_login(customer)
    first_key = client.session.session_key
    # allauth sends a signed-in browser away from its login page: django.contrib.auth.login
    # on the same session, as the test client's login does.
    client.force_login(outsider)
    assert client.session.session_key != first_key
    assert not Session.objects.filter(session_key=first_key).exists()
    assert Session.objects.get(session_key=client.session.session_key).account == outsider
    assert client.get(ORDERS).wsgi_request.user == outsider


@pytest.mark.django_db
def test_login_cycles_the_key_of_a_visitor_session_and_names_the_account(
    client, customer, password
):
    client.get("/fr/accounts/login/")
    s = client.session
    s["something"] = 1
    s.save()
    visitor_key = s.session_key
    client.post("/fr/accounts/login/", {"login": customer.email, "password": password})
    assert client.session.session_key != visitor_key
    assert Session.objects.get(session_key=client.session.session_key).account == customer


@pytest.mark.django_db
def test_a_row_naming_another_account_than_its_data_is_not_believed(client, customer, outsider):
    """The column and the data disagree (hand-edited row): the data's account, asked anew."""
    client.force_login(customer)
    Session.objects.update(account=outsider)
    with CaptureQueriesContext(connection) as queries:
        request = client.get(ORDERS).wsgi_request
    assert request.user == customer
    assert sum("accounts_user" in q["sql"] for q in queries.captured_queries) >= 2


@pytest.mark.django_db
def test_logout_ends_the_row(client, customer):
    client.force_login(customer)
    key = client.session.session_key
    client.post("/fr/accounts/logout/")
    assert not Session.objects.filter(session_key=key).exists()
    stolen = SecondFactorClient()
    stolen.cookies["sessionid"] = key
    assert stolen.get(ORDERS).status_code == 302


@pytest.mark.django_db
def test_password_change_through_allauth_keeps_this_session_and_ends_others(
    client, customer, password
):
    other = SecondFactorClient()
    other.force_login(customer)
    client.force_login(customer)
    response = client.post(
        "/fr/accounts/password/change/",
        {"oldpassword": password, "password1": NEW_PASSWORD, "password2": NEW_PASSWORD},
    )
    assert response.status_code == 302, response.content[:500]
    assert client.get(ORDERS).status_code == 200
    assert Session.objects.get(session_key=client.session.session_key).account == customer
    assert other.get(ORDERS).status_code == 302


@pytest.mark.django_db
def test_staff_need_their_code_for_the_admin_even_with_the_account_from_the_session(staff):
    TOTPDevice.objects.create(user=staff, name="app", confirmed=True)
    c = SecondFactorClient()
    c.force_login(staff, second_factor=False)
    response = c.get("/admin/")
    assert response.status_code == 302 and "/account/security/verify/" in response["Location"]


@pytest.mark.django_db
def test_verifying_the_code_cycles_the_key_and_names_the_account(customer):
    device = TOTPDevice.objects.create(user=customer, name="app", confirmed=True)
    c = SecondFactorClient()
    c.force_login(customer, second_factor=False)
    before = c.session.session_key
    response = c.post("/fr/account/security/verify/", {"code": totp_code(device)})
    assert response.status_code == 302
    after = c.session.session_key
    assert after != before and not Session.objects.filter(session_key=before).exists()
    assert Session.objects.get(session_key=after).account == customer
    request = c.get(ORDERS).wsgi_request
    assert request.user == customer and request.user.is_verified()


@pytest.mark.django_db
def test_drf_session_authentication(client, customer):
    client.force_login(customer)
    response = client.get("/api/v1/orders/")
    assert response.status_code == 200
    assert response.wsgi_request.user == customer


@pytest.mark.django_db
def test_auser_async(customer):
    c = SecondFactorClient()
    c.force_login(customer)
    request = RequestFactory().get("/")
    request.session = SessionStore(c.session.session_key)
    AuthenticationMiddleware(lambda r: None).process_request(request)
    user = async_to_sync(request.auser)()
    assert user == customer
    customer.is_active = False
    customer.save(update_fields=["is_active"])
    request = RequestFactory().get("/")
    request.session = SessionStore(c.session.session_key)
    AuthenticationMiddleware(lambda r: None).process_request(request)
    assert not async_to_sync(request.auser)().is_authenticated


@pytest.mark.django_db
def test_the_contextvar_is_empty_outside_the_lookup_and_in_other_threads(customer):
    c = SecondFactorClient()
    c.force_login(customer)
    store = SessionStore(c.session.session_key)
    store.load()
    seen = []
    with session_in_use(store):
        assert account_read_with_session(customer.pk) == customer
        t = threading.Thread(target=lambda: seen.append(account_read_with_session(customer.pk)))
        t.start()
        t.join()
    assert seen == [None]
    assert account_read_with_session(customer.pk) is None
    with pytest.raises(ZeroDivisionError), session_in_use(store):
        1 / 0  # noqa: B018
    assert account_read_with_session(customer.pk) is None


@pytest.mark.django_db
def test_clearsessions_clears_the_new_table(customer):
    c = SecondFactorClient()
    c.force_login(customer)
    Session.objects.update(expire_date=timezone.now() - timedelta(seconds=1))
    call_command("clearsessions")
    assert not Session.objects.exists()


# --- Sessions naming an account that is gone, and the move from django_session -------------


@pytest.mark.django_db(transaction=True)
def test_a_moved_session_naming_a_deleted_account_can_still_be_written(client, gpu):
    """Before the move, a deleted account's session stayed in django_session (nothing
    cascades there). The migration copies it with no account, its data still naming the
    deleted one: a visitor with that cookie is anonymous (as with Django), and the pages
    that write to the session save it (no constraint turns the missing account into a 500)."""
    ghost = UserFactory()
    old = _old_session(ghost.pk, password_hash=ghost.get_session_auth_hash())
    ghost.delete()
    migration.sessions_copy(apps, None)
    assert Session.objects.get(session_key=old.session_key).account_id is None

    client.cookies["sessionid"] = old.session_key
    # Any page writing to a visitor's session: the configurator remembers a description.
    response = client.get(
        f"/fr/gpus/{gpu.slug}/configure/",
        {"environment": "custom", "environment_details": "my image", "quantity": 1, "term": 30},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200


@pytest.mark.django_db(transaction=True)
def test_creating_a_session_that_names_a_missing_account_returns():
    """SessionStore.create() retries on CreateError, which Django raises for any
    IntegrityError on insert (meant for a key taken): a constraint on the account would make
    create(), and cycle_key() (the two-factor verify page's), retry forever once the account
    is gone."""
    store = SessionStore()
    store[SESSION_KEY] = "987654321"  # an account deleted meanwhile
    store[BACKEND_SESSION_KEY] = BACKEND
    calls: list[int] = []
    original = store._get_new_session_key

    def counted():
        calls.append(1)
        if len(calls) > 20:
            raise RuntimeError("create() looped 20 times on the same FK violation")
        return original()

    with mock.patch.object(store, "_get_new_session_key", counted):
        store.create()
    assert len(calls) == 1


@pytest.mark.django_db
def test_a_session_logged_out_after_the_move_is_not_open_in_django_session(client, customer):
    """Rolled back (code or `migrate accounts 0008`), the old store reads django_session again:
    a session signed out after the move must not be open there (a stolen cookie would work
    again)."""
    old = _old_session(customer.pk, password_hash=customer.get_session_auth_hash())
    migration.sessions_copy(apps, None)
    client.cookies["sessionid"] = old.session_key
    assert client.get(ORDERS).wsgi_request.user == customer
    client.post("/fr/accounts/logout/")
    assert not Session.objects.filter(session_key=old.session_key).exists()
    # What the code before the move reads:
    assert not DjangoSession.objects.filter(
        session_key=old.session_key, expire_date__gt=timezone.now()
    ).exists()


def test_sessions_copy_survives_odd_data(db, customer):
    """Corrupted, unsigned, foreign and odd SESSION_KEY values: copied, no account, no crash."""
    good = _old_session(customer.pk)
    odd = _old_session("not-a-number")
    DjangoSession.objects.create(
        session_key="x" * 32, session_data="garbage!", expire_date=timezone.now() + timedelta(1)
    )
    foreign = DjangoSessionStore()
    foreign["something"] = 1
    foreign.create()
    DjangoSession.objects.filter(session_key=foreign.session_key).update(
        session_data=DjangoSessionStore().encode({SESSION_KEY: "1"}).replace("a", "b", 1)
    )
    migration.sessions_copy(apps, None)
    copied = dict(Session.objects.values_list("session_key", "account_id"))
    assert copied[good.session_key] == customer.pk
    assert copied[odd.session_key] is None
    assert copied["x" * 32] is None
    assert copied[foreign.session_key] is None


@pytest.mark.django_db(transaction=True)
def test_signing_up_with_a_moved_session_naming_a_deleted_account(client, celery_eager):
    """The same ghost session: a visitor signing up (allauth keeps the pending e-mail code
    in the session) gets a 500 after their account was created."""
    ghost = UserFactory()
    old = _old_session(ghost.pk, password_hash=ghost.get_session_auth_hash())
    ghost.delete()
    migration.sessions_copy(apps, None)
    client.cookies["sessionid"] = old.session_key
    client.raise_request_exception = False
    strong = "correct-Horse-battery-9"
    response = client.post(
        "/fr/accounts/signup/",
        {
            "first_name": "Ada",
            "last_name": "Lovelace",
            "email": "ada@example.com",
            "password1": strong,
            "password2": strong,
        },
    )
    assert User.objects.filter(email="ada@example.com").exists()
    assert response.status_code == 302, response.status_code


@pytest.mark.django_db
def test_reversed_the_open_sessions_go_back_to_django_session(client, customer):
    client.force_login(customer)
    key = client.session.session_key
    migration.sessions_copy_back(apps, None)
    assert DjangoSession.objects.get(session_key=key).get_decoded()[SESSION_KEY] == str(customer.pk)


@pytest.mark.django_db
def test_the_beat_clears_expired_sessions(client, customer, outsider, settings):
    client.force_login(customer)
    expired = SecondFactorClient()
    expired.force_login(outsider)
    Session.objects.filter(account=outsider).update(expire_date=timezone.now())
    entry = settings.CELERY_BEAT_SCHEDULE["accounts-sessions-clear"]
    assert entry["task"] == "accounts.tasks.sessions_clear_expired_task"

    sessions_clear_expired_task()

    assert list(Session.objects.values_list("account", flat=True)) == [customer.pk]


@pytest.mark.django_db
def test_a_cached_session_asks_for_the_code_once_an_authenticator_is_confirmed(customer):
    """The session and its account come from the cache (accounts.sessioncache): an
    authenticator confirmed by any path (here the ORM, as the admin) is asked for at the very
    next request."""
    c = SecondFactorClient()
    c.force_login(customer, second_factor=False)
    session_mark_lapsed(c.session.session_key)
    assert [c.get(ORDERS).status_code for _ in range(2)] == [200, 200]
    assert session_stored(c.session.session_key)
    device = TOTPDevice.objects.create(user=customer, name="app", confirmed=False)
    assert c.get(ORDERS).status_code == 200
    session_mark_lapsed(c.session.session_key)
    assert c.get(ORDERS).status_code == 200
    device.confirmed = True
    device.save()
    response = c.get(ORDERS)
    assert response.status_code == 302 and "/account/security/verify/" in response["Location"]


@pytest.mark.django_db
def test_the_cached_session_holds_no_password_hash(client, customer):
    client.force_login(customer)
    session_mark_lapsed(client.session.session_key)
    client.get(ORDERS)
    stored = session_stored(client.session.session_key)
    assert stored["account"]["email"] == customer.email
    assert customer.password not in repr(stored)


@pytest.mark.django_db
def test_the_cached_session_is_stored_decoded_and_served_without_its_signature(client, customer):
    """As cached_db: what the cache holds is the session's dictionary, so a request served
    from it neither unsigns nor decodes the row's data again."""
    client.force_login(customer)
    session_mark_lapsed(client.session.session_key)
    client.get(ORDERS)
    stored = session_stored(client.session.session_key)
    assert stored["data"][SESSION_KEY] == str(customer.pk)
    with mock.patch.object(SessionStore, "decode", side_effect=AssertionError("decoded")):
        assert client.get(ORDERS).wsgi_request.user == customer


def session_stored(session_key: str):
    return cache.get(session_cache_key(session_key))


@pytest.mark.django_db
def test_a_password_changed_from_a_cached_session_keeps_it_signed_in(client, customer, password):
    """The account came from the cache, with the hash of its old password: the new one is
    what the session is signed with afterwards."""
    client.force_login(customer)
    session_mark_lapsed(client.session.session_key)
    client.get(ORDERS)
    assert session_stored(client.session.session_key)["account"]
    response = client.post(
        "/fr/accounts/password/change/",
        {"oldpassword": password, "password1": NEW_PASSWORD, "password2": NEW_PASSWORD},
    )
    assert response.status_code == 302, response.content[:500]
    assert client.get(ORDERS).status_code == 200

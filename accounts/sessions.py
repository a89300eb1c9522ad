"""Sessions (SESSION_ENGINE = "accounts.sessions"): Django's database sessions, whose row also
names the account signed in on it (accounts.models.Session), read with that account in one
SQL statement written once.

A signed-in page reads its session first thing, then the account the session names: two
round trips, and the ORM building the same two queries on every request. Here the session's
row and its account's come back together; accounts.middleware.AuthenticationMiddleware hands
the account to the authentication backend (accounts.backends), which asks the database only
when the session did not bring it. Writing, deleting and clearing expired sessions stay
Django's; every check Django makes of a session (its expiry, the backend it names, the hash of
the password it was signed in with, an account still active) still holds.

A session signed in before the authentication backends moved to accounts.backends names the
backend it was signed in with by its old path, which Django no longer accepts: it is read as
the backend that replaced it (a subclass, with the same rules), so a deploy signs nobody out.
"""

import functools
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, SESSION_KEY
from django.contrib.sessions.backends import db
from django.core.exceptions import ValidationError
from django.db import connection
from django.utils import timezone

from accounts.account_rows import account_columns_sql, account_from_row
from accounts.models import Session, User
from accounts.sessioncache import (
    session_cache_key,
    session_from_stored,
    session_remember,
    sessions_forget,
)
from rental.cachesafe import cache_get

# Old path -> the backend that replaced it (settings.AUTHENTICATION_BACKENDS).
BACKENDS_RENAMED = {
    "django.contrib.auth.backends.ModelBackend": "accounts.backends.AccountBackend",
    "allauth.account.auth_backends.AuthenticationBackend": (
        "accounts.backends.AllauthAccountBackend"
    ),
}


def _backend_renamed(data: dict) -> dict:
    path = data.get(BACKEND_SESSION_KEY)
    renamed = BACKENDS_RENAMED.get(path) if isinstance(path, str) else None
    if renamed is not None and renamed in settings.AUTHENTICATION_BACKENDS:
        data[BACKEND_SESSION_KEY] = renamed
    return data


def _account_id(data: dict) -> int | None:
    """The account the session data names (django.contrib.auth.login writes it), if any."""
    try:
        return User._meta.pk.to_python(data.get(SESSION_KEY))
    except ValidationError:
        return None


@functools.cache
def _select_sql() -> str:
    session, account, quote = Session._meta, User._meta, connection.ops.quote_name

    def column(name: str) -> str:
        return f"s.{quote(session.get_field(name).column)}"  # type: ignore[union-attr,arg-type]

    return (
        f"SELECT {column('session_data')}, {column('expire_date')}, {account_columns_sql('a')} "
        f"FROM {quote(session.db_table)} s LEFT JOIN {quote(account.db_table)} a "
        f"ON a.{quote(str(account.pk.column))} = {column('account')} "
        f"WHERE {column('session_key')} = %s AND {column('expire_date')} > %s"
    )


class SessionStore(db.SessionStore):
    def __init__(self, session_key=None):
        super().__init__(session_key)
        self.account: User | None = None  # read with the session, when it names one

    @classmethod
    def get_model_class(cls):
        return Session

    def load(self) -> dict:
        key = self.session_key
        found = None if key is None else session_from_stored(cache_get(session_cache_key(key)))
        if found is not None and found[1] > timezone.now():
            data, _expire_date, self.account = found
            return _backend_renamed(data)
        row = self._session_row()
        if row is None:
            self._session_key = None
            return {}
        self.account = account_from_row(row[2:])
        data = self.decode(row[0])
        if found is None and key is not None:
            session_remember(session_key=key, data=data, expire_date=row[1], account=self.account)
        return _backend_renamed(data)

    def save(self, must_create=False):
        super().save(must_create)
        if self.session_key is not None:
            sessions_forget(session_keys=[self.session_key])

    def delete(self, session_key=None):
        key = session_key or self.session_key
        super().delete(session_key)
        if key is not None:
            sessions_forget(session_keys=[key])

    async def aload(self) -> dict:
        return _backend_renamed(await super().aload())

    def create_model_instance(self, data):
        session = super().create_model_instance(data)
        session.account_id = _account_id(data)  # type: ignore[attr-defined]  # our Session
        return session

    async def acreate_model_instance(self, data):
        return self.create_model_instance(data)

    def _session_row(self) -> tuple | None:
        now = connection.ops.adapt_datetimefield_value(timezone.now())
        with connection.cursor() as cursor:
            cursor.execute(_select_sql(), [self.session_key, now])
            return cursor.fetchone()


_in_use: ContextVar[SessionStore | None] = ContextVar("accounts_session_in_use", default=None)


@contextmanager
def session_in_use(session) -> Iterator[None]:
    """While the request's account is looked up: the session it is looked up from."""
    token = _in_use.set(session if isinstance(session, SessionStore) else None)
    try:
        yield
    finally:
        _in_use.reset(token)


def account_read_with_session(user_id) -> User | None:
    """The account the session in use (session_in_use) brought along, if it is `user_id`."""
    session = _in_use.get()
    account = None if session is None else session.account
    return account if account is not None and account.pk == user_id else None

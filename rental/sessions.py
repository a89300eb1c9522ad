"""Django's database sessions, read with one SQL statement written once.

A signed-in page reads its session first thing: Django's store builds the same ORM query for
it on every request, which costs several times what PostgreSQL takes to answer it. This store
reads the same row (this key, not expired) with SQL composed once per process; writing,
deleting and clearing expired sessions stay Django's. SESSION_ENGINE = "rental.sessions".

A session signed in before the authentication backends moved to accounts.backends names
the backend it was signed in with by its old path, which Django no longer accepts: it is
read as the backend that replaced it (a subclass, with the same rules), so a deploy signs
nobody out.
"""

import functools

from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY
from django.contrib.sessions.backends import db
from django.contrib.sessions.models import Session
from django.db import connections, router
from django.utils import timezone

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


@functools.cache
def _select_sql(alias: str) -> str:
    meta, quote = Session._meta, connections[alias].ops.quote_name

    def column(name: str) -> str:
        return quote(meta.get_field(name).column)

    return (
        f"SELECT {column('session_data')} FROM {quote(meta.db_table)} "
        f"WHERE {column('session_key')} = %s AND {column('expire_date')} > %s"
    )


class SessionStore(db.SessionStore):
    def load(self) -> dict:
        return _backend_renamed(super().load())

    async def aload(self) -> dict:
        return _backend_renamed(await super().aload())

    def _get_session_from_db(self) -> Session | None:
        alias = router.db_for_read(Session)
        database = connections[alias]
        now = database.ops.adapt_datetimefield_value(timezone.now())
        with database.cursor() as cursor:
            cursor.execute(_select_sql(alias), [self.session_key, now])
            row = cursor.fetchone()
        if row is None:
            self._session_key = None
            return None
        return Session(session_key=self.session_key, session_data=row[0])

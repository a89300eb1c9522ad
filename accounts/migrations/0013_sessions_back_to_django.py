"""Sessions go back to Django's own table (SESSION_ENGINE = django.contrib.sessions.backends.db):
the open sessions of accounts.Session move to django_session, so a deploy signs nobody out,
then the table goes. Reversed, they move back with the account each names.

accounts.sessions read a session signed in before the authentication backends moved to
accounts.backends as signed in with the backend that replaced it; Django's engine accepts only
the configured paths, so those sessions are written with the new path as they move."""

from django.contrib.auth import BACKEND_SESSION_KEY, SESSION_KEY
from django.contrib.sessions.backends.db import SessionStore
from django.db import migrations
from django.utils import timezone

BATCH = 1000
# Old path -> the backend that replaced it.
BACKENDS_RENAMED = {
    "django.contrib.auth.backends.ModelBackend": "accounts.backends.AccountBackend",
    "allauth.account.auth_backends.AuthenticationBackend": (
        "accounts.backends.AllauthAccountBackend"
    ),
}


def _copied(source, target, make) -> None:
    """The open sessions of `source` into `target` (made by `make`), then `source` emptied:
    code rolled back must not find open again a session signed out after the move."""
    target.objects.all().delete()
    rows = source.objects.filter(expire_date__gt=timezone.now()).iterator(chunk_size=BATCH)
    batch = []
    for session in rows:
        batch.append(make(session))
        if len(batch) == BATCH:
            target.objects.bulk_create(batch)
            batch = []
    target.objects.bulk_create(batch)
    source.objects.all().delete()


def _backend_renamed(store: SessionStore, session_data: str) -> str:
    data = store.decode(session_data)
    renamed = BACKENDS_RENAMED.get(str(data.get(BACKEND_SESSION_KEY)))
    if renamed is None:
        return session_data
    return store.encode({**data, BACKEND_SESSION_KEY: renamed})


def sessions_to_django(apps, schema_editor):
    django_session = apps.get_model("sessions", "Session")
    store = SessionStore()  # signs as every SessionStore class signs: the same salt
    _copied(
        apps.get_model("accounts", "Session"),
        django_session,
        lambda s: django_session(
            session_key=s.session_key,
            session_data=_backend_renamed(store, s.session_data),
            expire_date=s.expire_date,
        ),
    )


def sessions_to_accounts(apps, schema_editor):
    accounts_session = apps.get_model("accounts", "Session")
    known = set(apps.get_model("accounts", "User").objects.values_list("pk", flat=True))
    decoder = SessionStore()

    def make(session):
        named = decoder.decode(session.session_data).get(SESSION_KEY)
        account = int(named) if str(named).isdigit() and int(named) in known else None
        return accounts_session(
            session_key=session.session_key,
            session_data=session.session_data,
            expire_date=session.expire_date,
            account_id=account,
        )

    _copied(apps.get_model("sessions", "Session"), accounts_session, make)


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0012_i25_drop_change_feed"),
        ("sessions", "0001_initial"),
    ]

    operations = [
        migrations.RunPython(sessions_to_django, sessions_to_accounts),
        migrations.DeleteModel(name="Session"),
    ]

"""Sessions move to accounts.Session, which names the account signed in on each: the open
sessions of django_session move over, so a deploy signs nobody out (and back, reversed)."""

import django.db.models.deletion
from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.contrib.sessions.backends.db import SessionStore
from django.db import migrations, models
from django.utils import timezone


BATCH = 1000


def _batches(rows):
    batch = []
    for row in rows:
        batch.append(row)
        if len(batch) == BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def sessions_copy(apps, schema_editor):
    """The open sessions, with the account each names (None when it names none, or an account
    deleted since), then django_session emptied: code rolled back, or this migration
    reversed, must not find open again a session signed out after the move."""
    old = apps.get_model("sessions", "Session")
    new = apps.get_model("accounts", "Session")
    accounts = set(apps.get_model("accounts", "User").objects.values_list("pk", flat=True))
    decoder = SessionStore()  # signed with its class name: accounts.sessions' is the same
    for batch in _batches(old.objects.filter(expire_date__gt=timezone.now()).iterator()):
        copies = []
        for session in batch:
            named = decoder.decode(session.session_data).get(SESSION_KEY)
            account = int(named) if str(named).isdigit() and int(named) in accounts else None
            copies.append(
                new(
                    session_key=session.session_key,
                    session_data=session.session_data,
                    expire_date=session.expire_date,
                    account_id=account,
                )
            )
        new.objects.bulk_create(copies)
    old.objects.all().delete()


def sessions_copy_back(apps, schema_editor):
    """Reversed: the open sessions go back to django_session, as they are now."""
    old = apps.get_model("sessions", "Session")
    new = apps.get_model("accounts", "Session")
    old.objects.all().delete()
    for batch in _batches(new.objects.filter(expire_date__gt=timezone.now()).iterator()):
        old.objects.bulk_create(
            old(session_key=s.session_key, session_data=s.session_data, expire_date=s.expire_date)
            for s in batch
        )


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0008_unsent_mails"),
        ("sessions", "0001_initial"),
    ]

    operations = [
        migrations.CreateModel(
            name="Session",
            fields=[
                (
                    "session_key",
                    models.CharField(
                        max_length=40,
                        primary_key=True,
                        serialize=False,
                        verbose_name="session key",
                    ),
                ),
                ("session_data", models.TextField(verbose_name="session data")),
                (
                    "expire_date",
                    models.DateTimeField(db_index=True, verbose_name="expire date"),
                ),
                (
                    "account",
                    models.ForeignKey(
                        blank=True,
                        db_constraint=False,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "verbose_name": "session",
                "verbose_name_plural": "sessions",
                "abstract": False,
            },
        ),
        migrations.RunPython(sessions_copy, sessions_copy_back),
    ]

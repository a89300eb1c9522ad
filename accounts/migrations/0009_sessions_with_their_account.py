"""Sessions move to accounts.Session, which names the account signed in on each: the open
sessions of django_session are copied over, so a deploy signs nobody out."""

import django.db.models.deletion
from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.contrib.sessions.backends.db import SessionStore
from django.db import migrations, models
from django.utils import timezone


def sessions_copy(apps, schema_editor):
    old = apps.get_model("sessions", "Session")
    new = apps.get_model("accounts", "Session")
    accounts = set(apps.get_model("accounts", "User").objects.values_list("pk", flat=True))
    decoder = SessionStore()  # signed with its class name: accounts.sessions' is the same
    copies = []
    for session in old.objects.filter(expire_date__gt=timezone.now()).iterator():
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
    new.objects.bulk_create(copies, batch_size=1000)


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
        migrations.RunPython(sessions_copy, migrations.RunPython.noop),
    ]

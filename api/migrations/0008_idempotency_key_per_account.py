"""An Idempotency-Key is the account's, whichever of its API keys sent it (issue 35): one
record per account and key. Where two keys of one account had each used the same key, the
first record stays (the orders both made stay too)."""

import django.db.models.deletion
from django.db import migrations, models


def duplicates_drop(apps, schema_editor):
    record = apps.get_model("api", "IdempotencyRecord")
    seen = set()
    for pk, user_id, key in record.objects.order_by("pk").values_list("pk", "user_id", "key"):
        if (user_id, key) in seen:
            record.objects.filter(pk=pk).delete()
        seen.add((user_id, key))


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0013_sessions_back_to_django"),
        ("api", "0007_webhook_delivery_status_verbose_name"),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="idempotencyrecord",
            name="idempotency_key_once_per_api_key",
        ),
        migrations.RemoveConstraint(
            model_name="idempotencyrecord",
            name="idempotency_key_once_per_session_user",
        ),
        migrations.AlterField(
            model_name="idempotencyrecord",
            name="api_key",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="accounts.apikey",
            ),
        ),
        migrations.RunPython(duplicates_drop, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="idempotencyrecord",
            constraint=models.UniqueConstraint(
                fields=("user", "key"), name="idempotency_key_once_per_account"
            ),
        ),
    ]

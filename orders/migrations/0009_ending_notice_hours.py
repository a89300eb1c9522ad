"""The single "ends within 24 hours" notice becomes reminders at 72 h, 24 h and 1 h: the field
records the most urgent one sent. A rental already warned keeps its notice as the 24 h one, so
it is not warned again for that threshold (only the 1 h reminder is still to come)."""

from django.db import migrations, models


def sent_notice_into_hours(apps, schema_editor):
    Order = apps.get_model("orders", "Order")
    Order.objects.filter(ending_notice_sent_at__isnull=False).update(ending_notice_hours=24)


def hours_into_sent_notice(apps, schema_editor):
    Order = apps.get_model("orders", "Order")
    Order.objects.filter(ending_notice_hours__isnull=False).update(
        ending_notice_sent_at=models.F("updated_at")
    )


class Migration(migrations.Migration):
    dependencies = [
        ("orders", "0008_stock_into_hosts"),
    ]

    operations = [
        migrations.AddField(
            model_name="order",
            name="ending_notice_hours",
            field=models.PositiveSmallIntegerField(blank=True, editable=False, null=True),
        ),
        migrations.RunPython(sent_notice_into_hours, hours_into_sent_notice),
        migrations.RemoveField(model_name="order", name="ending_notice_sent_at"),
    ]

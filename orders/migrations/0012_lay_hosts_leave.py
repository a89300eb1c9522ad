# Host and SlotHold moved to the hosts app (hosts/migrations/0001): they leave the orders
# app's state only; their tables stay as they are, the hosts app uses them under the same names.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('orders', '0011_order_terms_acceptance'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name='SlotHold'),
                migrations.DeleteModel(name='Host'),
            ],
            database_operations=[],
        ),
    ]

# Host and SlotHold move here from the orders app (orders/migrations/0012) without touching the
# database: the state takes them as they are, on their tables (db_table keeps the old names).
# Their content types move too, so staff permissions and admin history follow them.

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models

MOVED = ["host", "slothold"]


def content_types_move(old, new):
    def move(apps, schema_editor):
        content_type = apps.get_model("contenttypes", "ContentType")
        # A fresh database has none yet (post_migrate creates them after every migration).
        taken = content_type.objects.filter(app_label=new).values("model")
        content_type.objects.filter(app_label=old, model__in=MOVED).exclude(
            model__in=taken
        ).update(app_label=new)

    return move


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('catalog', '0001_initial'),
        ('contenttypes', '0002_remove_content_type_name'),
        ('orders', '0012_lay_hosts_leave'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='Host',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('name', models.SlugField(max_length=60, unique=True, verbose_name='name')),
                        ('region', models.CharField(max_length=60, verbose_name='region')),
                        ('gpu_count', models.PositiveSmallIntegerField(help_text='Its slots are numbered 0 to this number minus one.', verbose_name='number of GPUs')),
                        ('vcpus', models.PositiveIntegerField(blank=True, null=True, verbose_name='vCPUs')),
                        ('ram_gb', models.PositiveIntegerField(blank=True, null=True, verbose_name='RAM (GB)')),
                        ('disk_gb', models.PositiveIntegerField(blank=True, null=True, verbose_name='NVMe disk (GB)')),
                        ('network', models.CharField(blank=True, max_length=60, verbose_name='network')),
                        ('ssh_host', models.CharField(help_text='The address customers connect to.', max_length=255, verbose_name='SSH host')),
                        ('ssh_port', models.PositiveIntegerField(default=22, verbose_name='SSH port')),
                        ('provisioning', models.CharField(choices=[('manual', 'Manual (staff type the access details)'), ('ssh', 'Automatic over SSH')], default='manual', max_length=8, verbose_name='provisioning')),
                        ('provisioning_user', models.CharField(default='root', help_text='The account the store logs in as to run deploy/host/locagpu-host.', max_length=64, verbose_name='provisioning account')),
                        ('is_active', models.BooleanField(default=True, verbose_name='active')),
                        ('gpu', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='hosts', to='catalog.gpumodel', verbose_name='GPU model')),
                    ],
                    options={
                        'verbose_name': 'host',
                        'verbose_name_plural': 'hosts',
                        'db_table': 'orders_host',
                        'ordering': ['gpu', 'name'],
                    },
                ),
                migrations.CreateModel(
                    name='SlotHold',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('index', models.PositiveSmallIntegerField(verbose_name='GPU index')),
                        ('held_at', models.DateTimeField(default=django.utils.timezone.now, verbose_name='held since')),
                        ('released_at', models.DateTimeField(blank=True, null=True, verbose_name='released')),
                        ('host', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='holds', to='hosts.host', verbose_name='host')),
                        ('order', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='slot_holds', to='orders.order', verbose_name='order')),
                    ],
                    options={
                        'verbose_name': 'slot hold',
                        'verbose_name_plural': 'slot holds',
                        'db_table': 'orders_slothold',
                        'ordering': ['host', 'index'],
                    },
                ),
                migrations.AddConstraint(
                    model_name='host',
                    constraint=models.CheckConstraint(condition=models.Q(('gpu_count__gte', 1)), name='host_has_a_gpu'),
                ),
                migrations.AddIndex(
                    model_name='slothold',
                    index=models.Index(fields=['order', 'released_at'], name='orders_slot_order_i_c50036_idx'),
                ),
                migrations.AddConstraint(
                    model_name='slothold',
                    constraint=models.UniqueConstraint(condition=models.Q(('released_at__isnull', True)), fields=('host', 'index'), name='slot_held_once'),
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(content_types_move("orders", "hosts"), content_types_move("hosts", "orders")),
    ]

"""Today's stock becomes hosts: each GPU model's `units_total` units become one manual host
"<slug>-1" in Paris with that many slots, and every order holding units takes its slots there,
so the figures shown before and after are the same (units_total stays, kept equal to the slots
of active hosts from now on)."""

from django.db import migrations

HOLDING_STATUSES = ("awaiting_payment", "confirming", "paid", "provisioning", "active")


def stock_into_hosts(apps, schema_editor):
    GpuModel = apps.get_model("catalog", "GpuModel")
    Host = apps.get_model("orders", "Host")
    Order = apps.get_model("orders", "Order")
    SlotHold = apps.get_model("orders", "SlotHold")
    for gpu in GpuModel.objects.filter(units_total__gt=0).order_by("pk"):
        if Host.objects.filter(gpu=gpu).exists():
            continue
        host = Host.objects.create(
            name=f"{gpu.slug}-1",
            region="Paris",
            gpu=gpu,
            gpu_count=gpu.units_total,
            ssh_host=f"{gpu.slug}-1.gpu.locagpu.test",
            provisioning="manual",
        )
        next_index = 0
        holding = Order.objects.filter(gpu=gpu, status__in=HOLDING_STATUSES).order_by("created_at")
        for order in holding:
            # Stock was never oversold, so every holding order fits; the guard keeps the
            # migration from failing on a database where staff lowered units_total since.
            count = min(order.quantity, gpu.units_total - next_index)
            SlotHold.objects.bulk_create(
                SlotHold(order=order, host=host, index=next_index + i, held_at=order.created_at)
                for i in range(count)
            )
            next_index += count


def hosts_into_stock(apps, schema_editor):
    apps.get_model("orders", "SlotHold").objects.all().delete()
    apps.get_model("orders", "Host").objects.all().delete()


class Migration(migrations.Migration):
    dependencies = [
        ("orders", "0007_hosts_and_slots"),
    ]

    operations = [migrations.RunPython(stock_into_hosts, hosts_into_stock)]

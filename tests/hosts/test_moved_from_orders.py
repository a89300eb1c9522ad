"""Hosts and slot holds moved from the orders app to hosts without moving a row: a database
migrated before the move keeps its machines, its holds and its staff permissions."""

import pytest
from django.contrib.auth.models import Permission
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from hosts.models import Host, SlotHold
from tests.factories import GpuModelFactory, OrderFactory

BEFORE = [("orders", "0011_order_terms_acceptance"), ("hosts", None)]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    # The apps as they were at the first target (models of that time, not today's).
    return executor.loader.project_state(targets[0]).apps


def _latest():
    executor = MigrationExecutor(connection)
    return executor.loader.graph.leaf_nodes()


@pytest.mark.django_db(transaction=True)
def test_a_database_from_before_the_move_keeps_its_hosts_holds_and_permissions():
    order = OrderFactory(gpu=GpuModelFactory(units_total=0), quantity=1)
    latest = _latest()
    old = _migrate(BEFORE)
    old_host = old.get_model("orders", "Host").objects.create(
        name="paris-9", region="Paris", gpu_id=order.gpu_id, gpu_count=2, ssh_host="h.test"
    )
    old.get_model("orders", "SlotHold").objects.create(order_id=order.pk, host=old_host, index=1)
    content_type = ContentType.objects.get(app_label="orders", model="host")
    permission = Permission.objects.get(content_type=content_type, codename="change_host")

    _migrate(latest)

    moved = Host.objects.get(name="paris-9")
    assert moved.pk == old_host.pk
    assert SlotHold.objects.filter(host=moved, index=1, order=order).exists()
    content_type.refresh_from_db()
    assert (content_type.app_label, content_type.model) == ("hosts", "host")
    assert Permission.objects.get(pk=permission.pk).content_type == content_type
    assert ContentType.objects.get_for_model(Host) == content_type

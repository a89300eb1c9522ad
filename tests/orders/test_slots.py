"""Slots: an order holds concrete GPU indices on concrete hosts, never one slot twice."""

from collections import Counter
from datetime import timedelta

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone, translation

from hosts.models import Host, SlotHold
from orders.models import Order, OrderStatus
from orders.services import (
    order_cancel,
    order_create,
    order_refund,
    orders_complete,
    orders_expire,
    quote_build,
)
from orders.stock import gpu_available_units, gpus_with_availability, order_paying_transition
from orders.transitions import order_transition
from tests.factories import (
    EnvironmentFactory,
    GpuModelFactory,
    HostFactory,
    OrderFactory,
    accepted_terms,
)
from tests.orders.races import buyers_race

S = OrderStatus


def _held(order: Order) -> list[tuple[str, int]]:
    holds = order.slot_holds.filter(released_at__isnull=True).select_related("host")
    return sorted((hold.host.name, hold.index) for hold in holds)


@pytest.fixture
def two_hosts(db):
    """One GPU model in two machines: "big" with 4 GPUs, "small" with 2."""
    gpu = GpuModelFactory(units_total=0)
    HostFactory(name="big", gpu=gpu, gpu_count=4)
    HostFactory(name="small", gpu=gpu, gpu_count=2)
    return gpu


@pytest.mark.django_db
def test_an_order_holds_slots_on_one_host_when_one_has_enough(two_hosts, customer, pytorch):
    first = order_create(
        terms=accepted_terms(),
        user=customer,
        gpu=two_hosts,
        environment=pytorch,
        quantity=2,
        term_days=7,
    )
    # The fullest host that fits: whole machines stay whole for larger orders.
    assert _held(first) == [("small", 0), ("small", 1)]
    second = order_create(
        terms=accepted_terms(),
        user=customer,
        gpu=two_hosts,
        environment=pytorch,
        quantity=3,
        term_days=7,
    )
    assert _held(second) == [("big", 0), ("big", 1), ("big", 2)]
    assert gpu_available_units(gpu=two_hosts) == 1


@pytest.mark.django_db
def test_the_quote_says_when_a_quantity_spans_machines_and_the_order_then_does(
    two_hosts, customer, pytorch
):
    five = quote_build(gpu=two_hosts, environment=pytorch, quantity=5, term_days=7)
    four = quote_build(gpu=two_hosts, environment=pytorch, quantity=4, term_days=7)
    assert (five.spans_hosts, five.largest_free_block, four.spans_hosts) == (True, 4, False)
    order = order_create(
        terms=accepted_terms(),
        user=customer,
        gpu=two_hosts,
        environment=pytorch,
        quantity=5,
        term_days=7,
    )
    assert [name for name, _index in _held(order)].count("big") == 4
    assert len(_held(order)) == 5


@pytest.mark.django_db
def test_the_configurator_warns_before_ordering_that_the_quantity_spans_machines(
    client, two_hosts, pytorch
):
    with translation.override("en"):
        page = client.get(
            f"/en/gpus/{two_hosts.slug}/configure/",
            {"environment": "pytorch", "quantity": 5, "term": 7},
        ).content.decode()
        single = client.get(
            f"/en/gpus/{two_hosts.slug}/configure/",
            {"environment": "pytorch", "quantity": 4, "term": 7},
        ).content.decode()
    assert 'data-testid="spans-hosts"' in page
    assert "largest block on one machine is 4 GPUs" in page
    assert 'data-testid="spans-hosts"' not in single


@pytest.mark.django_db
def test_the_database_refuses_a_slot_held_twice_but_not_a_released_one(two_hosts):
    host = Host.objects.get(name="small")
    first, second = (
        OrderFactory(gpu=two_hosts, status=S.CANCELLED),
        OrderFactory(gpu=two_hosts, status=S.CANCELLED),
    )
    SlotHold.objects.create(order=first, host=host, index=0)
    with pytest.raises(IntegrityError), transaction.atomic():
        SlotHold.objects.create(order=second, host=host, index=0)
    SlotHold.objects.filter(order=first).update(released_at=timezone.now())
    SlotHold.objects.create(order=second, host=host, index=0)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("end", "status"),
    [
        ("expiry", S.AWAITING_PAYMENT),
        ("cancellation", S.AWAITING_PAYMENT),
        ("completion", S.ACTIVE),
        ("refund", S.PAID),
    ],
)
def test_leaving_the_holding_statuses_frees_exactly_the_orders_slots(two_hosts, staff, end, status):
    kept = OrderFactory(gpu=two_hosts, quantity=2, status=S.PAID)
    order = OrderFactory(
        gpu=two_hosts,
        quantity=3,
        status=status,
        payment_deadline=timezone.now() - timedelta(seconds=1),
        ends_at=timezone.now() - timedelta(seconds=1),
    )
    kept_slots, order_slots = _held(kept), _held(order)
    assert gpu_available_units(gpu=two_hosts) == 1
    if end == "expiry":
        assert orders_expire() == 1
    elif end == "cancellation":
        assert order_cancel(order=order, actor="customer")
    elif end == "completion":
        assert orders_complete() == 1
    else:
        assert order_refund(order=order, actor_user=staff, reason="host broke")
    assert _held(kept) == kept_slots
    assert _held(order) == []
    released = order.slot_holds.select_related("host")
    assert sorted((hold.host.name, hold.index) for hold in released) == order_slots
    assert gpu_available_units(gpu=two_hosts) == 4


@pytest.mark.django_db
def test_an_expired_order_paid_late_takes_free_slots_again(two_hosts):
    order = OrderFactory(gpu=two_hosts, quantity=4, status=S.AWAITING_PAYMENT)
    assert order_transition(order=order, to=S.EXPIRED, actor="system")
    assert gpu_available_units(gpu=two_hosts) == 6
    assert order_paying_transition(order=order, to=S.CONFIRMING, actor="system")
    assert len(_held(order)) == 4
    assert gpu_available_units(gpu=two_hosts) == 2


@pytest.mark.django_db
def test_an_inactive_host_gives_no_units(two_hosts):
    Host.objects.filter(name="big").update(is_active=False)
    shown = gpus_with_availability().get(pk=two_hosts.pk)
    assert (shown.available_units, shown.largest_free_block) == (2, 2)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("quantity", [1, 2])
def test_twenty_buyers_racing_for_the_last_slots_get_exactly_the_slots_there_are(quantity):
    gpu = GpuModelFactory(units_total=0)
    HostFactory(name="race-a", gpu=gpu, gpu_count=4)
    HostFactory(name="race-b", gpu=gpu, gpu_count=2)
    pytorch = EnvironmentFactory()
    outcomes = buyers_race(gpu=gpu, environment=pytorch, quantity=quantity)

    sold = 6 // quantity
    assert Counter(outcomes) == {"ordered": sold, "not_enough_units": 20 - sold}
    active = SlotHold.objects.filter(released_at__isnull=True)
    assert active.count() == 6
    assert len(set(active.values_list("host_id", "index"))) == 6
    for order in Order.objects.filter(status=S.AWAITING_PAYMENT):
        # Each pair sits on one machine: 4 + 2 slots leave room for three pairs that way.
        assert len({hold.host_id for hold in order.slot_holds.all()}) == 1
    assert gpu_available_units(gpu=gpu) == 0


@pytest.mark.django_db(transaction=True)
def test_the_data_migration_turns_todays_stock_into_hosts_with_the_same_figures():
    # The catalog of that time too: environments had no image yet.
    before = [("orders", "0006_order_ssh_keys"), ("catalog", "0001_initial")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    apps = executor.loader.project_state(before).apps
    old_gpu = apps.get_model("catalog", "GpuModel").objects.create(
        slug="old-h100",
        name="H100",
        architecture="Hopper",
        memory_gb=80,
        memory_type="HBM3",
        memory_bandwidth_gbps=3350,
        form_factor="sxm",
        interconnect="NVLink",
        precisions="BF16",
        power_watts=700,
        units_total=6,
        tagline="-",
        summary="-",
    )
    user = apps.get_model("accounts", "User").objects.create(email="old@example.com")
    environment = apps.get_model("catalog", "Environment").objects.create(
        slug="pytorch", name="PyTorch", description="-"
    )
    OldOrder = apps.get_model("orders", "Order")
    common = {
        "user": user,
        "gpu": old_gpu,
        "environment": environment,
        "term_days": 7,
        "daily_rate": 1,
        "total": 1,
        "currency": "EUR",
        "payment_deadline": timezone.now(),
    }
    for number, (quantity, status) in enumerate(
        [(2, "paid"), (1, "awaiting_payment"), (3, "expired"), (1, "active")]
    ):
        OldOrder.objects.create(
            number=f"LG-OLD-{number}", quantity=quantity, status=status, **common
        )

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    host = Host.objects.get(gpu_id=old_gpu.pk)
    assert (host.name, host.gpu_count, host.provisioning, host.region) == (
        "old-h100-1",
        6,
        Host.Provisioning.MANUAL,
        "Paris",
    )
    assert gpu_available_units(gpu=host.gpu) == 6 - 4  # as before: 2 + 1 + 1 held
    holds = SlotHold.objects.filter(host=host, released_at__isnull=True)
    assert sorted(holds.values_list("index", flat=True)) == [0, 1, 2, 3]
    for order in Order.objects.filter(gpu_id=old_gpu.pk):
        assert order.slot_holds.count() == (order.quantity if order.status != "expired" else 0)


@pytest.mark.django_db
def test_a_fresh_seeded_catalog_gets_one_host_per_gpu_with_the_seeded_stock():
    from django.core.management import call_command

    from catalog.models import GpuModel
    from catalog.seed_data import GPUS

    call_command("seed_catalog", verbosity=0)
    for entry in GPUS:
        gpu = GpuModel.objects.get(slug=entry["slug"])
        assert [(host.name, host.gpu_count) for host in gpu.hosts.all()] == [
            (f"{entry['slug']}-1", entry["units_total"])
        ]
        assert gpu_available_units(gpu=gpu) == gpu.units_total == entry["units_total"]


@pytest.mark.django_db
def test_staff_cannot_shrink_a_host_under_a_held_slot_and_stock_follows_host_edits(
    client, staff, two_hosts
):
    OrderFactory(gpu=two_hosts, quantity=4, status=S.PAID)  # holds big:0..3
    big = Host.objects.get(name="big")
    form = {
        "name": "big",
        "gpu": two_hosts.pk,
        "gpu_count": 2,
        "region": "Paris",
        "is_active": "on",
        "ssh_host": big.ssh_host,
        "ssh_port": 22,
        "provisioning": "manual",
        "provisioning_user": "root",
        "holds-TOTAL_FORMS": 0,
        "holds-INITIAL_FORMS": 0,
    }
    client.force_login(staff)
    refused = client.post(f"/admin/hosts/host/{big.pk}/change/", form)
    assert refused.status_code == 200
    assert Host.objects.get(pk=big.pk).gpu_count == 4

    response = client.post(f"/admin/hosts/host/{big.pk}/change/", {**form, "gpu_count": 10})
    assert response.status_code == 302
    two_hosts.refresh_from_db()
    assert two_hosts.units_total == 12
    assert gpu_available_units(gpu=two_hosts) == 8

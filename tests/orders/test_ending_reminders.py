"""Reminders at 72 h, 24 h and 1 h before a rental ends: each once, the most urgent only,
none for a threshold already passed at activation, one mail when two beats race."""

import threading
from datetime import UTC, datetime, timedelta

import pytest
from django.core import mail
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from orders.models import Order, OrderEvent, OrderStatus
from orders.reminders import ENDING_SOON, orders_remind_ending
from tests.factories import EnvironmentFactory, GpuModelFactory, OrderFactory, UserFactory

NOW = datetime(2026, 3, 10, 9, 0, tzinfo=UTC)


def rental(*, days: int = 7, left: timedelta, **user) -> Order:
    """An active rental of `days` days with `left` to go at NOW."""
    ends_at = NOW + left
    return OrderFactory(
        user=UserFactory(**user),
        status=OrderStatus.ACTIVE,
        term_days=days,
        activated_at=ends_at - timedelta(days=days),
        ends_at=ends_at,
    )


def reminders(order: Order) -> list[int]:
    notes = order.events.filter(kind=OrderEvent.Kind.NOTE, data__notice=ENDING_SOON)
    return [event.data["hours"] for event in notes]


@pytest.mark.django_db
def test_each_threshold_is_sent_once_as_the_end_comes_closer(worker_runs):
    order = rental(left=timedelta(days=4))
    with worker_runs():
        for hours_before_end in (80, 72, 71, 50, 24, 23, 2, 1, 0.5, 0.1):
            orders_remind_ending(now=order.ends_at - timedelta(hours=hours_before_end))
    assert reminders(order) == [72, 24, 1]
    assert len(mail.outbox) == 3
    order.refresh_from_db()
    assert order.ending_notice_hours == 1


@pytest.mark.django_db
def test_only_the_most_urgent_reminder_due_is_sent(worker_runs):
    order = rental(left=timedelta(minutes=30))
    with worker_runs():
        assert orders_remind_ending(now=NOW) == 1
        assert orders_remind_ending(now=NOW + timedelta(minutes=10)) == 0
    assert reminders(order) == [1]
    assert len(mail.outbox) == 1


@pytest.mark.django_db
def test_a_rental_warned_at_24_hours_later_gets_only_the_1_hour_reminder(worker_runs):
    order = rental(left=timedelta(hours=20))
    Order.objects.filter(pk=order.pk).update(ending_notice_hours=24)
    assert orders_remind_ending(now=NOW) == 0
    assert orders_remind_ending(now=NOW + timedelta(hours=19, minutes=30)) == 1
    assert reminders(order) == [1]


@pytest.mark.django_db
def test_a_threshold_already_passed_at_activation_is_skipped(worker_runs):
    three_days = rental(days=3, left=timedelta(days=3))
    with worker_runs():
        # The moment it starts, 72 hours are left: no "72 hours" mail.
        assert orders_remind_ending(now=NOW) == 0
        assert orders_remind_ending(now=NOW + timedelta(hours=48)) == 1
    assert reminders(three_days) == [24]


@pytest.mark.django_db
def test_rentals_not_active_or_already_over_get_no_reminder():
    over = rental(left=timedelta(minutes=-1))
    stopped = rental(left=timedelta(minutes=30))
    Order.objects.filter(pk=stopped.pk).update(status=OrderStatus.COMPLETED)
    assert orders_remind_ending(now=NOW) == 0
    assert reminders(over) == reminders(stopped) == []


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("round_", range(3))
def test_two_beats_at_once_send_one_reminder(round_):
    order = rental(left=timedelta(hours=10))
    start = threading.Barrier(2)
    sent: list[int] = []

    def beat():
        try:
            start.wait()
            sent.append(orders_remind_ending(now=NOW))
        finally:
            connection.close()

    threads = [threading.Thread(target=beat) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(sent) == [0, 1]
    assert reminders(order) == [24]


@pytest.mark.django_db
def test_the_mail_says_the_end_in_the_customers_zone_and_offers_the_extension_in_french(
    worker_runs, settings
):
    settings.SITE_URL = "https://gpu.example.com"
    order = rental(left=timedelta(hours=20), language="fr", time_zone="America/Montreal")
    with worker_runs():
        orders_remind_ending(now=NOW)
    (message,) = mail.outbox
    assert message.subject == f"La commande {order.number} se termine d\u2019ici 24 heures"
    # 2026-03-11 05:00 UTC is 01:00 in Montreal (daylight saving time since 8 March).
    assert "se termine le 11 mars 2026 à 01:00 EDT (America/Montreal)" in message.body
    assert "Prolongez la location" in message.body
    assert f"https://gpu.example.com/fr/account/orders/{order.number}/#prolonger" in message.body


@pytest.mark.django_db
def test_the_mail_in_english_says_one_hour(worker_runs, settings):
    settings.SITE_URL = "https://gpu.example.com"
    order = rental(left=timedelta(minutes=40), language="en", time_zone="Asia/Tokyo")
    with worker_runs():
        orders_remind_ending(now=NOW)
    (message,) = mail.outbox
    assert message.subject == f"Order {order.number} ends within 1 hour"
    assert "ends on 10 March 2026, 18:40 JST (Asia/Tokyo)" in message.body
    assert "Extend the rental on the same GPUs" in message.body
    assert f"https://gpu.example.com/en/account/orders/{order.number}/#prolonger" in message.body


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("language", "hours", "line"),
    [
        ("fr", 72, "la location se termine d\u2019ici 72 heures"),
        ("fr", 1, "la location se termine d\u2019ici 1 heure"),
        ("en", 72, "rental ends within 72 hours"),
        ("en", 1, "rental ends within 1 hour"),
    ],
)
def test_the_timeline_says_how_many_hours_are_left(client, language, hours, line):
    order = rental(left=timedelta(hours=hours) - timedelta(minutes=5), language=language)
    orders_remind_ending(now=NOW)
    client.force_login(order.user)
    page = client.get(f"/{language}/account/orders/{order.number}/")
    assert page.status_code == 200
    assert line in page.content.decode()


@pytest.mark.django_db(transaction=True)
def test_the_migration_keeps_a_notice_already_sent_as_the_24_hour_reminder():
    before = [("orders", "0008_stock_into_hosts")]
    user, gpu, environment = UserFactory(), GpuModelFactory(), EnvironmentFactory()
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    OldOrder = executor.loader.project_state(before).apps.get_model("orders", "Order")
    common = {
        "user_id": user.pk,
        "gpu_id": gpu.pk,
        "environment_id": environment.pk,
        "quantity": 1,
        "term_days": 7,
        "daily_rate": 1,
        "total": 7,
        "currency": "EUR",
        "status": "active",
        "payment_deadline": NOW,
        "ends_at": NOW + timedelta(hours=12),
    }
    OldOrder.objects.create(number="LG-OLD-WARNED", ending_notice_sent_at=NOW, **common)
    OldOrder.objects.create(number="LG-OLD-QUIET", **common)

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    hours = dict(Order.objects.values_list("number", "ending_notice_hours"))
    assert hours == {"LG-OLD-WARNED": 24, "LG-OLD-QUIET": None}

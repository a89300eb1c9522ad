import threading
from datetime import timedelta
from decimal import Decimal

import pytest
from django.core import mail
from django.core.management import call_command
from django.db import connection, transaction
from django.utils import timezone, translation

from catalog.models import TERMS, Environment, GpuModel
from orders.models import HOLDING_STATUSES, Order, OrderEvent, OrderStatus
from orders.reminders import orders_remind_ending
from orders.services import (
    OrderError,
    order_create,
    orders_complete,
    orders_expire,
    quote_build,
)
from orders.stock import UnitsGone, gpu_available_units, order_paying_transition
from orders.transitions import TransitionNotAllowed, order_transition
from tests.factories import (
    EnvironmentFactory,
    GpuModelFactory,
    OrderFactory,
    UserFactory,
    accepted_terms,
)
from tests.orders.races import buyers_race

S = OrderStatus


@pytest.mark.django_db
def test_total_is_daily_rate_times_days_times_quantity_for_every_gpu_and_term():
    call_command("seed_catalog", verbosity=0)
    pytorch = Environment.objects.get(slug="pytorch")
    gpus = list(GpuModel.objects.prefetch_related("prices"))
    assert len(gpus) == 7
    for gpu in gpus:
        rates = {price.term_days: price.daily_rate for price in gpu.prices.all()}
        assert set(rates) == set(TERMS)
        for days in TERMS:
            for quantity in (1, 2, 3):
                quote = quote_build(gpu=gpu, environment=pytorch, quantity=quantity, term_days=days)
                assert isinstance(quote.total, Decimal)
                assert quote.total == rates[days] * days * quantity
                assert quote.total == quote.total.quantize(Decimal("0.01"))


@pytest.mark.django_db(transaction=True)
def test_last_units_are_never_sold_twice_when_twenty_buyers_race():
    gpu = GpuModelFactory(units_total=5)
    pytorch = EnvironmentFactory()
    OrderFactory(gpu=gpu, quantity=2, status=S.PAID)  # 3 units left
    outcomes = buyers_race(gpu=gpu, environment=pytorch, quantity=1)

    assert outcomes.count("ordered") == 3
    assert outcomes.count("not_enough_units") == 17
    assert Order.objects.filter(status=S.AWAITING_PAYMENT).count() == 3
    assert gpu_available_units(gpu=gpu) == 0


@pytest.mark.django_db
def test_refusal_says_how_many_units_are_left(customer):
    gpu = GpuModelFactory(units_total=2)
    pytorch = EnvironmentFactory()
    with translation.override("en"), pytest.raises(OrderError) as refusal:
        order_create(
            terms=accepted_terms(),
            user=customer,
            gpu=gpu,
            environment=pytorch,
            quantity=3,
            term_days=7,
        )
    assert "Not enough units: 2 available" in str(refusal.value)
    assert not Order.objects.exists()


@pytest.mark.django_db
def test_expiry_releases_the_units_and_leaves_an_event():
    gpu = GpuModelFactory(units_total=2)
    order = OrderFactory(gpu=gpu, quantity=2)
    assert gpu_available_units(gpu=gpu) == 0
    Order.objects.filter(pk=order.pk).update(payment_deadline=timezone.now() - timedelta(seconds=1))
    # Past its deadline the order holds its units until it actually expires.
    assert gpu_available_units(gpu=gpu) == 0
    assert orders_expire() == 1
    assert gpu_available_units(gpu=gpu) == 2
    order.refresh_from_db()
    assert order.status == S.EXPIRED
    event = order.events.get(kind=OrderEvent.Kind.STATUS)
    assert (event.old_status, event.new_status, event.actor) == (
        S.AWAITING_PAYMENT,
        S.EXPIRED,
        "system",
    )
    assert orders_expire() == 0


@pytest.mark.django_db
def test_units_of_an_order_past_its_deadline_are_not_sold_again_before_it_expires(customer):
    gpu = GpuModelFactory(units_total=6)
    pytorch = EnvironmentFactory()
    first = order_create(
        terms=accepted_terms(),
        user=UserFactory(),
        gpu=gpu,
        environment=pytorch,
        quantity=6,
        term_days=7,
    )
    Order.objects.filter(pk=first.pk).update(payment_deadline=timezone.now() - timedelta(minutes=1))
    # Its payment may still be seen (and paid) until the beat task expires it.
    with pytest.raises(OrderError) as refusal:
        order_create(
            terms=accepted_terms(),
            user=customer,
            gpu=gpu,
            environment=pytorch,
            quantity=6,
            term_days=7,
        )
    assert refusal.value.code == "not_enough_units"


@pytest.mark.django_db
def test_a_rental_completes_at_the_end_of_its_term_with_a_notice_the_day_before(
    celery_eager, django_capture_on_commit_callbacks
):
    now = timezone.now()
    order = OrderFactory(
        status=S.ACTIVE, activated_at=now - timedelta(days=7), ends_at=now + timedelta(hours=3)
    )
    with django_capture_on_commit_callbacks(execute=True):
        assert orders_complete(now=now) == 0
        assert orders_remind_ending(now=now) == 1
        assert orders_remind_ending(now=now) == 0
    assert [m.subject for m in mail.outbox] == [
        f"La commande {order.number} se termine d\u2019ici 24 heures"
    ]
    with django_capture_on_commit_callbacks(execute=True):
        assert orders_complete(now=now + timedelta(hours=3)) == 1
    order.refresh_from_db()
    assert order.status == S.COMPLETED
    assert order.events.filter(new_status=S.COMPLETED, actor="system").count() == 1
    assert len(mail.outbox) == 2


@pytest.mark.django_db
def test_a_transition_outside_the_table_raises_and_changes_nothing():
    order = OrderFactory()
    with pytest.raises(TransitionNotAllowed):
        order_transition(order=order, to=S.ACTIVE, actor="system")
    order.refresh_from_db()
    assert order.status == S.AWAITING_PAYMENT
    assert not order.events.exists()


@pytest.mark.django_db
def test_a_stale_copy_cannot_apply_a_transition_twice():
    order = OrderFactory()
    first, second = Order.objects.get(pk=order.pk), Order.objects.get(pk=order.pk)
    assert order_transition(order=first, to=S.EXPIRED, actor="system") is True
    assert order_transition(order=second, to=S.EXPIRED, actor="system") is False
    assert order.events.count() == 1


@pytest.mark.django_db(transaction=True)
def test_two_workers_applying_the_same_transition_leave_one_event():
    order = OrderFactory()
    start = threading.Barrier(2)
    results = []

    def expire():
        copy = Order.objects.get(pk=order.pk)
        start.wait()
        results.append(order_transition(order=copy, to=S.EXPIRED, actor="system"))
        connection.close()

    threads = [threading.Thread(target=expire) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [False, True]
    assert OrderEvent.objects.filter(order=order, new_status=S.EXPIRED).count() == 1


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("round_", range(5))
def test_a_late_payment_and_a_new_order_racing_for_the_same_units_never_both_get_them(round_):
    gpu = GpuModelFactory(units_total=4)
    pytorch = EnvironmentFactory()
    expired = OrderFactory(gpu=gpu, quantity=4, status=S.EXPIRED)
    buyer = UserFactory()
    start = threading.Barrier(2)
    outcomes: dict[str, object] = {}

    def late_payment():
        start.wait()
        try:
            with transaction.atomic():
                order = Order.objects.select_for_update().get(pk=expired.pk)
                outcomes["late"] = order_paying_transition(
                    order=order, to=S.CONFIRMING, actor="system"
                )
        except UnitsGone:
            outcomes["late"] = "units_gone"
        finally:
            connection.close()

    def new_order():
        start.wait()
        try:
            order_create(
                terms=accepted_terms(),
                user=buyer,
                gpu=gpu,
                environment=pytorch,
                quantity=4,
                term_days=7,
            )
            outcomes["new"] = "ordered"
        except OrderError as error:
            outcomes["new"] = error.code
        finally:
            connection.close()

    threads = [threading.Thread(target=late_payment), threading.Thread(target=new_order)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert outcomes in (
        {"late": True, "new": "not_enough_units"},
        {"late": "units_gone", "new": "ordered"},
    )
    held = Order.objects.filter(gpu=gpu, status__in=HOLDING_STATUSES)
    assert sum(held.values_list("quantity", flat=True)) == 4

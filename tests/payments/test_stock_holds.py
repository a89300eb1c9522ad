"""No GPU sold twice: an order holds its units until it expires, it expires only once the
watcher read the chain past its deadline, and a payment seen later takes the units back only
while they are free (else staff refund it)."""

import threading
from datetime import timedelta

import pytest
from django.db import connection, transaction

from orders.models import Order, OrderEvent, OrderStatus
from orders.services import OrderError, order_create, orders_expire
from orders.stock import gpu_available_units
from payments.ledger import invoice_ledger
from payments.models import Invoice
from payments.services import PaymentError, invoice_issue
from tests.factories import (
    EnvironmentFactory,
    GpuModelFactory,
    OrderFactory,
    UserFactory,
    accepted_terms,
)
from tests.payments.helpers import deadline_at, reload

pytestmark = pytest.mark.chain

S = OrderStatus
MARGIN = timedelta(seconds=10)
# Every status from which an order can reach paid: together they never exceed the stock.
MAY_BE_PAID = [S.AWAITING_PAYMENT, S.CONFIRMING, S.PAID, S.PROVISIONING, S.ACTIVE]


@pytest.fixture(autouse=True)
def _margin(settings):
    settings.PAYMENTS_EXPIRY_SCAN_MARGIN = MARGIN


def _assert_never_oversold(gpu) -> None:
    committed = sum(
        Order.objects.filter(gpu=gpu, status__in=MAY_BE_PAID).values_list("quantity", flat=True)
    )
    assert committed <= gpu.units_total


def test_a_late_payer_never_gets_units_sold_since_and_is_flagged_with_a_refund_owed(devnet):
    gpu = GpuModelFactory(units_total=6)
    pytorch = EnvironmentFactory()
    alice, bob = UserFactory(), UserFactory()
    first = order_create(
        terms=accepted_terms(), user=alice, gpu=gpu, environment=pytorch, quantity=6, term_days=7
    )
    first_invoice = invoice_issue(order=first, asset=devnet.usdc)
    devnet.scan()
    deadline = devnet.block_time()
    deadline_at(first_invoice, deadline)

    # The deadline passed, the watcher has not read past it yet: the units stay held.
    assert orders_expire(now=deadline + 2 * MARGIN) == 0
    with pytest.raises(OrderError) as refusal:
        order_create(
            terms=accepted_terms(), user=bob, gpu=gpu, environment=pytorch, quantity=6, term_days=7
        )
    assert refusal.value.code == "not_enough_units"
    _assert_never_oversold(gpu)

    devnet.mine_later(int(MARGIN.total_seconds()) + 2)
    devnet.scan()
    assert orders_expire(now=deadline + 2 * MARGIN) == 1
    second = order_create(
        terms=accepted_terms(), user=bob, gpu=gpu, environment=pytorch, quantity=6, term_days=7
    )
    _assert_never_oversold(gpu)

    devnet.pay_token(first_invoice.deposit_address, int(first_invoice.amount_due))
    devnet.mine(3)
    devnet.scan()
    first_invoice, first = reload(first_invoice)
    assert first.status == S.EXPIRED
    assert first_invoice.paid_late and first_invoice.review
    owed = invoice_ledger(invoice=first_invoice).owed(invoice=first_invoice, order=first)
    assert owed == first_invoice.amount_due
    flagged = first.events.filter(kind=OrderEvent.Kind.PAYMENT_FLAGGED, data__flag="review").get()
    assert flagged.data["refund_owed"] == str(first_invoice.amount_due)
    _assert_never_oversold(gpu)

    second_invoice = invoice_issue(order=second, asset=devnet.usdc)
    devnet.pay_token(second_invoice.deposit_address, int(second_invoice.amount_due))
    devnet.mine(3)
    devnet.scan()
    assert reload(second_invoice)[1].status == S.PAID
    _assert_never_oversold(gpu)
    assert gpu_available_units(gpu=gpu) == 0


def test_a_late_payment_takes_back_the_units_that_are_still_free(devnet):
    invoice = invoice_issue(order=OrderFactory(quantity=2), asset=devnet.usdc)
    devnet.scan()
    deadline_at(invoice, devnet.block_time())
    devnet.mine_later(int(MARGIN.total_seconds()) + 2)
    devnet.scan()
    assert orders_expire(now=invoice.expires_at + 2 * MARGIN) == 1
    gpu = invoice.order.gpu
    assert gpu_available_units(gpu=gpu) == gpu.units_total

    devnet.pay_token(invoice.deposit_address, int(invoice.amount_due))
    devnet.mine(3)
    devnet.scan()
    invoice, order = reload(invoice)
    assert order.status == S.PAID and invoice.paid_late and not invoice.review
    assert gpu_available_units(gpu=gpu) == gpu.units_total - 2


@pytest.mark.django_db(transaction=True)
def test_an_invoice_is_not_issued_for_an_order_that_expired_while_it_waited_for_the_lock(devnet):
    order = OrderFactory()
    locked, expired = threading.Event(), threading.Event()

    def expire_under_lock():
        with transaction.atomic():
            Order.objects.select_for_update().get(pk=order.pk)
            locked.set()
            expired.wait(timeout=10)
            Order.objects.filter(pk=order.pk).update(status=S.EXPIRED)
        connection.close()

    worker = threading.Thread(target=expire_under_lock)
    worker.start()
    locked.wait(timeout=10)
    stale = Order.objects.get(pk=order.pk)  # still awaiting payment when read
    threading.Timer(0.2, expired.set).start()
    with pytest.raises(PaymentError) as refusal:
        invoice_issue(order=stale, asset=devnet.usdc)
    worker.join()
    assert refusal.value.code == "not_payable"
    assert not Invoice.objects.filter(order=order).exists()

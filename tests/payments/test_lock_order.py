"""One lock order (the order, then its invoices by id): paths that lock both never deadlock.

Each race runs two workers on their own database connections. Both start together (a barrier);
each, right after its first row lock, waits until the other holds its own first lock too. With
two lock orders both then reach for the other's row and PostgreSQL kills one ("deadlock
detected"). With one lock order the second worker cannot get its first lock at all: seeing it
blocked on a lock, the first goes on, and the second follows once it commits.
"""

import threading

import pytest
from django.db import connection

from orders.models import Order, OrderEvent, OrderStatus
from orders.services import OrderError, order_cancel
from payments.models import Invoice, PaymentClaim, Transfer
from payments.services import PaymentError, invoice_mark_paid, payment_claim_record
from payments.watcher.settlement import invoice_settle
from tests.payments.helpers import (
    order_with_invoice,
    transfer_observed_and_settled,
    transfer_recorded,
)

pytestmark = pytest.mark.django_db(transaction=True)
# Only a safety net against a hung test: the race never relies on it.
PATIENCE = 500


def _backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def _waits_for_a_lock(pid: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", [pid])
        row = cursor.fetchone()
    return row is not None and row[0] == "Lock"


def race(
    *, pause_after: dict[str, str] | None = None, leader: str | None = None, **works
) -> dict[str, object]:
    """Run the two `works` at once, overlapping as described above; their results or errors.

    `pause_after` names, for a work, the SQL after which it pauses instead of its first lock.
    `leader` names the work that takes its first lock first: the other starts once it holds it.
    """
    (first, second) = works
    markers = {name: "FOR UPDATE" for name in works} | (pause_after or {})
    other = {first: second, second: first}
    start = threading.Barrier(2)
    locked = {name: threading.Event() for name in works}
    pids: dict[str, int] = {}
    outcome: dict[str, object] = {}

    def run(name):
        def after_first_lock(execute, sql, params, many, context):
            result = execute(sql, params, many, context)
            if markers[name] in sql and not locked[name].is_set():
                locked[name].set()
                for _poll in range(PATIENCE):
                    if locked[other[name]].wait(0.01) or _waits_for_a_lock(pids[other[name]]):
                        break
            return result

        try:
            pids[name] = _backend_pid()
            start.wait(timeout=10)
            if leader not in (None, name):
                locked[leader].wait(timeout=10)
            with connection.execute_wrapper(after_first_lock):
                outcome[name] = works[name]()
        except Exception as error:  # the test reports what each worker met
            outcome[name] = error
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(name,)) for name in works]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return outcome


def _status_events(order: Order, status: str) -> int:
    return order.events.filter(kind=OrderEvent.Kind.STATUS, new_status=status).count()


def test_staff_marking_paid_during_a_confirmation_never_deadlocks(usdc, staff):
    invoice = order_with_invoice(usdc)
    transfer_recorded(invoice, status=Transfer.Status.CONFIRMED)

    outcome = race(
        mark_paid=lambda: invoice_mark_paid(
            invoice=invoice, staff_user=staff, reason="paid by bank transfer"
        ),
        confirmation=lambda: invoice_settle(invoice_id=invoice.pk),
    )

    errors = [
        error
        for error in outcome.values()
        if isinstance(error, Exception)
        and not (isinstance(error, PaymentError) and error.code == "not_payable")
    ]
    assert not errors, errors
    order = Order.objects.get(pk=invoice.order_id)
    assert order.status == OrderStatus.PAID
    assert _status_events(order, OrderStatus.PAID) == 1


def test_a_claim_during_a_settlement_never_deadlocks(usdc):
    invoice = order_with_invoice(usdc)
    transfer_recorded(invoice, status=Transfer.Status.SEEN)
    order = invoice.order

    outcome = race(
        claim=lambda: payment_claim_record(order=order, user=order.user),
        settlement=lambda: invoice_settle(invoice_id=invoice.pk),
    )

    assert not [error for error in outcome.values() if isinstance(error, Exception)], outcome
    order.refresh_from_db()
    assert order.status == OrderStatus.CONFIRMING
    assert _status_events(order, OrderStatus.CONFIRMING) == 1
    assert PaymentClaim.objects.filter(order=order).count() == 1
    assert order.events.filter(kind=OrderEvent.Kind.PAYMENT_CLAIMED).count() == 1


def test_an_order_is_never_cancelled_after_a_payment_reached_it(usdc):
    invoice = order_with_invoice(usdc)
    order = invoice.order

    outcome = race(
        # The customer's cancel pauses right after it looked for money received.
        pause_after={"cancel": 'FROM "payments_transfer"'},
        cancel=lambda: order_cancel(order=order, actor=OrderEvent.Actor.CUSTOMER),
        watcher=lambda: transfer_observed_and_settled(invoice, int(invoice.amount_due) // 2),
    )

    assert outcome["watcher"] is None, outcome
    order.refresh_from_db()
    seen = order.events.get(kind=OrderEvent.Kind.TRANSFER_SEEN)
    if order.status == OrderStatus.CANCELLED:
        cancelled = order.events.get(kind=OrderEvent.Kind.STATUS, new_status=OrderStatus.CANCELLED)
        assert cancelled.pk < seen.pk, "cancelled after the money was seen"
    else:
        assert isinstance(outcome["cancel"], OrderError), outcome
        assert order.status == OrderStatus.AWAITING_PAYMENT and Invoice.objects.get().underpaid

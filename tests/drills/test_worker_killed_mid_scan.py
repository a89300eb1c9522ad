"""Drill 1: a Celery worker SIGKILLed in the middle of a chain scan, then back.

A real worker process scans through an RPC proxy that holds the third eth_getLogs call, so
the kill lands after some block ranges were committed and before the rest. Whatever the
way back (the task redelivered, or the next beat scan), each transfer is credited once.
"""

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NamedTuple

import pytest

from orders.models import Order, OrderEvent, OrderStatus
from payments.models import Invoice, ScanCursor, Transfer
from payments.tasks import chain_scan_task
from tests.drills.processes import CeleryWorker, wait_until
from tests.payments.helpers import order_with_invoice
from tests.payments.proxy import HoldingRpcProxy

pytestmark = [pytest.mark.chain, pytest.mark.django_db(transaction=True)]

BLOCK_RANGE = 4


def _three_payments_over_21_blocks(devnet):
    """Payments land in the 1st, 3rd and 4th range of 4 blocks after the cursor."""
    invoices = [order_with_invoice(devnet.usdc) for _ in range(3)]
    for invoice in invoices:
        devnet.pay_token(invoice.deposit_address, int(invoice.amount_due))  # mint + pay
        devnet.mine(5)
    return invoices


def _scan_through(devnet, proxy_url: str) -> int:
    devnet.chain.default_rpc_url = proxy_url
    devnet.chain.save(update_fields=["default_rpc_url"])
    ScanCursor.objects.filter(chain=devnet.chain).update(block_range=BLOCK_RANGE)
    return ScanCursor.objects.get(chain=devnet.chain).block_number


def _all_paid(invoices) -> bool:
    ids = [invoice.order_id for invoice in invoices]
    return Order.objects.filter(pk__in=ids, status=OrderStatus.PAID).count() == len(ids)


def _all_dispatched(invoices) -> bool:
    ids = [invoice.order_id for invoice in invoices]
    return not OrderEvent.objects.filter(order_id__in=ids, dispatched_at__isnull=True).exists()


def _assert_each_transfer_credited_once(invoices, worker) -> None:
    for invoice in invoices:
        transfers = Transfer.objects.filter(invoice=invoice)
        assert transfers.count() == 1
        events = Counter(
            OrderEvent.objects.filter(order_id=invoice.order_id).values_list("kind", "new_status")
        )
        assert events[(OrderEvent.Kind.TRANSFER_SEEN, OrderStatus.AWAITING_PAYMENT)] == 1
        assert events[(OrderEvent.Kind.TRANSFER_CONFIRMED, OrderStatus.CONFIRMING)] == 1
        assert events[(OrderEvent.Kind.STATUS, OrderStatus.PAID)] == 1
    keys = list(Transfer.objects.values_list("tx_hash", "log_index"))
    assert len(keys) == len(set(keys)) == len(invoices)
    # One "payment received" e-mail per order, sent by the worker. It goes once the event's
    # claim has committed (at most once), with the invoice's PDF rendered first: it may land
    # a little after the claim the waits above saw.
    numbers = [invoice.order.number for invoice in invoices]

    def every_order_mailed():
        subjects = worker.emails_by_subject()
        return subjects if all(any(n in subject for subject in subjects) for n in numbers) else None

    subjects = wait_until(every_order_mailed, timeout=30, what="each order's paid e-mail")
    for invoice in invoices:
        number = invoice.order.number
        assert sum(n for subject, n in subjects.items() if number in subject) == 1, subjects


def _kill_lands_mid_scan(devnet, start: int) -> None:
    """Some ranges were committed before the kill, not all: the scan really was cut."""
    cursor = ScanCursor.objects.get(chain=devnet.chain).block_number
    assert start < cursor < devnet.head()
    assert Transfer.objects.count() == 1


class HeldScan(NamedTuple):
    invoices: list[Invoice]
    worker: CeleryWorker
    proxy: HoldingRpcProxy
    start: int


@contextmanager
def _scan_held_mid_way(devnet, worker_factory) -> Iterator[HeldScan]:
    """A worker scanning three payments, held on its third eth_getLogs call."""
    invoices = _three_payments_over_21_blocks(devnet)
    worker = worker_factory(PAYMENTS_MAX_BLOCK_RANGE=str(BLOCK_RANGE))
    with HoldingRpcProxy(devnet.node.url, hold_call=3) as proxy:
        start = _scan_through(devnet, proxy.url)
        worker.start()
        chain_scan_task.delay(devnet.chain.pk)
        assert proxy.holding.wait(timeout=20), worker.log()[-3000:]
        yield HeldScan(invoices, worker, proxy, start)


def _wait_until_all_paid_and_dispatched(invoices) -> None:
    wait_until(lambda: _all_paid(invoices), timeout=30, what="every order paid")
    wait_until(lambda: _all_dispatched(invoices), timeout=20, what="events dispatched")


def test_pool_process_killed_mid_scan_the_task_is_redelivered_and_credits_once(
    devnet, worker_factory
):
    with _scan_held_mid_way(devnet, worker_factory) as (invoices, worker, proxy, start):
        worker.kill_pool_process()
        _kill_lands_mid_scan(devnet, start)
        proxy.released.set()
        # acks_late + reject_on_worker_lost: the message goes back to the queue, and the
        # worker's next pool process runs it from the cursor.
        _wait_until_all_paid_and_dispatched(invoices)

    assert "WorkerLostError" in worker.log() or "SIGKILL" in worker.log()
    _assert_each_transfer_credited_once(invoices, worker)


def test_whole_worker_killed_mid_scan_the_next_scan_resumes_from_the_cursor(
    devnet, worker_factory, broker
):
    with _scan_held_mid_way(devnet, worker_factory) as (invoices, worker, proxy, start):
        worker.kill()
        _kill_lands_mid_scan(devnet, start)
        assert broker.client().hlen("unacked") == 1  # the killed scan's message
        proxy.released.set()
        # Nobody hands the message back: Redis keeps it as unacked until its visibility
        # timeout. The beat's next scan (sent here) starts where the cursor stopped.
        worker.start()
        chain_scan_task.delay(devnet.chain.pk)
        _wait_until_all_paid_and_dispatched(invoices)

    _assert_each_transfer_credited_once(invoices, worker)

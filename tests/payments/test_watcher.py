"""The watcher's promises: once only, nothing lost, bounded cost."""

import itertools
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta

import pytest
from django.core import mail
from django.db import connection
from django.utils import timezone
from web3 import Web3

from orders.models import OrderStatus
from payments.models import Chain, Invoice, ScanCursor, Transfer
from payments.tasks import chain_scan_task, invoice_check_task
from payments.watcher import rpc, scanner
from payments.watcher.rpc import RpcClient
from payments.watcher.scanner import ScanReport, chain_scan
from tests.payments.helpers import order_with_invoice, reload
from tests.payments.proxy import FlakyRpcProxy

pytestmark = pytest.mark.chain


def test_the_same_scan_and_task_run_twice_record_one_transfer_one_event_one_email(
    devnet, django_capture_on_commit_callbacks
):
    invoice = order_with_invoice(devnet.usdc)
    tx = devnet.pay_token(invoice.deposit_address, int(invoice.amount_due))
    devnet.mine(2)
    with django_capture_on_commit_callbacks(execute=True):
        # The "I've paid" check and the scan may both find the transfer; either may rerun.
        invoice_check_task.delay(invoice.pk, tx)
        invoice_check_task.delay(invoice.pk, tx)
        chain_scan_task.delay(devnet.chain.pk)
        chain_scan_task.delay(devnet.chain.pk)
        ScanCursor.objects.filter(chain=devnet.chain).update(
            block_number=devnet.head() - 3,
            block_hash=Web3.to_hex(devnet.w3.eth.get_block(devnet.head() - 3)["hash"]),
        )
        devnet.scan()  # rescans the blocks already seen
    invoice, order = reload(invoice)
    assert Transfer.objects.filter(chain=devnet.chain).count() == 1
    kinds = list(order.events.values_list("kind", "new_status"))
    assert kinds.count(("transfer_seen", "awaiting_payment")) == 1
    assert kinds.count(("transfer_confirmed", "confirming")) == 1
    assert order.status == OrderStatus.PAID
    assert len(mail.outbox) == 1


def _scans_in_threads(devnet, *, then=lambda report: None) -> list[ScanReport]:
    """Two scans of the chain at once, each on its own connection, each followed by `then`."""
    reports: list[ScanReport] = []
    errors: list[BaseException] = []

    def scan_in_thread():
        try:
            reports.append(chain_scan(chain=Chain.objects.get(pk=devnet.chain.pk)))
            then(reports[-1])
        except BaseException as error:
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=scan_in_thread) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    return reports


@dataclass
class CursorReads:
    barrier: threading.Barrier
    positions: list[int]


@pytest.fixture
def both_read_the_cursor(monkeypatch) -> CursorReads:
    """A barrier each scan meets right after reading the cursor, before it writes anything
    that depends on it: the scans cannot run one after the other. It gives up after 20 s
    (BrokenBarrierError) rather than hang."""
    reads = CursorReads(barrier=threading.Barrier(2, timeout=20), positions=[])
    read = scanner.cursor_for

    def read_then_meet(**kwargs):
        cursor = read(**kwargs)
        reads.positions.append(cursor.block_number)
        reads.barrier.wait()
        return cursor

    monkeypatch.setattr(scanner, "cursor_for", read_then_meet)
    return reads


@pytest.mark.django_db(transaction=True)
def test_two_scans_of_one_chain_at_once_record_one_transfer(devnet, both_read_the_cursor):
    invoice = order_with_invoice(devnet.usdc)
    devnet.pay_token(invoice.deposit_address, int(invoice.amount_due))
    devnet.mine(3)

    def wait_if_skipped(report):
        if report.skipped:
            # The scan holding the lock waits at the barrier until this one was turned away.
            both_read_the_cursor.barrier.wait()

    reports = _scans_in_threads(devnet, then=wait_if_skipped)
    assert sorted(r.skipped for r in reports) == [False, True]
    assert Transfer.objects.count() == 1
    assert reload(invoice)[1].status == OrderStatus.PAID
    assert not any(r.error for r in reports)


@pytest.mark.django_db(transaction=True)
def test_without_the_lock_the_cursor_guard_still_records_once(
    devnet, monkeypatch, both_read_the_cursor
):
    @contextmanager
    def no_lock(chain):
        yield True

    monkeypatch.setattr(scanner, "chain_scan_lock", no_lock)
    invoice = order_with_invoice(devnet.usdc)
    devnet.pay_token(invoice.deposit_address, int(invoice.amount_due))
    devnet.mine(3)

    reports = _scans_in_threads(devnet)
    # Both scans started from the same cursor; the conditional update let one move it, the
    # other found it moved and kept none of its writes.
    first, second = both_read_the_cursor.positions
    assert first == second < ScanCursor.objects.get(chain=devnet.chain).block_number
    assert sorted(report.blocks > 0 for report in reports) == [False, True]
    assert Transfer.objects.count() == 1
    order = reload(invoice)[1]
    assert order.status == OrderStatus.PAID
    assert order.events.filter(kind="transfer_seen").count() == 1


def test_transfers_made_while_the_worker_was_stopped_are_all_credited(devnet):
    invoices = [order_with_invoice(devnet.usdc) for _ in range(3)]
    for invoice in invoices:
        devnet.pay_token(invoice.deposit_address, int(invoice.amount_due))
        devnet.mine(7)
    devnet.scan()
    assert all(reload(i)[1].status == OrderStatus.PAID for i in invoices)
    assert ScanCursor.objects.get(chain=devnet.chain).block_number == devnet.head()


def test_rpc_down_fails_cleanly_and_the_payment_is_credited_after_recovery(devnet, settings):
    settings.PAYMENTS_RPC_RETRIES = 0
    invoice = order_with_invoice(devnet.usdc)
    cursor_before = ScanCursor.objects.get(chain=devnet.chain)
    Chain.objects.filter(pk=devnet.chain.pk).update(default_rpc_url="http://127.0.0.1:1")
    devnet.chain.refresh_from_db()

    devnet.pay_token(invoice.deposit_address, int(invoice.amount_due))
    devnet.mine(3)
    report = devnet.scan()
    assert "RpcUnavailable" in repr(report.error) or report.error
    cursor = ScanCursor.objects.get(chain=devnet.chain)
    assert (cursor.block_number, cursor.block_hash) == (
        cursor_before.block_number,
        cursor_before.block_hash,
    )
    assert cursor.last_error

    Chain.objects.filter(pk=devnet.chain.pk).update(default_rpc_url=devnet.node.url)
    devnet.chain.refresh_from_db()
    devnet.scan()
    assert reload(invoice)[1].status == OrderStatus.PAID
    assert ScanCursor.objects.get(chain=devnet.chain).last_error == ""


def test_range_too_large_halves_the_range_without_a_gap(devnet):
    invoices = [order_with_invoice(devnet.usdc) for _ in range(3)]
    start = devnet.head()
    for invoice in invoices:
        devnet.mine(4)
        devnet.pay_token(invoice.deposit_address, int(invoice.amount_due))
    devnet.mine(10)
    with FlakyRpcProxy(devnet.node.url, max_log_range=3) as proxy:
        devnet.scan(client=RpcClient(proxy.url))
    assert proxy.refused_ranges  # it did ask for too much at first
    covered = sorted(proxy.log_ranges)
    assert covered[0][0] == start + 1 and covered[-1][1] == devnet.head()
    assert all(b[0] == a[1] + 1 for a, b in itertools.pairwise(covered))
    assert all(reload(i)[1].status == OrderStatus.PAID for i in invoices)
    assert ScanCursor.objects.get(chain=devnet.chain).block_range <= 3
    assert len(proxy.refused_ranges) <= 4  # halvings, no refusal loop


def test_http_429_is_retried_with_back_off(devnet, settings):
    settings.PAYMENTS_RPC_BACKOFF_SECONDS = 0.01
    invoice = order_with_invoice(devnet.usdc)
    devnet.pay_token(invoice.deposit_address, int(invoice.amount_due))
    devnet.mine(3)
    with FlakyRpcProxy(devnet.node.url, throttle=2) as proxy:
        report = devnet.scan(client=RpcClient(proxy.url))
    assert not report.error
    assert reload(invoice)[1].status == OrderStatus.PAID


def _scan_cost(devnet, open_invoices: int) -> int:
    """RPC calls to scan 20 blocks holding 2 payments, with this many invoices open."""
    paid = [order_with_invoice(devnet.usdc), order_with_invoice(devnet.eth)]
    template = paid[0]
    Invoice.objects.bulk_create(
        Invoice(
            order=template.order.__class__.objects.create(
                **{
                    f.name: getattr(template.order, f.name)
                    for f in template.order._meta.concrete_fields
                    if f.name not in ("id", "number")
                },
                number=f"LG-COST-{open_invoices}-{n}",
            ),
            asset=template.asset,
            deposit_address=f"0x{open_invoices:04x}{n:036x}",
            derivation_index=10**8 + open_invoices * 1000 + n,
            amount_due=template.amount_due,
            rate=template.rate,
            locked_rate=template.locked_rate,
            fiat_amount=template.fiat_amount,
            currency=template.currency,
            expires_at=template.expires_at,
            monitor_until=template.monitor_until,
        )
        for n in range(open_invoices - 2)
    )
    assert Invoice.objects.filter(status="open").count() >= open_invoices
    devnet.scan()  # start from the head
    devnet.pay_token(paid[0].deposit_address, int(paid[0].amount_due))
    devnet.pay_native(paid[1].deposit_address, int(paid[1].amount_due))
    devnet.mine(20 - 3)  # mint + 2 payments + 17 = 20 blocks
    client = RpcClient(devnet.node.url)
    devnet.scan(client=client)
    # Past their watch period: the next run's addresses are its own.
    Invoice.objects.update(monitor_until=timezone.now() - timedelta(days=30))
    return sum(client.calls.values())


def test_rpc_calls_for_a_block_range_do_not_grow_with_open_invoices(devnet, settings):
    settings.PAYMENTS_MAX_BLOCK_RANGE = 500
    few = _scan_cost(devnet, 10)
    many = _scan_cost(devnet, 500)
    assert few == many
    assert rpc.call_counter["eth_getLogs"] > 0

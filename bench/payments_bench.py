"""Payments watcher benchmark (run by hand): `.venv/bin/python bench/payments_bench.py`.

Starts its own anvil (1 s blocks) and measures, on a throwaway database:
1. latency: time from the block that gives a payment its Nth confirmation to the order being
   paid, with the watcher scanning every --interval seconds like Celery beat would
   (median and p95 over --payments payments);
2. throughput: blocks scanned per second when the watcher catches up --blocks blocks, with
   the number of RPC calls it made.

The database is PostgreSQL `payments_bench` (created if missing) unless --sqlite is given.
`make bench` (bench/run.py) runs the same measurements as rows of its table.
"""

import argparse
import logging
import os
import random
import statistics
import sys
import threading
import time
from contextlib import contextmanager, nullcontext, suppress
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import database_recreate, percentile  # noqa: E402

BENCH_GPU_SLUG = "bench-payments"


def _database_url(use_sqlite: bool) -> str:
    if use_sqlite:
        return "sqlite:////tmp/payments_bench.sqlite3"
    return database_recreate("payments_bench")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--payments", type=int, default=20)
    parser.add_argument("--interval", type=float, default=None, help="beat interval (s)")
    parser.add_argument("--confirmations", type=int, default=3)
    parser.add_argument("--blocks", type=int, default=2000)
    parser.add_argument("--sqlite", action="store_true")
    args = parser.parse_args()

    os.environ["DATABASE_URL"] = _database_url(args.sqlite)
    # Forced, as bench.settings does: the tasks the latency run queues must never reach the
    # filesystem broker (or a Redis) that `make run`'s worker reads, with another database.
    os.environ["CELERY_BROKER_URL"] = "memory://localhost/"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "rental.settings.local")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    from rental.celery import app as celery_app

    # Nothing leaves the process: e-mails stay in memory, tasks run inline (the latency run
    # queues its scans' tasks in memory instead: tasks_queued).
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    celery_app.conf.task_always_eager = True
    call_command("migrate", verbosity=0)
    logging.getLogger("celery").setLevel(logging.WARNING)

    from tests.anvil import anvil_start, anvil_stop

    node = anvil_start(block_time=1)
    try:
        interval = args.interval or settings.PAYMENTS_SCAN_INTERVAL_SECONDS
        chain = chain_prepare(node, confirmations=args.confirmations)
        result = latency(
            node, chain=chain, payments=args.payments, interval=interval, on_miss=print
        )
        print(
            f"Latency, Nth confirmation -> order paid ({len(result.seconds)} payments, "
            f"N={result.confirmations}):"
        )
        print(f"  beat interval {interval:.1f} s, anvil block time 1 s")
        print(f"  median {result.median:.2f} s, p95 {result.p95:.2f} s, max {result.max:.2f} s")
        throughput(node, chain=chain, blocks=args.blocks)
    finally:
        anvil_stop(node)


def chain_prepare(node, *, confirmations: int):
    """The devnet chain (ETH and a freshly deployed test USDC) registered on `node`, watched
    from its head. A cursor left by the HTTP rows (block 100 of no node) is dropped first, so
    devnet_register starts one at this node's head: kept, it had the first scans wait for
    block 100, then take the fresh chain for a reorg and scan it again."""
    from payments.devnet import DEVNET_CHAIN_ID, devnet_register, token_deploy
    from payments.models import ScanCursor

    ScanCursor.objects.filter(chain__chain_id=DEVNET_CHAIN_ID).delete()
    token = token_deploy(node.w3)
    return devnet_register(rpc_url=node.url, token_address=token, confirmations=confirmations)


def _buyer_and_gpu():
    """One buyer and one GPU with stock for every order of a run.

    A new user per order would spend the run hashing passwords, and a new GPU per order
    would fill the catalog that the HTTP benchmark serves.
    """
    from accounts.models import User
    from tests.factories import GpuModelFactory

    buyer, _created = User.objects.get_or_create(
        email="payer@bench.invalid", defaults={"first_name": "Bench", "last_name": "Payer"}
    )
    # Off sale: its orders are written directly, and the catalog must not show it.
    gpu = GpuModelFactory(
        slug=BENCH_GPU_SLUG, name="Bench payments GPU", units_total=10_000, is_active=False
    )
    return buyer, gpu


def _order(buyer, gpu):
    """An order awaiting payment, written directly (order_create is row 2's business)."""
    from tests.factories import OrderFactory

    return OrderFactory(user=buyer, gpu=gpu, total=Decimal("100.00"))


@dataclass
class LatencyResult:
    seconds: list[float]
    sent: int
    interval: float
    confirmations: int

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def p95(self) -> float:
        return percentile(self.seconds, 0.95)

    @property
    def max(self) -> float:
        return max(self.seconds)


@contextmanager
def heads_followed(chain):
    """payments.watcher.heads.HeadFollower (what `manage.py follow_heads` runs) in a thread."""
    import asyncio

    from payments.watcher.heads import HeadFollower

    loop = asyncio.new_event_loop()
    task = loop.create_task(HeadFollower(chain).run())

    def follow() -> None:
        with suppress(asyncio.CancelledError):
            loop.run_until_complete(task)

    thread = threading.Thread(target=follow, daemon=True)
    thread.start()
    try:
        yield
    finally:
        loop.call_soon_threadsafe(task.cancel)
        thread.join(timeout=10)


def latency(
    node,
    *,
    chain,
    payments: int,
    interval: float,
    follow_heads: bool = False,
    on_miss=lambda message: None,
) -> LatencyResult:
    """Pay `payments` invoices (USDC and ETH in turn) while a beat thread scans the chain,
    and with `follow_heads` the head follower too."""
    with tasks_queued(), heads_followed(chain) if follow_heads else nullcontext():
        return _latency(node, chain=chain, payments=payments, interval=interval, on_miss=on_miss)


@contextmanager
def tasks_queued():
    """The tasks a scan queues (the "paid" e-mail with its facture PDF, webhooks, provisioning)
    go to a queue, as the chain worker's go to the worker in production, instead of running
    inline in the scan (bench.settings runs tasks inline): a PDF rendered inside the scan
    held up the next payment's confirmation by half a second."""
    from rental.celery import app

    eager = app.conf.task_always_eager
    app.conf.task_always_eager = False
    try:
        yield
    finally:
        app.conf.task_always_eager = eager


def _latency(node, *, chain, payments: int, interval: float, on_miss) -> LatencyResult:
    from orders.models import OrderEvent
    from payments.devnet import native_transfer, token_mint, token_transfer
    from payments.models import Asset
    from payments.services import invoice_issue
    from payments.watcher.scanner import chain_scan

    usdc = Asset.objects.get(chain=chain, kind="erc20")
    eth = Asset.objects.get(chain=chain, kind="native")
    buyer, gpu = _buyer_and_gpu()
    confirmations = chain.confirmations
    w3 = node.w3
    payer = w3.eth.accounts[1]
    token_mint(w3, token_address=usdc.contract_address, to=payer, amount=10**15)

    stop = threading.Event()
    first_seen: dict[int, float] = {}

    def watch_head():
        while not stop.is_set():
            first_seen.setdefault(w3.eth.block_number, time.time())
            time.sleep(0.01)

    def beat():
        from django.db import connection

        while not stop.is_set():
            started = time.monotonic()
            chain_scan(chain=chain)
            stop.wait(max(0.0, interval - (time.monotonic() - started)))
        connection.close()

    threads = [threading.Thread(target=watch_head), threading.Thread(target=beat)]
    for thread in threads:
        thread.start()
    sent = []
    results = []
    try:
        for n in range(payments):
            asset = usdc if n % 2 == 0 else eth
            invoice = invoice_issue(order=_order(buyer, gpu), asset=asset)
            if asset.is_native:
                tx = native_transfer(
                    w3, sender=payer, to=invoice.deposit_address, amount=int(invoice.amount_due)
                )
            else:
                tx = token_transfer(
                    w3,
                    token_address=usdc.contract_address,
                    sender=payer,
                    to=invoice.deposit_address,
                    amount=int(invoice.amount_due),
                )
            sent.append((invoice, tx))
            time.sleep(random.uniform(0.1, 0.9))  # payments land at any phase of the beat
        deadline = time.time() + 120
        for invoice, tx in sent:
            block = w3.eth.wait_for_transaction_receipt(tx, timeout=60)["blockNumber"]
            nth = block + confirmations - 1
            while True:
                paid = OrderEvent.objects.filter(
                    order_id=invoice.order_id, kind="status", new_status="paid"
                ).first()
                if paid or time.time() > deadline:
                    break
                time.sleep(0.05)
            if paid is None or nth not in first_seen:
                on_miss(f"  payment to {invoice.deposit_address} not paid in time")
                continue
            results.append(paid.created_at.timestamp() - first_seen[nth])
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    if not results:
        raise RuntimeError("no payment was marked paid in time")
    return LatencyResult(
        seconds=results, sent=len(sent), interval=interval, confirmations=confirmations
    )


@dataclass
class CatchUpResult:
    open_invoices: int
    paid: int
    blocks: int
    seconds: float
    calls: dict[str, int]
    http_requests: int
    credited: int
    bytes_received: int = 0
    start_block: int = 0

    @property
    def total_calls(self) -> int:
        return sum(self.calls.values())

    @property
    def calls_per_1000_blocks(self) -> float:
        return self.total_calls * 1000 / self.blocks

    @property
    def http_requests_per_1000_blocks(self) -> float:
        return self.http_requests * 1000 / self.blocks

    @property
    def bytes_per_1000_blocks(self) -> float:
        return self.bytes_received * 1000 / self.blocks

    @property
    def blocks_per_second(self) -> float:
        return self.blocks / self.seconds


def catch_up(
    node,
    *,
    chain,
    blocks: int,
    open_invoices: int = 10,
    paid: int = 10,
    traffic=None,
    timeout: float = 120,
) -> CatchUpResult:
    """The watcher catches up `blocks` blocks while `open_invoices` invoices wait for payment.

    `paid` of them receive a USDC transfer, spread over the blocks; `traffic(n)` makes the
    other blocks (empty ones by default). The RPC calls are counted on the client the scans
    share. The invoices end past their watch period: the next run's addresses are its own.
    """
    from django.utils import timezone

    from payments.devnet import token_mint, token_transfer
    from payments.models import Asset, Invoice, ScanCursor
    from payments.services import invoice_issue
    from payments.watcher.rpc import RpcClient
    from payments.watcher.scanner import chain_scan

    usdc = Asset.objects.get(chain=chain, kind="erc20")
    w3 = node.w3
    payer = w3.eth.accounts[2]
    token_mint(w3, token_address=usdc.contract_address, to=payer, amount=10**15)
    buyer, gpu = _buyer_and_gpu()
    invoices = [invoice_issue(order=_order(buyer, gpu), asset=usdc) for _ in range(open_invoices)]
    chain_scan(chain=chain)  # the cursor starts at the head, with every invoice open
    paying = invoices[:paid]
    for invoice in paying:
        token_transfer(
            w3,
            token_address=usdc.contract_address,
            sender=payer,
            to=invoice.deposit_address,
            amount=int(invoice.amount_due),
        )
        _blocks_make(node, blocks // len(paying) - 1, traffic)
    if not paying:
        _blocks_make(node, blocks, traffic)
    start_block = ScanCursor.objects.get(chain=chain).block_number
    client = RpcClient(chain.rpc_url)
    # No block mined while the watcher catches up: runs compared side by side scan the same
    # ranges, whatever the second ticks.
    node.rpc("evm_setIntervalMining", [0])
    try:
        head = w3.eth.block_number
        deadline = time.monotonic() + timeout
        started = time.perf_counter()
        while ScanCursor.objects.get(chain=chain).block_number < head:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the watcher did not reach block {head} in {timeout:.0f} s")
            chain_scan(chain=chain, client=client)
        elapsed = time.perf_counter() - started
    finally:
        node.rpc("evm_setIntervalMining", [1])
    Invoice.objects.filter(pk__in=[i.pk for i in invoices]).update(
        monitor_until=timezone.now() - timedelta(days=30)
    )
    return CatchUpResult(
        open_invoices=open_invoices,
        paid=len(paying),
        blocks=ScanCursor.objects.get(chain=chain).block_number - start_block,
        seconds=elapsed,
        calls=dict(client.calls),
        http_requests=client.http_requests,
        credited=sum(1 for invoice in paying if invoice.transfers.exists()),
        bytes_received=client.bytes_received,
        start_block=start_block,
    )


def _blocks_make(node, count: int, traffic) -> None:
    if count <= 0:
        return
    if traffic is None:
        node.rpc("anvil_mine", [hex(count)])
    else:
        traffic(count)


def throughput(node, *, chain, blocks: int) -> CatchUpResult:
    result = catch_up(node, chain=chain, blocks=blocks)
    print(
        f"Throughput: {result.blocks} blocks in {result.seconds:.2f} s = "
        f"{result.blocks_per_second:.0f} blocks/s"
    )
    print(
        f"  {result.total_calls} JSON-RPC calls in {result.http_requests} HTTP requests: "
        f"{result.calls}"
    )
    print(f"  {result.credited}/{result.paid} payments found on the way")
    return result


if __name__ == "__main__":
    main()

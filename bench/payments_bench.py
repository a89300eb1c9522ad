"""Payments watcher benchmark (run by hand): `.venv/bin/python bench/payments_bench.py`.

Starts its own anvil (1 s blocks) and measures, on a throwaway database:
1. latency: time from the block that gives a payment its Nth confirmation to the order being
   paid, with the watcher scanning every --interval seconds like Celery beat would
   (median and p95 over --payments payments);
2. throughput: blocks scanned per second when the watcher catches up --blocks blocks, with
   the number of RPC calls it made.

The database is PostgreSQL `payments_bench` (created if missing) unless --sqlite is given.
"""

import argparse
import logging
import os
import random
import statistics
import sys
import threading
import time
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _database_url(use_sqlite: bool) -> str:
    if use_sqlite:
        return "sqlite:////tmp/payments_bench.sqlite3"
    import psycopg2

    base = os.environ.get("BENCH_POSTGRES", "postgres://postgres@127.0.0.1:5432")
    conn = psycopg2.connect(f"{base}/postgres")
    conn.autocommit = True
    with conn.cursor() as cursor:
        cursor.execute("DROP DATABASE IF EXISTS payments_bench")
        cursor.execute("CREATE DATABASE payments_bench")
    conn.close()
    return f"{base}/payments_bench"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--payments", type=int, default=20)
    parser.add_argument("--interval", type=float, default=None, help="beat interval (s)")
    parser.add_argument("--confirmations", type=int, default=3)
    parser.add_argument("--blocks", type=int, default=2000)
    parser.add_argument("--sqlite", action="store_true")
    args = parser.parse_args()

    os.environ["DATABASE_URL"] = _database_url(args.sqlite)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "rental.settings.local")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    from rental.celery import app as celery_app

    # Nothing leaves the process: e-mails stay in memory, tasks run inline.
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    celery_app.conf.task_always_eager = True
    call_command("migrate", verbosity=0)
    logging.getLogger("celery").setLevel(logging.WARNING)

    from tests.anvil import anvil_start, anvil_stop

    node = anvil_start(block_time=1)
    try:
        interval = args.interval or settings.PAYMENTS_SCAN_INTERVAL_SECONDS
        latency(node, payments=args.payments, interval=interval, confirmations=args.confirmations)
        throughput(node, blocks=args.blocks)
    finally:
        anvil_stop(node)


def _setup(node, confirmations: int):
    from payments.devnet import devnet_register, token_deploy

    token = token_deploy(node.w3)
    return devnet_register(rpc_url=node.url, token_address=token, confirmations=confirmations)


def _order():
    from tests.factories import OrderFactory

    return OrderFactory(total=Decimal("100.00"))


def latency(node, *, payments: int, interval: float, confirmations: int) -> None:
    from orders.models import OrderEvent
    from payments.devnet import native_transfer, token_mint, token_transfer
    from payments.models import Asset
    from payments.scanner import chain_scan
    from payments.services import invoice_issue

    chain = _setup(node, confirmations)
    usdc = Asset.objects.get(chain=chain, kind="erc20")
    eth = Asset.objects.get(chain=chain, kind="native")
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
    try:
        for n in range(payments):
            asset = usdc if n % 2 == 0 else eth
            invoice = invoice_issue(order=_order(), asset=asset)
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
        results = []
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
                print(f"  payment to {invoice.deposit_address} not paid in time")
                continue
            results.append(paid.created_at.timestamp() - first_seen[nth])
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    results.sort()
    p95 = results[min(len(results) - 1, round(0.95 * (len(results) - 1)))]
    print(f"Latency, Nth confirmation -> order paid ({len(results)} payments, N={confirmations}):")
    print(f"  beat interval {interval:.1f} s, anvil block time 1 s")
    print(f"  median {statistics.median(results):.2f} s, p95 {p95:.2f} s, max {results[-1]:.2f} s")


def throughput(node, *, blocks: int) -> None:
    from payments.devnet import token_mint, token_transfer
    from payments.models import Asset, Chain, ScanCursor
    from payments.rpc import RpcClient
    from payments.scanner import chain_scan
    from payments.services import invoice_issue

    chain = Chain.objects.get(chain_id=31337)
    usdc = Asset.objects.get(chain=chain, kind="erc20")
    chain_scan(chain=chain)  # the cursor starts at the head
    w3 = node.w3
    payer = w3.eth.accounts[2]
    token_mint(w3, token_address=usdc.contract_address, to=payer, amount=10**15)
    invoices = [invoice_issue(order=_order(), asset=usdc) for _ in range(10)]
    for invoice in invoices:
        token_transfer(
            w3,
            token_address=usdc.contract_address,
            sender=payer,
            to=invoice.deposit_address,
            amount=int(invoice.amount_due),
        )
        node.rpc("anvil_mine", [hex(blocks // len(invoices))])
    start_block = ScanCursor.objects.get(chain=chain).block_number
    client = RpcClient(chain.rpc_url)
    started = time.perf_counter()
    head = w3.eth.block_number
    while ScanCursor.objects.get(chain=chain).block_number < head:
        chain_scan(chain=chain, client=client)
    elapsed = time.perf_counter() - started
    scanned = ScanCursor.objects.get(chain=chain).block_number - start_block
    credited = sum(1 for i in invoices if i.transfers.exists())
    calls = sum(client.calls.values())
    print(f"Throughput: {scanned} blocks in {elapsed:.2f} s = {scanned / elapsed:.0f} blocks/s")
    print(f"  {calls} JSON-RPC calls in {client.http_requests} HTTP requests: {dict(client.calls)}")
    print(f"  {credited}/{len(invoices)} payments found on the way")


if __name__ == "__main__":
    main()

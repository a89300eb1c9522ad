"""`make bench`: one table of the storefront's performance, every row measured in this run.

The machine is shared and noisy, so each row compares things measured side by side here
(pages with a trivial view, 1,000 open invoices with 10) rather than claiming absolutes.

1. HTTP: gunicorn serving bench.settings (production's, DEBUG off, on PostgreSQL
   `rental_bench`) under wrk at 16 connections: the catalog, a GPU page and the partner
   API's quote, against a trivial view that touches neither database nor template.
2. Orders: threads racing orders.services.order_create for a GPU with few units.
3. Watcher: RPC calls per 1,000 blocks with 10 and with 1,000 open invoices.
4. Payments: Nth confirmation -> paid, against the beat interval (bench/payments_bench.py).

Everything runs on 127.0.0.1; gunicorn and anvil are started here and stopped on exit,
Ctrl-C or SIGTERM. Progress goes to stderr, the table to stdout.
"""

import argparse
import io
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import (  # noqa: E402
    BENCH_DATABASE,
    database_recreate,
    exit_on_termination,
    progress,
)
from bench.table import Row, table_render  # noqa: E402
from bench.web import BASELINE, Gunicorn, wrk_path  # noqa: E402

SECTIONS = ("http", "orders", "watcher", "latency", "provisioning")
CATALOG_MIN_RATIO = 0.5
CATALOG_MAX_P99_MS = 100.0
API_EMAIL = "partner@bench.invalid"
NOTES = [
    "1: the quote API keeps its throttle (Redis) at a rate wrk cannot reach; p99 is the worst run.",
    "2: buyers are forked processes (one connection each), one unit per order; Celery tasks "
    "run inline, so each order also pays for its notification after commit.",
    "3: JSON-RPC calls counted by payments.rpc.RpcClient; blocks are fetched in batches of 50, "
    "one HTTP request each; a web3.py client made the same calls 42-71% slower per block "
    "(payments/rpc.py).",
    "4: anvil mines a block every second; the beat is a thread calling chain_scan.",
    "5: Debian's sshd on 127.0.0.1 as the GPU host; Celery inline, so a worker's queue wait "
    "is not counted; the clock starts at the paid transition and stops at the customer's "
    "first successful `ssh -i`.",
]


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(SECTIONS), help="comma-separated sections")
    http = parser.add_argument_group("HTTP (row 1)")
    http.add_argument("--connections", type=int, default=16)
    http.add_argument("--rounds", type=int, default=2, help="wrk runs per page, interleaved")
    http.add_argument("--seconds", type=float, default=6.0, help="length of one wrk run")
    http.add_argument("--workers", type=int, default=Gunicorn.workers)
    http.add_argument("--worker-class", default=Gunicorn.worker_class)
    http.add_argument("--threads", type=int, default=Gunicorn.threads)
    orders = parser.add_argument_group("orders (row 2)")
    orders.add_argument("--units", type=int, default=50)
    orders.add_argument("--attempts", type=int, default=200)
    orders.add_argument("--buyers", type=int, default=16, help="processes at once")
    hosts = parser.add_argument_group("provisioning (row 5)")
    hosts.add_argument("--ssh-orders", type=int, default=10)
    chain = parser.add_argument_group("watcher and payments (rows 3 and 4)")
    chain.add_argument("--blocks", type=int, default=1000)
    chain.add_argument("--few-invoices", type=int, default=10)
    chain.add_argument("--many-invoices", type=int, default=1000)
    chain.add_argument("--payments", type=int, default=16)
    chain.add_argument("--confirmations", type=int, default=3)
    args = parser.parse_args()
    args.only = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = set(args.only) - set(SECTIONS)
    if unknown:
        parser.error(f"unknown sections {sorted(unknown)}; choose among {SECTIONS}")
    return args


def _django_setup() -> None:
    os.environ["DJANGO_SETTINGS_MODULE"] = "bench.settings"
    import django

    django.setup()
    from django.core.management import call_command

    progress(f"database {BENCH_DATABASE}: migrate, seed_catalog")
    call_command("migrate", verbosity=0)
    call_command("seed_catalog", stdout=io.StringIO())
    logging.getLogger("celery").setLevel(logging.WARNING)


def _api_key() -> str:
    """A partner account and its key, made the way the README says: create_api_key."""
    from django.core.management import call_command

    from accounts.models import User

    User.objects.create_user(API_EMAIL, first_name="Bench", last_name="Partner")
    output = io.StringIO()
    call_command("create_api_key", API_EMAIL, name="bench", stdout=output)
    return output.getvalue().strip().splitlines()[-1]


def _ms(value: float) -> str:
    return f"{value:.0f} ms" if value >= 10 else f"{value:.1f} ms"


def http_rows(args, config: Gunicorn, workdir: Path) -> list[Row]:
    from bench.web import gunicorn_serving, pages_check, pages_measure
    from tests.anvil import free_port

    api_key = _api_key()
    progress(f"HTTP: starting gunicorn ({config.describe()})")
    with gunicorn_serving(config, port=free_port(), log_path=workdir / "gunicorn.log") as url:
        pages_check(url, api_key)
        results = pages_measure(
            url,
            api_key=api_key,
            rounds=args.rounds,
            seconds=args.seconds,
            connections=args.connections,
        )
    baseline = results[0].requests_per_second
    rows = []
    for result in results:
        page = result.page
        ratio = result.requests_per_second / baseline
        target = verdict = ""
        if page is BASELINE:
            verdict = "baseline"
        elif page.path == "/fr/":
            target = f">= {CATALOG_MIN_RATIO:.2f}x, p99 < {CATALOG_MAX_P99_MS:.0f} ms"
            met = ratio >= CATALOG_MIN_RATIO and result.p99_ms < CATALOG_MAX_P99_MS
            verdict = "OK" if met else "MISS"
        if result.errors:
            verdict = f"{result.errors} ERRORS"
        rows.append(
            Row(
                "1",
                f"HTTP {page.name}: {'POST' if page.script else 'GET'} {page.path}",
                f"{result.requests_per_second:.0f} req/s, p50 {_ms(result.p50_ms)}, "
                f"p99 {_ms(result.p99_ms)}",
                f"{ratio:.2f}x trivial",
                target,
                verdict,
            )
        )
    return rows


def orders_rows(args) -> list[Row]:
    from bench.orders_bench import oversell_run

    # One buyer alone first: the cost of an order without any wait on the GPU's row lock.
    runs = [
        oversell_run(units=args.units, attempts=args.units, concurrency=1),
        oversell_run(units=args.units, attempts=args.attempts, concurrency=args.buyers),
    ]
    alone = runs[0]
    rows = []
    for result in runs:
        sold_out = result.units_held == result.units_total
        verdict = (
            "OK"
            if result.oversold == 0
            and result.slots_held_twice == 0
            and not result.failed
            and sold_out
            else "FAIL"
        )
        details = f"; {len(result.failed)} FAILED: {result.failed[0]}" if result.failed else ""
        buyers = "1 buyer alone" if result.concurrency == 1 else f"{result.concurrency} at once"
        rows.append(
            Row(
                "2",
                f"order_create, {result.attempts} attempts, {buyers}, {result.units_total} units",
                f"{result.created} orders in {result.sold_out_after:.2f} s = "
                f"{result.orders_per_second:.0f} orders/s; {result.refused} refused"
                f"{details}; held {result.units_held}/{result.units_total}, "
                f"oversold {result.oversold}, slots held twice {result.slots_held_twice}",
                f"{result.orders_per_second / alone.orders_per_second:.2f}x orders/s alone",
                "oversold = 0, slots held twice = 0",
                verdict,
            )
        )
    return rows


def provisioning_rows(args) -> list[Row]:
    from bench.provisioning_bench import provisioning_latency

    result = provisioning_latency(orders=args.ssh_orders)
    details = f"; {len(result.failed)} FAILED: {result.failed[0]}" if result.failed else ""
    met = not result.failed and result.p95 <= 10.0  # the target the issue sets
    return [
        Row(
            "5",
            f"paid -> SSH login possible ({len(result.seconds)}/{args.ssh_orders} orders, "
            "local OpenSSH host)",
            f"median {result.median:.2f} s, p95 {result.p95:.2f} s{details}",
            "",
            "p95 <= 10 s",
            "OK" if met else "SLOW",
        )
    ]


def chain_rows(args) -> list[Row]:
    from django.conf import settings

    from bench.payments_bench import catch_up, chain_prepare, latency
    from tests.anvil import anvil_start, anvil_stop

    rows = []
    progress("chain: starting anvil (1 s blocks)")
    node = anvil_start(block_time=1)
    try:
        chain = chain_prepare(node, confirmations=args.confirmations)
        if "watcher" in args.only:
            runs = []
            for open_invoices in (args.few_invoices, args.many_invoices):
                progress(f"watcher: {args.blocks} blocks with {open_invoices} open invoices")
                runs.append(
                    catch_up(node, chain=chain, blocks=args.blocks, open_invoices=open_invoices)
                )
            few = runs[0]
            for run in runs:
                ratio = run.calls_per_1000_blocks / few.calls_per_1000_blocks
                equal = round(run.calls_per_1000_blocks) == round(few.calls_per_1000_blocks)
                rows.append(
                    Row(
                        "3",
                        f"watcher catch-up, {run.open_invoices} open invoices",
                        f"{run.calls_per_1000_blocks:.0f} RPC calls / 1000 blocks "
                        f"({run.http_requests_per_1000_blocks:.0f} HTTP requests); "
                        f"{run.blocks_per_second:.0f} blocks/s; "
                        f"{run.credited}/{run.paid} payments found",
                        f"{ratio:.2f}x calls of {few.open_invoices} open",
                        "" if run is few else "equal",
                        "baseline" if run is few else ("OK" if equal else "GROWS"),
                    )
                )
        if "latency" in args.only:
            interval = settings.PAYMENTS_SCAN_INTERVAL_SECONDS
            progress(f"payments: {args.payments} payments, beat every {interval:g} s")
            result = latency(node, chain=chain, payments=args.payments, interval=interval)
            met = result.p95 <= interval + 2.0  # the target the issue sets
            rows.append(
                Row(
                    "4",
                    f"Nth confirmation -> paid (N={result.confirmations}, "
                    f"{len(result.seconds)}/{result.sent} payments)",
                    f"median {result.median:.2f} s, p95 {result.p95:.2f} s, max {result.max:.2f} s",
                    f"median {result.median / interval:.2f}x, p95 {result.p95 / interval:.2f}x "
                    f"beat ({interval:g} s)",
                    "p95 <= beat + 2 s",
                    "OK" if met else "SLOW",
                )
            )
    finally:
        anvil_stop(node)
    return rows


def main() -> None:
    args = _arguments()
    exit_on_termination()
    config = Gunicorn(workers=args.workers, worker_class=args.worker_class, threads=args.threads)
    if "http" in args.only:
        wrk_path()  # before anything starts: a missing wrk says how to install it
    started = time.monotonic()
    database_recreate(BENCH_DATABASE)
    _django_setup()
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="rental-bench-") as workdir:
        if "http" in args.only:
            rows += http_rows(args, config, Path(workdir))
        if "orders" in args.only:
            rows += orders_rows(args)
        if "watcher" in args.only or "latency" in args.only:
            rows += chain_rows(args)
        if "provisioning" in args.only:
            rows += provisioning_rows(args)

    cpus = os.cpu_count()
    print(
        f"LocaGPU benchmark, {time.strftime('%Y-%m-%d %H:%M')}, {cpus} CPUs, "
        f"{time.monotonic() - started:.0f} s; ratios compare rows measured in this run."
    )
    if "http" in args.only:
        print(
            f"HTTP: gunicorn {config.describe()} (bench.settings = production, DEBUG off, "
            f"PostgreSQL {BENCH_DATABASE}, Redis cache); wrk -t2 -c{args.connections} "
            f"--latency, {args.rounds} interleaved runs of {args.seconds:g} s per page; "
            "p50 = median of runs, p99 = worst run."
        )
    print()
    print(table_render(rows))
    print()
    for note in NOTES:
        print(note)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        progress("interrupted: what the bench started is stopped")
        sys.exit(130)

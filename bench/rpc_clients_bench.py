"""The watcher's catch-up with each RPC client, side by side over the same blocks.

`BENCH_DB_NAME=rental_bench_web3 .venv/bin/python bench/rpc_clients_bench.py`

One anvil (mining only when asked), one chain of --blocks blocks holding --paid USDC payments
to --open-invoices open invoices; then, --rounds times and in alternating order, each client
scans those blocks from the same cursor inside a transaction rolled back afterwards, so every
scan sees the same blocks and the same database. Reports JSON-RPC calls, HTTP requests and
blocks/s per client, and the candidate's ratio to the current client.
"""

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import BENCH_DATABASE, database_recreate, progress  # noqa: E402

# Within this much of the current client in calls and in time, the candidate may replace it.
TOLERANCE = 0.10


def _clients():
    from payments.rpc import RpcClient
    from payments.rpc_web3 import Web3RpcClient

    return {"requests (today)": RpcClient, "web3.py": Web3RpcClient}


def _chain_ready(node, *, blocks: int, open_invoices: int, paid: int):
    from bench.payments_bench import _buyer_and_gpu, _order, chain_prepare
    from payments.devnet import token_mint, token_transfer
    from payments.models import Asset
    from payments.scanner import chain_scan
    from payments.services import invoice_issue

    chain = chain_prepare(node, confirmations=3)
    usdc = Asset.objects.get(chain=chain, kind="erc20")
    payer = node.w3.eth.accounts[2]
    token_mint(node.w3, token_address=usdc.contract_address, to=payer, amount=10**15)
    buyer, gpu = _buyer_and_gpu()
    invoices = [invoice_issue(order=_order(buyer, gpu), asset=usdc) for _ in range(open_invoices)]
    chain_scan(chain=chain)  # the cursor starts at the head, with every invoice open
    for invoice in invoices[:paid]:
        token_transfer(
            node.w3,
            token_address=usdc.contract_address,
            sender=payer,
            to=invoice.deposit_address,
            amount=int(invoice.amount_due),
        )
        node.rpc("anvil_mine", [hex(blocks // paid)])
    return chain, invoices[:paid]


def _catch_up(chain, client_class, paying) -> dict:
    """Scan to the head with a fresh client, then roll every write back."""
    from django.db import transaction

    from payments.models import ScanCursor
    from payments.scanner import chain_scan

    with transaction.atomic():
        start = ScanCursor.objects.get(chain=chain).block_number
        client = client_class(chain.rpc_url)
        head = client.block_number()
        client.calls.clear()
        http_before = client.http_requests
        started = time.perf_counter()
        while ScanCursor.objects.get(chain=chain).block_number < head:
            report = chain_scan(chain=chain, client=client)
            if report.error:
                raise RuntimeError(report.error)
        seconds = time.perf_counter() - started
        blocks = ScanCursor.objects.get(chain=chain).block_number - start
        credited = sum(1 for invoice in paying if invoice.transfers.exists())
        transaction.set_rollback(True)
    return {
        "blocks": blocks,
        "seconds": seconds,
        "calls": sum(client.calls.values()),
        "http": client.http_requests - http_before,
        "credited": credited,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=1000)
    parser.add_argument("--open-invoices", type=int, default=10)
    parser.add_argument("--paid", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    database_recreate(BENCH_DATABASE)
    os.environ["DJANGO_SETTINGS_MODULE"] = "bench.settings"
    import django

    django.setup()
    from django.core.management import call_command

    from tests.anvil import anvil_start, anvil_stop

    call_command("migrate", verbosity=0)
    clients = _clients()
    node = anvil_start()
    try:
        progress(f"{args.blocks} blocks, {args.paid} payments, {args.open_invoices} open")
        chain, paying = _chain_ready(
            node, blocks=args.blocks, open_invoices=args.open_invoices, paid=args.paid
        )
        runs: dict[str, list[dict]] = {name: [] for name in clients}
        for round_ in range(args.rounds):
            order = list(clients) if round_ % 2 == 0 else list(reversed(clients))
            for name in order:
                run = _catch_up(chain, clients[name], paying)
                runs[name].append(run)
                progress(
                    f"round {round_ + 1} {name}: {run['blocks']} blocks in {run['seconds']:.2f} s"
                    f" = {run['blocks'] / run['seconds']:.0f} blocks/s, {run['calls']} calls, "
                    f"{run['http']} HTTP requests, {run['credited']}/{len(paying)} credited"
                )
    finally:
        anvil_stop(node)
    _report(runs)


def _report(runs: dict[str, list[dict]]) -> None:
    summary = {}
    for name, rounds in runs.items():
        rates = [r["blocks"] / r["seconds"] for r in rounds]
        summary[name] = {
            "rate": statistics.median(rates),
            "calls": rounds[0]["calls"] * 1000 / rounds[0]["blocks"],
            "http": rounds[0]["http"] * 1000 / rounds[0]["blocks"],
        }
        print(
            f"{name:18} {summary[name]['calls']:.0f} calls / 1000 blocks, "
            f"{summary[name]['http']:.0f} HTTP requests / 1000 blocks, blocks/s "
            f"{' '.join(f'{rate:.0f}' for rate in rates)} (median {summary[name]['rate']:.0f})"
        )
    today, candidate = (summary[name] for name in runs)
    more_calls = candidate["calls"] / today["calls"] - 1
    slower = today["rate"] / candidate["rate"] - 1
    fits = more_calls <= TOLERANCE and slower <= TOLERANCE
    print(
        f"web3.py vs today: {more_calls:+.0%} calls, {slower:+.0%} time per block -> "
        f"{'web3.py fits' if fits else 'keep today'} (rule: at most +{TOLERANCE:.0%} each)"
    )


if __name__ == "__main__":
    main()

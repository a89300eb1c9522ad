"""Memory rows: a web worker's RSS over 20,000 requests, the watcher's with many invoices.

RSS is read from /proc/<pid>/status (VmRSS: resident now; VmHWM: the peak); the HTTP rows
read the web workers' CPU from /proc/<pid>/stat with the same helpers.
"""

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from bench.common import ROOT


def proc_status_kb(pid: int, field: str = "VmRSS") -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} for process {pid}")


def children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return sorted(found)


def cpu_seconds(pids: list[int]) -> float:
    """User and system CPU the processes have used so far (/proc/<pid>/stat)."""
    ticks = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks += int(fields[11]) + int(fields[12])  # utime, stime
    return ticks / os.sysconf("SC_CLK_TCK")


@dataclass
class WebMemory:
    after_first: dict[int, int]  # worker pid -> RSS in kB
    after_all: dict[int, int]
    first_requests: int
    all_requests: int
    errors: int

    @property
    def growth(self) -> float:
        """The largest growth of one worker, as a fraction of its RSS after the first part."""
        return max(self.after_all[pid] / self.after_first[pid] - 1 for pid in self.after_first)


def web_memory(base_url: str, master_pid: int, *, pool: Path, first: int, total: int):
    """About `first` mixed requests, every worker's RSS, then `total`, every worker's RSS.

    wrk runs for a time, not a number of requests: short runs until `first` are served, then
    longer ones until `total`.
    """
    from bench.web import wrk_run

    served = errors = 0

    def serve_until(count: int, seconds: float) -> None:
        nonlocal served, errors
        while served < count:
            run = wrk_run(base_url, pool, seconds=seconds, connections=16)
            served, errors = served + run.requests, errors + run.errors

    serve_until(first, seconds=1)
    first_served = served
    after_first = {pid: proc_status_kb(pid) for pid in children(master_pid)}
    serve_until(total, seconds=10)
    after_all = {pid: proc_status_kb(pid) for pid in children(master_pid)}
    if set(after_all) != set(after_first):
        raise RuntimeError("a gunicorn worker was replaced during the memory run")
    return WebMemory(after_first, after_all, first_served, served, errors)


def watcher_rss() -> dict:
    """Scan the devnet chain in a new process until it reaches the head; its memory then."""
    completed = subprocess.run(
        [sys.executable, "-m", "bench.watcher_process"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"watcher process failed:\n{completed.stderr[-3000:]}")
    return json.loads(completed.stdout.strip().splitlines()[-1])


def open_invoices_create(*, asset, count: int) -> None:
    """`count` more orders awaiting payment, each with an open invoice, written in bulk:
    invoice_issue would derive 10,000 addresses one by one. The addresses are not derived
    (nobody pays them), only unique, as the watcher needs."""
    from django.conf import settings
    from django.utils import timezone

    from bench.payments_bench import _buyer_and_gpu
    from catalog.models import Environment
    from orders.models import Order
    from payments.models import Invoice
    from payments.selectors import rate_current

    buyer, gpu = _buyer_and_gpu()
    rate = rate_current(asset=asset, currency="EUR")
    now = timezone.now()
    deadline = now + timedelta(hours=2)
    environment = Environment.objects.get(slug="pytorch")
    first = Invoice.objects.count()
    orders = Order.objects.bulk_create(
        Order(
            number=f"LG-BULK-{first + n:06d}",
            user=buyer,
            gpu=gpu,
            environment=environment,
            quantity=1,
            term_days=7,
            daily_rate=1,
            total=7,
            currency="EUR",
            payment_deadline=deadline,
        )
        for n in range(count)
    )
    Invoice.objects.bulk_create(
        Invoice(
            order=order,
            asset=asset,
            deposit_address=f"0x{0xB0000000 + first + n:040x}",
            derivation_index=10**8 + first + n,
            amount_due=7 * 10**6,
            rate=rate,
            locked_rate=rate.rate,
            fiat_amount=7,
            currency="EUR",
            expires_at=deadline,
            monitor_until=deadline + settings.PAYMENTS_MONITOR_PERIOD,
        )
        for n, order in enumerate(orders)
    )

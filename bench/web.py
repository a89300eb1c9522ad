"""Row 1: pages served by gunicorn under wrk, side by side with a trivial view.

Each page is measured in every round, in turn, so that a noisy neighbour slows every page
alike and the ratios to the trivial view stay meaningful.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median

from bench.common import ROOT, TRIVIAL_PATH, process_group_stop, progress
from bench.memory import children, cpu_seconds
from bench.people import Person

BENCH_DIR = Path(__file__).resolve().parent
POOL_SCRIPT = BENCH_DIR / "pool.lua"
QUOTE_BODY = {"gpu": "h100-sxm", "environment": "pytorch", "quantity": 1, "term_days": 7}
# Issue 34: the advisor answers in under 50 ms, a stack's preset, sharding and the cheaper
# change included (each change is a second estimate and plan).
ADVISOR_BODY = {
    "model": "llama-2-70b",
    "job": "lora",
    "stack": "deepspeed_zero3",
    "lora_rank": 8,
    "sequence_length": 2048,
    "micro_batch": 8,
    "gpus": 8,
}
ADVISOR_PAGE = (
    "/fr/advisor/model/?model=llama-3.1-8b&job=full&stack=torchtune&gpus=2&sequence_length=4096"
    "&micro_batch=2&lora_rank=16&context_length=4096&concurrent_sequences=1"
)
ADVISOR_P99_MS = 50.0


@dataclass(frozen=True)
class Before:
    """A row as issue 31 measured it on this machine with the response cache turned off
    (trivial view 2,386 req/s then): what the pages cost before they were made lighter."""

    requests_per_second: int
    p99_ms: int | None  # not given for the trivial view
    queries: int

    def describe(self) -> str:
        p99 = f", p99 {self.p99_ms} ms" if self.p99_ms is not None else ""
        return f"{self.requests_per_second} req/s{p99}, {self.queries} queries"


@dataclass(frozen=True)
class Page:
    name: str
    # "{number}" stands for the order number of each person of the pool, "{seen}" and
    # "{shown}" for what that person's order page sends back with its two polls.
    path: str
    method: str = "GET"
    body: str = ""
    auth: str = ""  # "key" (Authorization: Api-Key) or "session" (a session cookie)
    min_ratio: float | None = None  # of the trivial view's requests/s
    max_p99_ms: float | None = None
    htmx: bool = False  # sent as htmx sends it (the polls)
    answer_key: str = "total"  # what a POST's JSON answer must hold to count as answered
    before: Before | None = None

    def requests(self, people: list[Person]) -> list[tuple[str, str, str, dict[str, str]]]:
        """(method, path, body, headers) for each person, or once for an anonymous page."""
        headers = {"Content-Type": "application/json"} if self.body else {}
        if self.htmx:
            headers["HX-Request"] = "true"
        if not self.auth:
            return [(self.method, self.path, self.body, headers)]
        return [
            (
                self.method,
                self.path.format(
                    number=person.order_number, seen=person.status_seen, shown=person.payment_shown
                ),
                self.body,
                {**headers, **credentials},
            )
            for person in people
            for credentials in _credentials(self.auth, person)
        ]


def _credentials(auth: str, person: Person) -> list[dict[str, str]]:
    """Every key of the person (the throttle's rate is per key), or its session."""
    if auth == "key":
        return [{"Authorization": f"Api-Key {key}"} for key in person.api_keys]
    cookie = f"{SESSION_COOKIE}={person.session_key}; {CSRF_COOKIE}={person.csrf_cookie}"
    return [{"Cookie": cookie}]


SESSION_COOKIE = "sessionid"
CSRF_COOKIE = "csrftoken"
# Issue 31's targets. Every open order page asks both polls every 3 s: the hot path.
POLL_P99_MS = 100.0
PAGE_P99_MS = 200.0
ORDER = "/fr/account/orders/{number}/"


def _signed_in(name: str, path: str, **options) -> Page:
    return Page(name, path, auth="session", **{"max_p99_ms": PAGE_P99_MS, **options})


def _poll(name: str, path: str, **options) -> Page:
    return _signed_in(name, path, htmx=True, **options)


def _api(name: str, path: str, **options) -> Page:
    return Page(name, path, auth="key", **{"max_p99_ms": PAGE_P99_MS, **options})


PAGES = [
    # Its rate then against now says how busy the shared machine is during this run.
    Page("trivial view (baseline)", TRIVIAL_PATH, before=Before(2386, None, 0)),
    # Anonymous: Django's per-view cache (catalog.views.cached_for_visitors).
    Page("catalog", "/fr/", min_ratio=0.5, before=Before(130, 189, 1)),
    Page("GPU page", "/fr/gpus/h100-sxm/"),
    _api("GPU list API", "/api/v1/gpus/"),
    _api("quote API", "/api/v1/quotes/", method="POST", body=json.dumps(QUOTE_BODY)),
    _api(
        "advisor API",
        "/api/v1/advisor/",
        method="POST",
        body=json.dumps(ADVISOR_BODY),
        max_p99_ms=ADVISOR_P99_MS,
        answer_key="recommendation",
    ),
    Page("advisor page", ADVISOR_PAGE, max_p99_ms=ADVISOR_P99_MS),
    _api("order list API", "/api/v1/orders/"),
    _api("order API", "/api/v1/orders/{number}/", before=Before(77, 289, 10)),
    _api("invoice list API", "/api/v1/invoices/"),
    _api("SSH key list API", "/api/v1/ssh-keys/"),
    _api("webhook list API", "/api/v1/webhooks/"),
    _api("environment list API", "/api/v1/environments/"),
    _api("payment asset list API", "/api/v1/payment-assets/"),
    _signed_in("account page", "/fr/account/"),
    _signed_in("order list", "/fr/account/orders/"),
    _signed_in("order page", ORDER, before=Before(58, 453, 12)),
    _signed_in("API keys page", "/fr/account/api-keys/"),
    _signed_in("SSH keys page", "/fr/account/ssh-keys/"),
    _signed_in("security page", "/fr/account/security/"),
    _signed_in("factures page", "/fr/account/invoices/"),
    # What the open order page polls (its own markers: nothing new since it was drawn).
    _poll(
        "status poll",
        ORDER + "status/?seen={seen}",
        max_p99_ms=POLL_P99_MS,
        before=Before(70, 348, 12),
    ),
    _poll("payment poll", ORDER + "payment/status/?shown={shown}", max_p99_ms=POLL_P99_MS),
    # After an event: the poll brings the parts of the page the event may have changed.
    _poll("status poll, something new", ORDER + "status/"),
    _poll("payment poll, something new", ORDER + "payment/status/"),
]
BASELINE = PAGES[0]


def pool_write(path: Path, requests) -> Path:
    """The file bench/pool.lua reads: one request a line, tab-separated."""
    lines = []
    for method, url, body, headers in requests:
        fields = [method, url, body, *(f"{name}: {value}" for name, value in headers.items())]
        if any("\t" in field or "\n" in field for field in fields):
            raise ValueError(f"a tab or newline in {fields!r}")
        lines.append("\t".join(fields))
    path.write_text("\n".join(lines) + "\n")
    return path


@dataclass(frozen=True)
class Gunicorn:
    """Sized for 2 cores shared with wrk and PostgreSQL: the pages are CPU-bound Python."""

    workers: int = 4
    worker_class: str = "sync"
    threads: int = 1

    def describe(self) -> str:
        threads = f" x {self.threads} threads" if self.threads > 1 else ""
        return f"{self.workers} {self.worker_class} workers{threads}"

    def arguments(self) -> list[str]:
        arguments = ["--workers", str(self.workers), "--worker-class", self.worker_class]
        if self.threads > 1:
            arguments += ["--threads", str(self.threads)]
        return arguments


@dataclass
class WrkRun:
    requests: int
    seconds: float
    p50_ms: float
    p99_ms: float
    errors: int  # non-2xx/3xx answers plus socket errors
    cpu_seconds: float = 0.0  # used by gunicorn's workers meanwhile


@dataclass
class PageResult:
    page: Page
    runs: list[WrkRun] = field(default_factory=list)

    @property
    def requests_per_second(self) -> float:
        return sum(r.requests for r in self.runs) / sum(r.seconds for r in self.runs)

    @property
    def p50_ms(self) -> float:
        return median(r.p50_ms for r in self.runs)

    @property
    def p99_ms(self) -> float:
        # The worst round: a tail that shows up once is still a tail.
        return max(r.p99_ms for r in self.runs)

    @property
    def errors(self) -> int:
        return sum(r.errors for r in self.runs)

    @property
    def cpu_ms_per_request(self) -> float:
        """The web workers' CPU per answer: what a busy machine slows, but does not add to."""
        return sum(r.cpu_seconds for r in self.runs) * 1000 / sum(r.requests for r in self.runs)


def wrk_path() -> str:
    found = shutil.which("wrk") or ("/usr/bin/wrk" if Path("/usr/bin/wrk").exists() else None)
    if found is None:
        raise SystemExit(
            "wrk is not installed. Install the Debian package: sudo apt-get install wrk"
        )
    return found


_UNITS_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0}


def _milliseconds(text: str) -> float:
    number, unit = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text).groups()
    return float(number) * _UNITS_MS[unit]


def wrk_parse(output: str) -> WrkRun:
    def find(pattern: str) -> re.Match:
        match = re.search(pattern, output)
        if match is None:
            raise RuntimeError(f"unexpected wrk output (no {pattern!r}):\n{output}")
        return match

    requests, elapsed = find(r"(\d+) requests in ([\d.]+(?:us|ms|s|m)),").group(1, 2)
    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    socket = re.search(
        r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", output
    )
    return WrkRun(
        requests=int(requests),
        seconds=_milliseconds(elapsed) / 1000,
        p50_ms=_milliseconds(find(r"\s50%\s+([\d.]+\w+)").group(1)),
        p99_ms=_milliseconds(find(r"\s99%\s+([\d.]+\w+)").group(1)),
        errors=(int(non_2xx.group(1)) if non_2xx else 0)
        + (sum(int(n) for n in socket.groups()) if socket else 0),
    )


def wrk_run(
    base_url: str,
    pool: Path,
    *,
    seconds: float,
    connections: int,
) -> WrkRun:
    """wrk on the requests of `pool` (pool_write)."""
    command = [wrk_path(), "-t2", f"-c{connections}", f"-d{seconds:g}s", "--latency"]
    command += ["-s", str(POOL_SCRIPT), base_url]
    env = {**os.environ, "BENCH_REQUESTS": str(pool)}
    completed = subprocess.run(
        command, capture_output=True, text=True, timeout=seconds + 30, env=env, check=False
    )
    if completed.returncode != 0:
        raise RuntimeError(f"wrk failed ({completed.returncode}): {completed.stderr}")
    return wrk_parse(completed.stdout)


def request_send(
    base_url: str, method: str, path: str, body: str, headers: dict
) -> tuple[int, bytes]:
    request = urllib.request.Request(
        base_url + path, method=method, data=body.encode() or None, headers=headers
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


@contextmanager
def gunicorn_serving(config: Gunicorn, *, port: int, log_path: Path) -> Iterator[tuple[str, int]]:
    """gunicorn serving the project with bench.settings on 127.0.0.1:`port`: its URL and
    its master's pid."""
    base_url = f"http://127.0.0.1:{port}"
    command = [
        sys.executable,
        "-m",
        "gunicorn",
        "rental.wsgi:application",
        "--bind",
        f"127.0.0.1:{port}",
        *config.arguments(),
        "--log-level",
        "warning",
        "--graceful-timeout",
        "5",
    ]
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "bench.settings"}
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=log, stderr=log, start_new_session=True
        )
    try:
        # Four workers importing Django at once on a shared, loaded machine can take this long.
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"gunicorn exited:\n{log_path.read_text()[-3000:]}")
            try:
                if request_send(base_url, "GET", BASELINE.path, "", {})[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"gunicorn not answering:\n{log_path.read_text()[-3000:]}")
            time.sleep(0.2)
        yield base_url, process.pid
    finally:
        process_group_stop(process)


def pages_chosen(names: str) -> list[Page]:
    """The baseline and the pages whose name contains one of the comma-separated `names`
    (every page when empty)."""
    wanted = [name.strip() for name in names.split(",") if name.strip()]
    return [
        page
        for page in PAGES
        if page is BASELINE or not wanted or any(name in page.name for name in wanted)
    ]


def pages_pools(people: list[Person], workdir: Path, pages: list[Page]) -> dict[Page, Path]:
    """The pool file of each page, in the order given (the baseline first)."""
    return {
        page: pool_write(workdir / f"pool-{index}.txt", page.requests(people))
        for index, page in enumerate(pages)
    }


def pages_check(base_url: str, people: list[Person], pages: list[Page]) -> None:
    """Every request of every page answers 200 (the quote with a price, the advisor with a
    recommendation) before any timing."""
    for page in pages:
        for method, path, body, headers in page.requests(people):
            status, answer = request_send(base_url, method, path, body, headers)
            if status != 200:
                raise RuntimeError(f"{method} {path} answered {status}: {answer[:500]!r}")
            if page.body and page.answer_key not in json.loads(answer):
                raise RuntimeError(f"{path} answered without {page.answer_key}: {answer[:500]!r}")


def pages_measure(
    base_url: str,
    *,
    master_pid: int,
    pools: dict[Page, Path],
    rounds: int,
    seconds: float,
    connections: int,
) -> list[PageResult]:
    results = [PageResult(page) for page in pools]
    progress("HTTP: warming every worker up on every page")
    for page in pools:
        wrk_run(base_url, pools[page], seconds=2, connections=connections)
    workers = children(master_pid)
    for round_number in range(1, rounds + 1):
        for result in results:
            progress(f"HTTP round {round_number}/{rounds}: {result.page.name}")
            before = cpu_seconds(workers)
            run = wrk_run(base_url, pools[result.page], seconds=seconds, connections=connections)
            run.cpu_seconds = cpu_seconds(workers) - before
            result.runs.append(run)
    return results

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

BENCH_DIR = Path(__file__).resolve().parent
QUOTE_SCRIPT = BENCH_DIR / "quote.lua"
QUOTE_BODY = {"gpu": "h100-sxm", "environment": "pytorch", "quantity": 1, "term_days": 7}


@dataclass(frozen=True)
class Page:
    name: str
    path: str
    script: Path | None = None  # a wrk Lua script for anything but a plain GET


PAGES = [
    Page("trivial view (baseline)", TRIVIAL_PATH),
    Page("catalog", "/fr/"),
    Page("GPU page", "/fr/gpus/h100-sxm/"),
    Page("quote API", "/api/v1/quotes/", QUOTE_SCRIPT),
]
BASELINE = PAGES[0]


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


def wrk_run(base_url: str, page: Page, *, seconds: float, connections: int, api_key: str) -> WrkRun:
    command = [wrk_path(), "-t2", f"-c{connections}", f"-d{seconds:g}s", "--latency"]
    if page.script:
        command += ["-s", str(page.script)]
    command.append(base_url + page.path)
    completed = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=seconds + 30,
        env={**os.environ, "BENCH_API_KEY": api_key},
        check=False,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"wrk failed ({completed.returncode}): {completed.stderr}")
    return wrk_parse(completed.stdout)


def _request(base_url: str, page: Page, api_key: str) -> tuple[int, bytes]:
    if page.script is None:
        request = urllib.request.Request(base_url + page.path)
    else:
        request = urllib.request.Request(
            base_url + page.path,
            data=json.dumps(QUOTE_BODY).encode(),
            headers={"Content-Type": "application/json", "Authorization": f"Api-Key {api_key}"},
        )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


@contextmanager
def gunicorn_serving(config: Gunicorn, *, port: int, log_path: Path) -> Iterator[str]:
    """gunicorn serving the project with bench.settings on 127.0.0.1:`port`."""
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
        deadline = time.monotonic() + 30
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"gunicorn exited:\n{log_path.read_text()[-3000:]}")
            try:
                if _request(base_url, BASELINE, "")[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"gunicorn not answering:\n{log_path.read_text()[-3000:]}")
            time.sleep(0.2)
        yield base_url
    finally:
        process_group_stop(process)


def pages_check(base_url: str, api_key: str) -> None:
    """Every page answers 200 (and the quote is a price) before anything is timed."""
    for page in PAGES:
        status, body = _request(base_url, page, api_key)
        if status != 200:
            raise RuntimeError(f"{page.path} answered {status}: {body[:500]!r}")
        if page.script is not None and "total" not in json.loads(body):
            raise RuntimeError(f"{page.path} answered without a total: {body[:500]!r}")


def pages_measure(
    base_url: str, *, api_key: str, rounds: int, seconds: float, connections: int
) -> list[PageResult]:
    results = [PageResult(page) for page in PAGES]
    progress("HTTP: warming every worker up on every page")
    for page in PAGES:
        wrk_run(base_url, page, seconds=2, connections=connections, api_key=api_key)
    for round_number in range(1, rounds + 1):
        for result in results:
            progress(f"HTTP round {round_number}/{rounds}: {result.page.path}")
            result.runs.append(
                wrk_run(
                    base_url,
                    result.page,
                    seconds=seconds,
                    connections=connections,
                    api_key=api_key,
                )
            )
    return results

"""What the benchmark's parts share: the throwaway database, child processes, percentiles."""

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Dropped and created again at every run: never a database anyone else uses (BENCH_DB_NAME
# gives runs side by side on one server a database each).
BENCH_DATABASE = os.environ.get("BENCH_DB_NAME", "rental_bench")
# The baseline page (bench/urls.py): no database, no template.
TRIVIAL_PATH = "/bench/trivial"


def postgres_base() -> str:
    """The PostgreSQL server, without a database name (loopback, trust auth by default)."""
    return os.environ.get("BENCH_POSTGRES", "postgres://postgres@127.0.0.1:5432")


def database_recreate(name: str) -> str:
    """Drop and create the PostgreSQL database `name`; returns its URL."""
    import psycopg2

    base = postgres_base()
    conn = psycopg2.connect(f"{base}/postgres")
    conn.autocommit = True
    try:
        with conn.cursor() as cursor:
            # FORCE: a run killed half-way may have left its connections open.
            cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            cursor.execute(f'CREATE DATABASE "{name}"')
    finally:
        conn.close()
    return f"{base}/{name}"


def percentile(values: list[float], fraction: float) -> float:
    """Nearest-rank percentile of `values` (which need not be sorted)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def progress(message: str) -> None:
    """Where the run is, on stderr: stdout carries only the table."""
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def exit_on_termination() -> None:
    """SIGTERM and SIGHUP unwind the stack like Ctrl-C does, so every `finally` cleans up."""

    def _raise(signum, _frame):
        progress(f"signal {signum}: stopping what was started")
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, _raise)
    signal.signal(signal.SIGHUP, _raise)
    # A shell starting the bench in the background ignores SIGINT for it: take it back.
    signal.signal(signal.SIGINT, signal.default_int_handler)


def process_group_stop(process: subprocess.Popen, *, timeout: float = 10.0) -> None:
    """Stop a child started with `start_new_session=True`, and everything it started."""
    if process.poll() is not None:
        # The leader is gone; its workers may not be.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=timeout)
            return
        except subprocess.TimeoutExpired:
            continue

"""Health endpoints.

- /healthz/live: the process answers. It touches neither the database nor the broker, so an
  orchestrator does not restart web workers because PostgreSQL is down.
- /healthz/ready (and /healthz, for the monitors already calling it): database, broker, cache
  (without it pages still sell, but logins and the API answer 503) and what the apps register
  in `readiness_checks` (payments: each chain's watcher, from its stored state, no RPC call).
  200 when all are fine, else 503; within HEALTHZ_CHECKS_TIMEOUT_SECONDS whatever hangs, as
  the checks run side by side in a small pool of threads, and the checks that read the
  request's own connection run only once the database answered there, under a deadline
  (rental.database).

Anonymous callers learn only ok or not ok: the details name internal hosts and errors, so
they are for staff and for monitors sending `Authorization: Bearer <HEALTHZ_TOKEN>`.
"""

import hmac
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait

import psycopg2
from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.http import JsonResponse
from django.views.decorators.cache import never_cache

from rental.celery import app as celery_app
from rental.database import deadline
from rental.hooks import answers


def _database() -> dict:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return {"ok": True}


def _database_reachable(params: dict) -> dict:
    # A connection of its own, off the request's thread: a hung server holds this thread for
    # connect_timeout at most, never the answer.
    raw = psycopg2.connect(**params)
    try:
        with raw.cursor() as cursor:
            cursor.execute("SELECT 1")
    finally:
        raw.close()
    return {"ok": True}


def _broker() -> dict:
    # The URL is read from settings at call time, so a test can point it at a dead port.
    with celery_app.connection_for_write(url=settings.CELERY_BROKER_URL) as conn:
        conn.ensure_connection(max_retries=1, timeout=2)
    return {"ok": True}


def _cache() -> dict:
    cache.get("healthz")
    return {"ok": True}


# name -> check() returning a dict with at least "ok"; an exception counts as not ok. Higher
# apps add theirs in settings.HOOKS (`readiness_checks`: the chain).
READINESS_CHECKS: dict[str, Callable[[], dict]] = {
    "database": _database,
    "broker": _broker,
    "cache": _cache,
}


def _run(check) -> dict:
    try:
        return check()
    except Exception as exc:  # a health check reports every failure instead of raising
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:300]}


# Redis (broker, cache) may accept a connection and never answer: those checks run in a small
# pool of threads while the others run here, and the answer waits for them this long at most.
# A check still stuck holds one of these threads, not the request (with all of them stuck,
# later checks wait in the queue and count as timed out). The database and the apps' checks
# read this request's own connection (and, in tests, its transaction), so they stay here.
OFF_THREAD = frozenset({"broker", "cache"})
_checks_pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="healthz")
TIMED_OUT = {"ok": False, "error": "no answer in time"}


def _results() -> dict[str, dict]:
    readiness_checks = {**READINESS_CHECKS, **answers("readiness_checks")}
    started = time.monotonic()
    off_thread = {name: check for name, check in readiness_checks.items() if name in OFF_THREAD}
    if connection.vendor == "postgresql":
        params = connection.get_connection_params()
        off_thread["database"] = lambda: _database_reachable(params)
    futures = {name: _checks_pool.submit(_run, check) for name, check in off_thread.items()}
    results: dict[str, dict] = {}
    if "database" in futures:
        wait([futures["database"]], timeout=settings.HEALTHZ_CHECKS_TIMEOUT_SECONDS)
    reachable = "database" not in futures or futures["database"].done()
    reachable = reachable and ("database" not in futures or futures["database"].result()["ok"])
    left = settings.HEALTHZ_CHECKS_TIMEOUT_SECONDS - (time.monotonic() - started)
    for name, check in readiness_checks.items():
        if name in futures:
            continue
        if not reachable:
            results[name] = {"ok": False, "error": "the database does not answer"}
            continue
        with deadline(connection, max(left, 0.1)):
            results[name] = _run(check)
        left = settings.HEALTHZ_CHECKS_TIMEOUT_SECONDS - (time.monotonic() - started)
    wait(futures.values(), timeout=max(left, 0))
    for name, future in futures.items():
        results[name] = future.result() if future.done() else TIMED_OUT
    return {name: results[name] for name, _check in readiness_checks.items()}


def _may_see_details(request, *, database_ok: bool) -> bool:
    token = settings.HEALTHZ_TOKEN
    sent = request.headers.get("Authorization", "")
    if token and hmac.compare_digest(sent.encode(), f"Bearer {token}".encode()):
        return True
    if not database_ok:
        return False  # the session cannot be read in time: only the token works
    # The database may fail now still: then only the token works.
    # Staff past their second factor only: a password alone names no internal host.
    try:
        user = request.user
        return user.is_active and user.is_staff and user.is_verified()
    except Exception:  # whatever stops reading the session means "not staff", not a 500
        return False


@never_cache
def live(request):
    return JsonResponse({"status": "ok"})


@never_cache
def ready(request):
    results = _results()
    healthy = all(result["ok"] for result in results.values())
    body: dict[str, object] = {"status": "ok" if healthy else "error"}
    if _may_see_details(request, database_ok=results["database"]["ok"]):
        body.update(results)
    return JsonResponse(body, status=200 if healthy else 503)

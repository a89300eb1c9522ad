"""Health endpoints.

- /healthz/live: the process answers. It touches neither the database nor the broker, so an
  orchestrator does not restart web workers because PostgreSQL is down.
- /healthz/ready (and /healthz, for the monitors already calling it): database, broker, cache
  (without it pages still sell, but logins and the API answer 503) and what the apps register
  in `readiness_checks` (payments: each chain's watcher, from its stored state, no RPC call).
  200 when all are fine, else 503.

Anonymous callers learn only ok or not ok: the details name internal hosts and errors, so
they are for staff and for monitors sending `Authorization: Bearer <HEALTHZ_TOKEN>`.
"""

import hmac
from collections.abc import Callable

from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.http import JsonResponse
from django.views.decorators.cache import never_cache

from rental.celery import app as celery_app
from rental.hooks import Hooks


def _database() -> dict:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return {"ok": True}


def _broker() -> dict:
    # The URL is read from settings at call time, so a test can point it at a dead port.
    with celery_app.connection_for_write(url=settings.CELERY_BROKER_URL) as conn:
        conn.ensure_connection(max_retries=1, timeout=2)
    return {"ok": True}


def _cache() -> dict:
    cache.get("healthz")
    return {"ok": True}


# name -> check() returning a dict with at least "ok"; an exception counts as not ok.
readiness_checks: Hooks[Callable[[], dict]] = Hooks()
readiness_checks.register("database", _database)
readiness_checks.register("broker", _broker)
readiness_checks.register("cache", _cache)


def _run(check) -> dict:
    try:
        return check()
    except Exception as exc:  # a health check reports every failure instead of raising
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:300]}


def _may_see_details(request) -> bool:
    token = settings.HEALTHZ_TOKEN
    sent = request.headers.get("Authorization", "")
    if token and hmac.compare_digest(sent.encode(), f"Bearer {token}".encode()):
        return True
    # The database may be down: then the session cannot be read and only the token works.
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
    results = {name: _run(check) for name, check in readiness_checks.items()}
    healthy = all(result["ok"] for result in results.values())
    body: dict[str, object] = {"status": "ok" if healthy else "error"}
    if _may_see_details(request):
        body.update(results)
    return JsonResponse(body, status=200 if healthy else 503)

"""/healthz: one JSON answer on whether the pieces the store needs are reachable."""

from django.conf import settings
from django.db import connection
from django.http import JsonResponse
from django.views.decorators.cache import never_cache

from payments.health import chains_health
from rental.celery import app as celery_app


def _database() -> dict:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return {"ok": True}


def _broker() -> dict:
    # The URL is read from settings at call time, so a test can point it at a dead port.
    with celery_app.connection_for_write(url=settings.CELERY_BROKER_URL) as conn:
        conn.ensure_connection(max_retries=1, timeout=2)
    return {"ok": True}


CHECKS = {"database": _database, "broker": _broker, "chain": chains_health}


def _run(check) -> dict:
    try:
        return check()
    except Exception as exc:  # a health check reports every failure instead of raising
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:300]}


@never_cache
def healthz(request):
    results = {name: _run(check) for name, check in CHECKS.items()}
    healthy = all(result["ok"] for result in results.values())
    return JsonResponse(
        {"status": "ok" if healthy else "error", **results}, status=200 if healthy else 503
    )

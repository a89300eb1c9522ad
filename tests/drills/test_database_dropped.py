"""Drill 4: the database connection dies in the middle of placing an order.

The request's PostgreSQL backend is terminated (pg_terminate_backend, from another
connection) after the order row was written and before its first timeline event: the
customer gets a plain error at once, nothing of the order remains, and the next request,
on the production connection settings (persistent connections with health checks), works.
"""

import json

import psycopg2
import pytest
import requests
from django.core.handlers.wsgi import WSGIHandler
from django.db import connection
from django.test import RequestFactory

from accounts.services import api_key_create
from api.models import IdempotencyRecord
from orders import services
from orders.models import Order, OrderEvent
from payments.models import Invoice
from tests.factories import TERMS_TICKED

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def production_connections(settings):
    """base.py's PostgreSQL settings, which the test settings leave out."""
    database = connection.settings_dict
    saved = database["CONN_MAX_AGE"], database["CONN_HEALTH_CHECKS"]
    database["CONN_MAX_AGE"], database["CONN_HEALTH_CHECKS"] = 60, True
    yield
    database["CONN_MAX_AGE"], database["CONN_HEALTH_CHECKS"] = saved


@pytest.fixture
def backend_killed_between_writes(monkeypatch):
    """The first order placed loses its database backend right after its row is written."""
    kills: list[int] = []
    record_event = services.order_event_record

    def killing_record(**kwargs):
        if not kills:
            pid = connection.connection.info.backend_pid
            other = psycopg2.connect(**connection.get_connection_params())
            try:
                other.autocommit = True
                with other.cursor() as cursor:
                    # Waits (up to 5 s) until the backend is gone, so the next write fails.
                    cursor.execute("SELECT pg_terminate_backend(%s, 5000)", [pid])
                    assert cursor.fetchone()[0]
            finally:
                other.close()
            kills.append(pid)
        return record_event(**kwargs)

    monkeypatch.setattr(services, "order_event_record", killing_record)
    return kills


def _browser(live_server, client, user) -> requests.Session:
    """A logged-in browser: the session cookie of a login, the CSRF cookie of a page."""
    client.force_login(user)
    session = requests.Session()
    session.cookies.set("sessionid", client.cookies["sessionid"].value)
    session.get(f"{live_server.url}/en/gpus/h100-sxm/configure/", timeout=10).raise_for_status()
    return session


def _order_page(session: requests.Session, live_server) -> requests.Response:
    return session.post(
        f"{live_server.url}/en/gpus/h100-sxm/configure/",
        data={
            "environment": "pytorch",
            "quantity": "1",
            "term": "7",
            **TERMS_TICKED,
            "csrfmiddlewaretoken": session.cookies["csrftoken"],
        },
        allow_redirects=False,
        # A page that hangs on its dead connection fails here, with a read timeout.
        timeout=10,
    )


def test_page_order_with_the_database_gone_mid_write_fails_cleanly_and_leaves_nothing(
    live_server, client, customer, gpu, usdc, production_connections, backend_killed_between_writes
):
    browser = _browser(live_server, client, customer)

    response = _order_page(browser, live_server)
    assert backend_killed_between_writes, "the drill's kill point was reached"
    # The store's own page saying to retry shortly (rental.middleware), never a 500.
    assert response.status_code == 503 and response.headers["Retry-After"] == "30"
    assert "Back in a moment" in response.text
    assert not Order.objects.exists()
    assert not OrderEvent.objects.exists()

    response = _order_page(browser, live_server)
    assert response.status_code == 302
    order = Order.objects.get()
    assert response.headers["Location"].endswith(f"/account/orders/{order.number}/")
    assert order.events.count() == 1


def test_api_order_with_the_database_gone_mid_write_is_a_json_error_and_a_safe_retry(
    live_server, customer, gpu, usdc, production_connections, backend_killed_between_writes
):
    _key, raw_key = api_key_create(user=customer, name="Partner backend")
    api = requests.Session()
    api.headers.update({"Authorization": f"Api-Key {raw_key}", "Idempotency-Key": "drill-4"})
    body = {
        "gpu": "h100-sxm",
        "environment": "pytorch",
        "quantity": 1,
        "term_days": 7,
        "asset": "usdc-devnet",
        "accept_terms": True,
    }

    # Bounded: an API call that hangs on its dead connection fails with a read timeout.
    response = api.post(f"{live_server.url}/api/v1/orders/", json=body, timeout=10)
    assert backend_killed_between_writes
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "unavailable"
    assert not Order.objects.exists()
    assert not OrderEvent.objects.exists()
    assert not Invoice.objects.exists()
    assert not IdempotencyRecord.objects.exists()

    # The partner retries with the same key: the order is placed, once.
    response = api.post(f"{live_server.url}/api/v1/orders/", json=body, timeout=10)
    assert response.status_code == 201, response.text
    assert Order.objects.get().number == response.json()["number"]
    assert Invoice.objects.count() == 1


HEALTHZ_TOKEN = "drill-monitoring-token-0123456789"


def _wsgi_get(path: str) -> tuple[int, bytes]:
    """One request the way a sync server worker runs it: in this thread, with the request
    signals that open, check and close database connections. It carries the monitoring
    token, so /healthz answers with its details."""
    environ = RequestFactory().get(path, HTTP_AUTHORIZATION=f"Bearer {HEALTHZ_TOKEN}").environ
    statuses = []
    response = WSGIHandler()(environ, lambda status, headers: statuses.append(status))
    try:
        return int(statuses[0].split()[0]), b"".join(response)
    finally:
        response.close()


def _terminate(pid: int) -> None:
    other = psycopg2.connect(**connection.get_connection_params())
    try:
        other.autocommit = True
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(%s, 5000)", [pid])
    finally:
        other.close()


@pytest.mark.parametrize("health_checks", [True, False])
def test_persistent_connection_killed_between_requests(
    transactional_db, production_connections, health_checks, settings
):
    settings.HEALTHZ_TOKEN = HEALTHZ_TOKEN
    connection.settings_dict["CONN_HEALTH_CHECKS"] = health_checks
    _wsgi_get("/healthz")
    assert connection.connection is not None, "kept open between requests (CONN_MAX_AGE)"
    _terminate(connection.connection.info.backend_pid)

    # The health check asks the database on a connection of its own first (rental.health):
    # the kept one's death, noticed or not at the request's start, does not make it lie.
    _status, body = _wsgi_get("/healthz")
    assert json.loads(body)["database"]["ok"]
    _status, body = _wsgi_get("/healthz")
    assert json.loads(body)["database"]["ok"]

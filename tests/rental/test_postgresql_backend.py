"""rental.postgresql: the connection health check asks the server only when it has spoken.

Each test opens a connection of its own (outside the test's transaction), as a web worker
keeps one between requests, and reads what that connection last sent from another one
(pg_stat_activity).
"""

import psycopg2
import pytest
from django.db import DEFAULT_DB_ALIAS, connection, connections

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def kept_connection():
    """A second connection to the test database, as a web worker keeps its own open."""
    wrapper = connections.create_connection(DEFAULT_DB_ALIAS)
    wrapper.ensure_connection()
    yield wrapper
    wrapper.close()


def _observer():
    other = psycopg2.connect(**connection.get_connection_params())
    other.autocommit = True
    return other


def _last_statement(pid: int) -> str:
    observer = _observer()
    try:
        with observer.cursor() as cursor:
            cursor.execute("SELECT query FROM pg_stat_activity WHERE pid = %s", [pid])
            return cursor.fetchone()[0]
    finally:
        observer.close()


def test_the_engine_is_ours():
    assert connection.settings_dict["ENGINE"] == "rental.postgresql"
    assert connection.vendor == "postgresql"


def test_a_quiet_connection_is_usable_without_a_round_trip(kept_connection):
    with kept_connection.cursor() as cursor:
        cursor.execute("SELECT 'the last statement sent'")
    pid = kept_connection.connection.info.backend_pid

    assert kept_connection.is_usable()
    assert kept_connection.is_usable()

    assert _last_statement(pid) == "SELECT 'the last statement sent'"


def test_a_connection_the_server_ended_is_not_usable(kept_connection):
    pid = kept_connection.connection.info.backend_pid
    observer = _observer()
    try:
        with observer.cursor() as cursor:
            # Waits (up to 5 s) until the backend is gone.
            cursor.execute("SELECT pg_terminate_backend(%s, 5000)", [pid])
            assert cursor.fetchone()[0]
    finally:
        observer.close()

    assert not kept_connection.is_usable()


def test_a_closed_connection_is_not_usable(kept_connection):
    kept_connection.connection.close()

    assert not kept_connection.is_usable()

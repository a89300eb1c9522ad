"""rental.postgresql: the connection health check asks the server only when it may have
something to say, and otherwise says what Django's own check (SELECT 1) would say.

Each test opens a connection of its own (outside the test's transaction), as a web worker
keeps one between requests, and reads what that connection last sent from another one
(pg_stat_activity). Some cases come from a reviewer's attack on the first version.
"""

import select
import socket
import threading
import time

import psycopg2
import pytest
from django.db import DEFAULT_DB_ALIAS, DatabaseError, OperationalError, connection, connections
from django.db.backends.postgresql.base import DatabaseWrapper as DjangoWrapper
from psycopg2.extensions import TRANSACTION_STATUS_INERROR

from rental.postgresql.base import DatabaseWrapper

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


def _observed(sql: str, *params):
    """The first value `sql` gives on another connection (autocommit)."""
    observer = _observer()
    try:
        with observer.cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchone()[0]
    finally:
        observer.close()


def _last_statement(pid: int) -> str:
    return _observed("SELECT query FROM pg_stat_activity WHERE pid = %s", pid)


def _djangos_answer(wrapper) -> bool:
    """What Django's own is_usable (SELECT 1) says of the same connection."""
    return DjangoWrapper.is_usable(wrapper)


def test_the_engine_is_ours():
    assert connection.settings_dict["ENGINE"] == "rental.postgresql"
    assert connection.vendor == "postgresql"


def test_a_quiet_connection_used_a_moment_ago_is_usable_without_a_round_trip(kept_connection):
    with kept_connection.cursor() as cursor:
        cursor.execute("SELECT 'the last statement sent'")
    pid = kept_connection.connection.info.backend_pid

    assert kept_connection.is_usable()
    assert kept_connection.is_usable()

    assert _last_statement(pid) == "SELECT 'the last statement sent'"


def test_a_connection_idle_for_longer_is_asked(kept_connection):
    kept_connection.quiet_trusted_for = 0.1
    with kept_connection.cursor() as cursor:
        cursor.execute("SELECT 'the last statement sent'")
    time.sleep(0.2)

    assert kept_connection.is_usable()

    assert _last_statement(kept_connection.connection.info.backend_pid) == "SELECT 1"


def test_a_connection_the_server_ended_is_not_usable(kept_connection):
    pid = kept_connection.connection.info.backend_pid
    # Waits (up to 5 s) until the backend is gone.
    assert _observed("SELECT pg_terminate_backend(%s, 5000)", pid)

    assert not kept_connection.is_usable()


def test_a_connection_the_server_timed_out_is_not_usable(kept_connection):
    with kept_connection.cursor() as cursor:
        cursor.execute("SET idle_session_timeout = '200ms'")
    time.sleep(0.6)
    assert not kept_connection.is_usable()


def test_a_closed_connection_is_not_usable(kept_connection):
    kept_connection.connection.close()

    assert not kept_connection.is_usable()


def test_an_aborted_transaction_is_not_usable(kept_connection):
    """A transaction opened by hand and aborted by an error: every later query fails until a
    rollback. Django's SELECT 1 fails too, so Django closes the connection; so do we."""
    raw = kept_connection.connection
    with kept_connection.cursor() as cursor:
        cursor.execute("BEGIN")
        with pytest.raises(DatabaseError):
            cursor.execute("SELECT 1/0")
    assert raw.info.transaction_status == TRANSACTION_STATUS_INERROR
    assert kept_connection.is_usable() is _djangos_answer(kept_connection) is False


def test_an_open_transaction_is_asked_as_django_asks_it(kept_connection):
    kept_connection.set_autocommit(False)
    with kept_connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    assert kept_connection.is_usable() is _djangos_answer(kept_connection) is True
    kept_connection.rollback()
    kept_connection.set_autocommit(True)


class ForgetfulProxy:
    """TCP between the client and PostgreSQL that forgets its connection, as a rebooted
    database host, a failed-over address or a load balancer past its idle timeout does:
    nothing reaches the client until it sends, then a reset (RST)."""

    def __init__(self):
        self.upstream = ("127.0.0.1", int(connection.settings_dict["PORT"] or 5432))
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen()
        self.port = self.listener.getsockname()[1]
        self.forgotten = threading.Event()
        self.stop = threading.Event()
        threading.Thread(target=self._relay, daemon=True).start()

    def _relay(self):
        client, _address = self.listener.accept()
        server = socket.create_connection(self.upstream)
        while not self.stop.is_set():
            readable, _writable, _errors = select.select([client, server], [], [], 0.05)
            if self.forgotten.is_set():
                server.close()  # the backend goes; the client is told nothing
                while not self.stop.is_set():
                    if select.select([client], [], [], 0.05)[0]:
                        linger = (1).to_bytes(4, "little") + (0).to_bytes(4, "little")
                        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
                        client.close()  # RST
                        return
                return
            for sock in readable:
                data = sock.recv(65536)
                if not data:
                    return
                (server if sock is client else client).sendall(data)

    def close(self):
        self.stop.set()
        self.listener.close()


@pytest.mark.parametrize("wrapper_class", [DjangoWrapper, DatabaseWrapper], ids=["django", "ours"])
def test_a_connection_the_peer_forgot_is_found_once_idle(wrapper_class):
    proxy = ForgetfulProxy()
    settings = {**connection.settings_dict, "HOST": "127.0.0.1", "PORT": proxy.port}
    wrapper = wrapper_class(settings, "proxied")
    wrapper.quiet_trusted_for = 0.1
    try:
        with wrapper.cursor() as cursor:
            cursor.execute("SELECT 1")
        proxy.forgotten.set()
        time.sleep(0.3)
        usable = wrapper.is_usable()
        if usable:
            # What the request would then meet: its first query fails.
            with pytest.raises(OperationalError), wrapper.cursor() as cursor:
                cursor.execute("SELECT 2")
        assert usable is False
    finally:
        wrapper.close()
        proxy.close()

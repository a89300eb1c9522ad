"""A PostgreSQL that hangs never holds a request: client-side deadlines on every query.

`statement_timeout` and `lock_timeout` (settings) are the server's own: a slow query or a long
lock wait is cancelled there. A server that stops answering altogether (SIGSTOP, a frozen VM,
a half-open network path: the kernel still acknowledges every byte) cancels nothing, and
libpq waits on its socket for ever; `connect_timeout` covers only the connection's start.
So each query, the health check Django runs on a kept connection included, is watched: past
its deadline (the statement timeout plus a margin) one watchdog thread shuts the connection's
socket down, the waiting call fails at once with an OperationalError, the connection is
dropped, and the page answers 503 (rental.middleware) instead of waiting for
gunicorn to kill the worker.
"""

import itertools
import logging
import os
import socket
import threading
import time
from contextlib import contextmanager

import psycopg2.extensions
from django.conf import settings
from django.db.backends.signals import connection_created
from django.dispatch import receiver

logger = logging.getLogger(__name__)

# Past the server's own statement_timeout, which answers first while the server runs.
MARGIN_SECONDS = 0.5


class _Watchdog:
    """One thread for the whole process, woken every TICK: armed deadlines are a dict."""

    TICK = 0.1

    def __init__(self):
        self._armed: dict[int, tuple[float, int]] = {}
        self._tokens = itertools.count()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._thread_pid = 0

    def arm(self, fd: int, seconds: float) -> int:
        token = next(self._tokens)
        with self._lock:
            self._armed[token] = (time.monotonic() + seconds, fd)
            if self._thread_pid != os.getpid() or not self._thread or not self._thread.is_alive():
                # Started lazily, and again in a forked child (gunicorn, Celery's pool).
                self._thread_pid = os.getpid()
                self._thread = threading.Thread(target=self._run, name="db-deadline", daemon=True)
                self._thread.start()
        return token

    def disarm(self, token: int) -> None:
        with self._lock:
            self._armed.pop(token, None)

    def _run(self) -> None:
        while True:
            time.sleep(self.TICK)
            now = time.monotonic()
            with self._lock:
                expired = [(t, fd) for t, (at, fd) in self._armed.items() if at <= now]
                for token, _fd in expired:
                    del self._armed[token]
            for _token, fd in expired:
                _shut_down(fd)


def _shut_down(fd: int) -> None:
    try:
        # A duplicate of the descriptor: shutting it down ends the connection for libpq too,
        # and closing it leaves libpq's own descriptor to libpq.
        with socket.socket(fileno=os.dup(fd)) as sock:
            sock.shutdown(socket.SHUT_RDWR)
        logger.error("database: no answer in time, connection dropped")
    except OSError:
        pass  # already closed: the query ended meanwhile


_watchdog = _Watchdog()


def query_deadline_seconds() -> float | None:
    statement = settings.DATABASE_STATEMENT_TIMEOUT_SECONDS
    return statement + MARGIN_SECONDS if statement else None


@contextmanager
def _armed(fd: int, seconds: float | None):
    if seconds is None:
        yield
        return
    token = _watchdog.arm(fd, seconds)
    try:
        yield
    finally:
        _watchdog.disarm(token)


@contextmanager
def deadline(wrapper, seconds: float):
    """Within this block, `wrapper`'s connection (when open) is dropped once `seconds` have
    passed: a shorter bound than each query's, for the health check."""
    raw = getattr(wrapper, "connection", None)
    if raw is None or wrapper.vendor != "postgresql":
        yield
        return
    with _armed(raw.fileno(), seconds):
        yield


class WatchedCursor(psycopg2.extensions.cursor):
    """Every query through a connection of the store's, Django's health check (its own
    `SELECT 1` on a kept connection) included: each call under the query deadline."""

    def execute(self, query, vars=None):
        with _armed(self.connection.fileno(), query_deadline_seconds()):
            return super().execute(query, vars)

    def executemany(self, query, vars_list):
        with _armed(self.connection.fileno(), query_deadline_seconds()):
            return super().executemany(query, vars_list)


@receiver(connection_created)
def _watch_queries(sender, connection, **kwargs) -> None:
    if connection.vendor == "postgresql":
        connection.connection.cursor_factory = WatchedCursor

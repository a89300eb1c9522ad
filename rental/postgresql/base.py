"""Django's PostgreSQL backend with a health check that costs no round trip while the
connection is busy.

With CONN_HEALTH_CHECKS, Django sends `SELECT 1` at the start of every request that uses
the database, to find a persistent connection that died in between: on a page that reads
its session with its account and one version digest, that is a third round trip. A server
that ends a connection (restart, pg_terminate_backend, idle timeout) first writes its reason
on the socket and then closes it, while a connection in good health has nothing to read. So
a connection used under a second ago, outside any transaction and with nothing to read, is
healthy as it stands; anything else is asked with Django's own `SELECT 1`. A peer that forgot
the connection without a word (a rebooted host, a failed-over address, a load balancer past
its idle timeout) answers only when spoken to: a connection idle for longer is asked, as
Django asks it, and one that was busy a moment ago stands the same chance as a query sent in
the middle of a request.

ENGINE = "rental.postgresql" (rental.settings: any PostgreSQL DATABASE_URL).
"""

import select
import time

from django.db.backends.postgresql import base

# libpq's PQTRANS_IDLE, as psycopg2 and psycopg 3 report it: no transaction open.
TRANSACTION_IDLE = 0
# poll(2): not on every platform; where it is missing, Django's check is made every time.
_POLL = getattr(select, "poll", None)


def _nothing_to_read(fileno: int) -> bool:
    poller = select.poll()
    poller.register(fileno, select.POLLIN | select.POLLPRI)
    return not poller.poll(0)


class DatabaseWrapper(base.DatabaseWrapper):
    # Seconds since the connection was last used within which a quiet one is trusted.
    quiet_trusted_for = 1.0
    _used_at = float("-inf")

    def create_cursor(self, name=None):
        self._used_at = time.monotonic()
        return super().create_cursor(name)

    def is_usable(self) -> bool:
        connection = self.connection
        if connection is None or connection.closed:
            return False
        if _POLL is not None and time.monotonic() - self._used_at < self.quiet_trusted_for:
            try:
                quiet = connection.info.transaction_status == TRANSACTION_IDLE and (
                    _nothing_to_read(connection.fileno())
                )
            except (OSError, ValueError, self.Database.Error):
                return False
            if quiet:
                return True
        return super().is_usable()

"""Django's PostgreSQL backend with a health check that costs no round trip.

With CONN_HEALTH_CHECKS, Django sends `SELECT 1` at the start of every request that uses
the database, to find a persistent connection the server has closed: on a page that reads
its session, its account and one version digest, that is a fourth round trip. A server
that ends a connection (restart, pg_terminate_backend, idle timeout) first writes its
reason on the socket and then closes it, while an idle connection in good health has
nothing to read: so a socket with nothing to read is healthy as it stands, and anything
else is asked with Django's own `SELECT 1`. A peer that vanished without a word (a cable
pulled) is missed by both: the first query fails, and Django drops the connection.

ENGINE = "rental.postgresql" (rental.settings: any PostgreSQL DATABASE_URL).
"""

import select

from django.db.backends.postgresql import base


def _nothing_to_read(fileno: int) -> bool:
    poller = select.poll()
    poller.register(fileno, select.POLLIN | select.POLLPRI)
    return not poller.poll(0)


class DatabaseWrapper(base.DatabaseWrapper):
    def is_usable(self) -> bool:
        connection = self.connection
        if connection is None or connection.closed:
            return False
        try:
            quiet = _nothing_to_read(connection.fileno())
        except (OSError, ValueError, base.Database.Error):
            return False
        return quiet or super().is_usable()

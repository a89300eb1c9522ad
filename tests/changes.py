"""Waiting for this process's change feed (rental.changes) to hear what was committed."""

import time
from uuid import uuid4

from django.db import connection

from rental.changes import CHANNEL, Seen, feed


def changes_heard(timeout: float = 10.0) -> Seen:
    """Once every change committed so far is heard: a marker notified after them is
    (PostgreSQL delivers notifications in the order their transactions committed)."""
    current = feed()
    assert current is not None
    deadline = time.monotonic() + timeout
    while True:  # a feed listening again only hears what is sent after
        marker = f"test-{uuid4().hex}"
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_notify(%s, %s)", [CHANNEL, marker])
        asked = time.monotonic()
        while time.monotonic() - asked < 0.5:
            seen = current.seen()
            if seen is not None and current.heard_of(marker):
                return seen
            time.sleep(0.005)
        assert time.monotonic() < deadline, "the change feed heard nothing"

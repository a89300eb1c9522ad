"""What changed, heard by every web process as it commits: PostgreSQL triggers name, for each row
written, whose pages it changes (a tag), and NOTIFY brings the tags to a thread of each process
that LISTENs. Answers kept in a process's memory (rental.responsecache, the signed-in session
of accounts.sessions) are served again while none of their tags was heard since they were read,
so a page nobody's data changed for costs no round trip at all.

Tags: "a<id>" for anything an account's own pages show (its account, sessions, orders and
everything under them), "c<id>" for a chain's head (confirmations), "h<id>" for a host, "r" for
a new or extended rate (the currencies an unpaid order offers), and "g" for what every page may
show (catalog, chains' and assets' settings); emptying a table (TRUNCATE) says "g" too. Each
app names the tags of its tables (watch(), in its ready()); the triggers are written from that
list after every migrate (none run during migrations).

What is kept is only ever trusted while it can be: a notification has to have come within
HEALTHY_SECONDS (each process notifies a beat of its own every second), and anything read
before the feed last (re)connected counts as changed; and only under the triggers the
process's own code writes (their fingerprint names a function in the database: while a deploy
runs new code before `migrate`, or old code after, a table one of them watches may go
unheard, so that process keeps nothing). A request drains the notifications
already on the socket before it looks, so what a commit changed is not served from memory once
PostgreSQL has sent the notification, which it does as the transaction commits: a request that
starts in the instant between may still be answered as it would have been a moment earlier, as
from a replica a fraction of a millisecond behind. So only reads are answered from memory (GET
and HEAD: a write always checks its session in the database), never the requests of a browser
that has just written (rental.middleware.KeptReadsMiddleware: its own change always shows), and
nothing inside a transaction, whose own writes are not committed, so not heard.
"""

import contextlib
import hashlib
import itertools
import logging
import os
import select
import threading
import time
from collections.abc import Iterable
from contextvars import ContextVar
from dataclasses import dataclass

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import Model

logger = logging.getLogger(__name__)

CHANNEL = "rental_changed"
# Notified as the triggers are dropped: nothing is heard until they are back.
SUSPENDED = "suspended"
# Notified, with their fingerprint, as triggers are written; a function named after it says
# which are in the database. A process trusts what it keeps only under the triggers its own
# code writes: while a deploy runs the new code before `migrate` (or the old one after),
# a table newly watched is not heard.
INSTALLED = "installed"
APPLICATION_NAME = "rental change feed"
GLOBAL = "g"
# Each process notifies a beat of its own at least this often...
HEARTBEAT_SECONDS = 1.0
# ... and what was kept is trusted only while a notification came within this.
HEALTHY_SECONDS = 3.0
# Tags remembered; past this, everything kept counts as changed (the memory stays bounded).
MAX_TAGS = 50_000


@dataclass(frozen=True)
class Watched:
    model: type[Model]
    tags: tuple[str, ...]  # SQL over the written row `r` (and TG_OP), each a text tag or NULL
    unseen: tuple[str, ...]  # columns no page shows


_watched: dict[str, Watched] = {}


def watch(model: type[Model], *tags: str, unseen: tuple[str, ...] = ()) -> None:
    """Rows of `model` change the pages of these tags (SQL over the row `r`; TG_OP tells
    INSERT, UPDATE or DELETE). An update that changes no column but `unseen` ones (field
    names) changes no page: nothing is notified, as for an update that changes nothing."""
    columns = tuple(str(model._meta.get_field(name).column) for name in unseen)
    _watched[model._meta.db_table] = Watched(model=model, tags=tags, unseen=columns)


def column(model: type[Model], field: str) -> str:
    """SQL: the column of `field` in the written row `r`."""
    return f"r.{connections[DEFAULT_DB_ALIAS].ops.quote_name(model._meta.get_field(field).column)}"


def account_tag(account_id: int) -> str:
    """The tag of an account's own pages."""
    return f"a{account_id}"


def account_tag_sql(account_id_sql: str) -> str:
    """SQL: account_tag() of the account whose id `account_id_sql` gives."""
    return f"'a' || ({account_id_sql})"


def chain_tag_sql(chain_id_sql: str) -> str:
    """SQL: the tag of a chain's head."""
    return f"'c' || ({chain_id_sql})"


def host_tag_sql(host_id_sql: str) -> str:
    return f"'h' || ({host_id_sql})"


GLOBAL_TAG_SQL = f"'{GLOBAL}'"
# New rates: what the currency picker of an order awaiting payment offers.
RATES = "r"
RATES_TAG_SQL = f"'{RATES}'"


def _function_sql(table: str, watched: Watched, quote) -> list[str]:
    function = quote(f"{CHANNEL}_{table}")
    tags = watched.tags
    unseen = "".join(f" - '{name}'" for name in watched.unseen)
    notify = (
        f"FOREACH tag IN ARRAY ARRAY[{', '.join(tags)}]::text[] LOOP "
        f"IF tag IS NOT NULL THEN PERFORM pg_notify('{CHANNEL}', tag); END IF; END LOOP;"
    )
    return [
        f"CREATE OR REPLACE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $$ "
        "DECLARE r record; tag text; BEGIN "
        f"IF TG_OP = 'UPDATE' AND to_jsonb(OLD){unseen} = to_jsonb(NEW){unseen} THEN "
        "RETURN NULL; END IF; "
        f"IF TG_OP IN ('UPDATE', 'DELETE') THEN r := OLD; {notify} END IF; "
        f"IF TG_OP IN ('INSERT', 'UPDATE') THEN r := NEW; {notify} END IF; "
        "RETURN NULL; END $$",
        f"CREATE TRIGGER {CHANNEL} AFTER INSERT OR UPDATE OR DELETE ON {quote(table)} "
        f"FOR EACH ROW EXECUTE FUNCTION {function}()",
        f"CREATE TRIGGER {CHANNEL}_truncate AFTER TRUNCATE ON {quote(table)} "
        f"FOR EACH STATEMENT EXECUTE FUNCTION {CHANNEL}_truncate()",
    ]


def _functions_sql(connection) -> list[str]:
    """The trigger functions of rental.changes in the database, by name (with CASCADE, their
    triggers go with them)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT p.oid::regprocedure::text FROM pg_proc p "
            "JOIN pg_namespace n ON n.oid = p.pronamespace "
            "WHERE n.nspname = current_schema() AND p.proname LIKE %s",
            [f"{CHANNEL}\\_%"],
        )
        return [row[0] for row in cursor.fetchall()]


def _statements(quote) -> list[str]:
    statements = [
        f"CREATE OR REPLACE FUNCTION {CHANNEL}_truncate() RETURNS trigger LANGUAGE plpgsql AS "
        f"$$ BEGIN PERFORM pg_notify('{CHANNEL}', '{GLOBAL}'); RETURN NULL; END $$"
    ]
    for table, watched in sorted(_watched.items()):
        statements += _function_sql(table, watched, quote)
    return statements


def _fingerprint() -> str:
    """Of the triggers this code writes."""
    quote = connections[DEFAULT_DB_ALIAS].ops.quote_name
    return hashlib.sha256("\n".join(_statements(quote)).encode()).hexdigest()[:16]


def triggers_uninstall(using: str = DEFAULT_DB_ALIAS, **kwargs) -> None:
    """(pre_migrate) No trigger while migrations run: one could read a column a migration
    drops or renames. Meanwhile no process trusts what it keeps (nothing written is heard);
    the triggers' return is announced as a change to everything."""
    connection = connections[using]
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        # Every feed stops trusting what it keeps until the triggers are back (GLOBAL).
        cursor.execute("SELECT pg_notify(%s, %s)", [CHANNEL, SUSPENDED])
        for function in _functions_sql(connection):
            cursor.execute(f"DROP FUNCTION IF EXISTS {function} CASCADE")


def triggers_install(using: str = DEFAULT_DB_ALIAS, **kwargs) -> None:
    """(post_migrate) The triggers of every watched table, as the apps name them now; those
    of tables no longer watched are dropped. Every process then forgets what it kept."""
    connection = connections[using]
    if connection.vendor != "postgresql":
        return
    triggers_uninstall(using)
    fingerprint = _fingerprint()
    statements = [
        *_statements(connection.ops.quote_name),
        f"CREATE FUNCTION {CHANNEL}_{INSTALLED}{fingerprint}() RETURNS void "
        "LANGUAGE plpgsql AS $$ BEGIN END $$",
        f"SELECT pg_notify('{CHANNEL}', '{INSTALLED}{fingerprint}')",
        f"SELECT pg_notify('{CHANNEL}', '{GLOBAL}')",
    ]
    with connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)


# Epochs are never reused in a process, whichever feed draws them: what a feed saw before a
# fork, or before it was stopped and another started, never matches the new one's.
_epochs = itertools.count(1)


@dataclass(frozen=True)
class Seen:
    """Where the feed stood when something was read: what was read is current while no tag
    of it has been heard since."""

    epoch: int
    heard: int


class Feed:
    """One per process: the listening thread and what it heard (a count, and for each tag the
    count when it was last heard)."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self._lock = threading.Lock()
        self._connection = None
        self._epoch = next(_epochs)
        self._heard = 0
        self._tags: dict[str, int] = {}
        self._answered_at = 0.0  # time.monotonic() of the last notification heard
        self._asking = False
        self._suspended = True  # until this code's triggers are known to be there
        self._installed = f"{INSTALLED}{_fingerprint()}"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rental-changes", daemon=True)
        self._thread.start()

    # The listening thread.
    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self._listen()
            except Exception as error:
                logger.warning("change feed lost its connection, listening again: %s", error)
            self._disconnect()
            self._stop.wait(HEARTBEAT_SECONDS)

    def _listen(self) -> None:
        database = connections[DEFAULT_DB_ALIAS]
        # Named, for whoever reads pg_stat_activity.
        params = {
            **database.get_connection_params(),
            "application_name": APPLICATION_NAME,
            # A peer gone silent is found in seconds, not at the kernel's two hours.
            "keepalives": 1,
            "keepalives_idle": 5,
            "keepalives_interval": 2,
            "keepalives_count": 3,
        }
        connection = database.get_new_connection(params)
        connection.autocommit = True
        with connection.cursor() as cursor:
            cursor.execute(f"LISTEN {CHANNEL}")
            # Listening from before the check: a later drop or return of the triggers is heard.
            cursor.execute(
                "SELECT NOT EXISTS (SELECT 1 FROM pg_proc p "
                "JOIN pg_namespace n ON n.oid = p.pronamespace "
                "WHERE n.nspname = current_schema() AND p.proname = %s)",
                [f"{CHANNEL}_{self._installed}"],
            )
            suspended = cursor.fetchone()[0]
        with self._lock:
            self._suspended = suspended
            self._connection = connection
            # Whatever was read before now may have changed unheard.
            self._epoch = next(_epochs)
            self._tags.clear()
        while not self._stop.is_set():
            self._beat(connection)
            readable, _, _ = select.select([connection], [], [], HEARTBEAT_SECONDS)
            while readable and not self._stop.is_set():
                with self._lock:
                    self._drain_locked()
                readable, _, _ = select.select([connection], [], [], HEARTBEAT_SECONDS)

    def _beat(self, connection) -> None:
        """Notify this process's own beat: the feed is trusted only while notifications come
        back (a connection pooler that does not pass LISTEN on, say, answers queries but
        brings no notification)."""
        # Requests do not touch the connection while it is asked (nor wait for it).
        with self._lock:
            self._asking = True
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_notify(%s, %s)", [CHANNEL, f"beat{os.getpid()}"])
        finally:
            with self._lock:
                self._asking = False
                self._heard_locked(connection)

    def _disconnect(self) -> None:
        with self._lock:
            connection, self._connection = self._connection, None
            self._epoch = next(_epochs)
        if connection is not None:
            with contextlib.suppress(Exception):  # closing a connection already lost
                connection.close()

    def _drain_locked(self) -> None:
        connection = self._connection
        connection.poll()
        self._heard_locked(connection)

    def _heard_locked(self, connection) -> None:
        if not connection.notifies:
            return
        self._answered_at = time.monotonic()  # notifications come: the feed works
        self._heard += 1
        for notify in connection.notifies:
            self._tags[notify.payload] = self._heard
            if notify.payload == SUSPENDED:
                self._suspended = True
            elif notify.payload.startswith(INSTALLED):  # triggers are back: are they ours?
                self._suspended = notify.payload != self._installed
        connection.notifies.clear()
        if len(self._tags) > MAX_TAGS:
            self._tags.clear()
            self._epoch = next(_epochs)

    # Requests.
    def seen(self) -> Seen | None:
        """Where the feed stands, once what is on the socket is heard; None while it cannot be
        trusted (not listening, or no notification within HEALTHY_SECONDS)."""
        with self._lock:
            connection = self._connection
            if connection is None or self._asking or self._suspended:
                return None
            try:
                if select.select([connection], [], [], 0)[0]:
                    self._drain_locked()
            except Exception:
                return None
            if time.monotonic() - self._answered_at > HEALTHY_SECONDS:
                return None
            return Seen(epoch=self._epoch, heard=self._heard)

    def heard_of(self, tag: str) -> bool:
        """`tag` was heard since the feed (re)connected."""
        with self._lock:
            return tag in self._tags

    def unchanged(self, seen: Seen, tags: Iterable[str]) -> bool:
        """Nothing of `tags` heard since `seen` (from seen()), nor anything lost since."""
        with self._lock:
            if seen.epoch != self._epoch:
                return False
            heard = self._tags.get
            return heard(GLOBAL, 0) <= seen.heard and all(
                heard(tag, 0) <= seen.heard for tag in tags
            )

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=HEARTBEAT_SECONDS * 3)
        self._disconnect()


_feed: Feed | None = None
_feed_lock = threading.Lock()


def feed() -> Feed | None:
    """This process's feed, started on first use (after a fork: a new one); None where
    nothing can be heard (not PostgreSQL)."""
    global _feed
    if connections[DEFAULT_DB_ALIAS].vendor != "postgresql":
        return None
    if _feed is None or _feed.pid != os.getpid():
        with _feed_lock:
            if _feed is None or _feed.pid != os.getpid():
                _feed = Feed()
    return _feed


def feed_stop() -> None:
    """Stop listening (tests, before their database is dropped)."""
    global _feed
    with _feed_lock:
        if _feed is not None and _feed.pid == os.getpid():
            _feed.stop()
        _feed = None


# False while a request may not be answered from memory (rental.middleware.KeptReadsMiddleware).
reads_from_memory: ContextVar[bool] = ContextVar("rental_reads_from_memory", default=True)


def now_seen() -> tuple[Feed, Seen] | None:
    """The feed and where it stands, when what is kept may be trusted for this request:
    PostgreSQL, no transaction open, a request that may read from memory, a healthy feed."""
    if not reads_from_memory.get():
        return None
    current = feed()
    if current is None or connections[DEFAULT_DB_ALIAS].in_atomic_block:
        return None
    seen = current.seen()
    return None if seen is None else (current, seen)

"""What an order's pages show, in one word: a digest of every row they read, computed by
PostgreSQL in one query from where each row's current version lies: `xmin` (the transaction
that wrote it) and `ctid` (its place, new at every update, also within one transaction). Any
insert, update or delete of a row changes the digest, and reading it costs far less than
turning whole rows into text. The order page, its two polls and the API's order answer from the
cache while it stays the same (rental.responsecache), and render afresh once anything changed.

Nothing has to remember to bump it: a write that changes a row the pages read changes the
digest. Each app names the rows it adds to the pages (orders.hooks, `order_version_parts`, SQL
over the order's row `o`); what depends on the clock is part of it too (the payment window
open or closed, the minute while a rental runs, since the page says the time left).
Other databases (SQLite for `make run`) get no digest: the pages are rendered every time.
"""

import functools
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.models import Model
from django.http import Http404

from accounts.models import User
from catalog.models import Environment, GpuModel, TermPrice
from hosts.models import Host, SlotHold
from orders.hooks import VersionParts, order_version_parts
from orders.models import Order, OrderEvent
from rental.changes import account_tag, account_tag_sql, host_tag_sql
from rental.responsecache import Version


@dataclass(frozen=True)
class OrderVersion:
    order_id: int
    digest: str
    # What the pages change with (rental.changes), and the time they change by themselves.
    tags: frozenset[str]
    valid_until: datetime | None


def table(model: type[Model]) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def row_version(alias: str) -> str:
    """SQL: the version of the row at `alias` (text)."""
    return f"{alias}.xmin::text || {alias}.ctid::text"


def rows_digest(model: type[Model], where: str) -> str:
    """SQL: the versions of the rows of `model` (alias `t`) that `where` selects."""
    return (
        f"(SELECT coalesce(string_agg({row_version('t')}, ',' ORDER BY t.id), '') "
        f"FROM {table(model)} t WHERE {where})"
    )


def order_account_tag(order_id_sql: str) -> str:
    """SQL: the rental.changes tag of the account owning the order whose id `order_id_sql`
    gives (a row of the order's, for its trigger)."""
    return account_tag_sql(f"SELECT user_id FROM {table(Order)} WHERE id = {order_id_sql}")


def _order_parts() -> VersionParts:
    keys = Order.ssh_keys.through
    return VersionParts(
        digest=[
            row_version("o"),
            rows_digest(OrderEvent, "t.order_id = o.id"),
            rows_digest(SlotHold, "t.order_id = o.id"),
            rows_digest(
                Host, f"t.id IN (SELECT host_id FROM {table(SlotHold)} WHERE order_id = o.id)"
            ),
            rows_digest(keys, "t.order_id = o.id"),
            rows_digest(
                keys._meta.get_field("sshkey").related_model,
                f"t.id IN (SELECT sshkey_id FROM {table(keys)} WHERE order_id = o.id)",
            ),
            rows_digest(GpuModel, "t.id = o.gpu_id"),
            # Today's rates: a rental's page prices its extensions with them.
            rows_digest(TermPrice, "t.gpu_id = o.gpu_id"),
            rows_digest(Environment, "t.id = o.environment_id"),
            # A rental lists its extensions; an extension names its rental and its status.
            rows_digest(Order, "t.extends_id = o.id"),
            rows_digest(Order, "t.id = o.extends_id"),
            "(o.payment_deadline > now())::text",
            # "Time left: 3 days, 4 hours" changes by the minute.
            "CASE WHEN o.ends_at IS NOT NULL THEN floor(extract(epoch FROM now()) / 60)::text END",
        ],
        # The account's own rows (the order, its extensions, keys...) change with its tag.
        tags=[
            f"(SELECT string_agg(DISTINCT {host_tag_sql('t.host_id')}, ' ') "
            f"FROM {table(SlotHold)} t WHERE t.order_id = o.id)"
        ],
        deadlines=[
            "CASE WHEN o.payment_deadline > now() THEN o.payment_deadline END",
            NEXT_MINUTE_SQL.join(["CASE WHEN o.ends_at IS NOT NULL THEN ", " END"]),
        ],
    )


NEXT_MINUTE_SQL = "date_trunc('minute', now()) + interval '1 minute'"


def _digest_sql() -> str:
    return _digest_sql_of(order_version_parts())


@functools.cache
def _digest_sql_of(registered: tuple[Callable[[], VersionParts], ...]) -> str:
    """Written once per process for the parts the apps registered (a request costs none)."""
    every = [_order_parts(), *(parts() for parts in registered)]
    digest = [part for parts in every for part in parts.digest]
    tags = [account_tag_sql("o.user_id"), *(part for parts in every for part in parts.tags)]
    deadlines = [part for parts in every for part in parts.deadlines]
    return (
        f"SELECT o.id, md5(concat_ws('|', {', '.join(digest)})), "
        f"concat_ws(' ', {', '.join(tags)}), least({', '.join(deadlines)}) "
        f"FROM {table(Order)} o WHERE o.user_id = %s AND o.number = %s"
    )


def versions_supported() -> bool:
    return connection.vendor == "postgresql"


def _prepared_fetchone(sql: str, params: list) -> tuple | None:
    """The first row of `sql` (with %s parameters), run as a statement this database session
    prepared: PostgreSQL then plans the digest's many subqueries once per connection, where
    planning them at every request costs more than running them."""
    name = "version_" + hashlib.sha256(sql.encode()).hexdigest()[:20]
    database = connections[DEFAULT_DB_ALIAS]  # this thread's connection, not the proxy
    database.ensure_connection()
    # A connection that was closed and opened again (health checks, CONN_MAX_AGE) is a new
    # session without the statement: it is told apart by its server process.
    session = (id(database.connection), database.connection.info.backend_pid)
    prepared: dict[str, tuple[int, int]] = database.__dict__.setdefault("_versions_prepared", {})
    with database.cursor() as cursor:
        if prepared.get(name) != session:
            pieces = sql.split("%s")
            numbered = pieces[0] + "".join(f"${n}{piece}" for n, piece in enumerate(pieces[1:], 1))
            cursor.execute(f"PREPARE {name} AS {numbered}")
            prepared[name] = session
        cursor.execute(f"EXECUTE {name} ({', '.join(['%s'] * len(params))})", params)
        return cursor.fetchone()


def order_answer_version(*, user: User, number: str) -> Version:
    """The version of the user's own order `number`, as stored answers name it; a 404 for
    anyone else's order."""
    found = order_version(user=user, number=number)
    if found is None:
        raise Http404
    return Version(
        name=f"order-{found.order_id}-{found.digest}",
        tags=found.tags,
        valid_until=found.valid_until,
    )


def order_version(*, user: User, number: str) -> OrderVersion | None:
    """The version of the user's own order with that number (any case); None when the user
    has no such order. Only call with versions_supported()."""
    row = _prepared_fetchone(_digest_sql(), [user.pk, number.upper()])
    if row is None:
        return None
    order_id, digest, tags, valid_until = row
    return OrderVersion(
        order_id=order_id, digest=digest, tags=frozenset(tags.split()), valid_until=valid_until
    )


def orders_version(*, user: User) -> Version:
    """The version of the user's order list: every order's row, GPU and environment, and the
    minute (dates and statuses read with the clock)."""
    mine = f"SELECT {{column}} FROM {table(Order)} WHERE user_id = %s"
    parts = [
        rows_digest(Order, "t.user_id = %s"),
        rows_digest(GpuModel, f"t.id IN ({mine.format(column='gpu_id')})"),
        rows_digest(Environment, f"t.id IN ({mine.format(column='environment_id')})"),
        "floor(extract(epoch FROM now()) / 60)::text",
    ]
    row = _prepared_fetchone(
        f"SELECT md5(concat_ws('|', {', '.join(parts)})), {NEXT_MINUTE_SQL}", [user.pk] * 3
    )
    assert row is not None  # an aggregate: always one row
    return Version(
        name=f"orders-{row[0]}", tags=frozenset({account_tag(user.pk)}), valid_until=row[1]
    )

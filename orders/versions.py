"""The versions an order's pages are stored under (rental.responsecache), and how long they hold
by the clock alone.

A customer's order page, its two polls and the API's order answer name three versions: the
store's settings (GPUs, environments, prices, chains: staff edits and the seed bump it), the
account (its name, its SSH keys) and the order itself. `order_changed()` bumps the order's, its
account's order list's and those of the orders it extends or is extended by: every service
that writes what the pages show calls it (the state machine for every event it records).

What changes by the clock alone is not a version: the pages are stored until it changes (the
payment window closing, the minute while a rental runs, since the page says the time left),
worked out in one query from what each app names (orders.hooks.order_version_parts).
"""

import functools
import hashlib
from collections.abc import Callable, Collection

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.models import Model, Q
from django.utils import timezone

from accounts.versions import account_version
from catalog.pagecache import STORE
from orders.hooks import VersionParts, order_version_parts
from orders.models import Order, OrderEvent, OrderStatus
from rental.responsecache import LIFETIME, versions_bump


def table(model: type[Model]) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def order_version(number: str) -> str:
    return f"order:{number.upper()}"


def orders_list_version(user_id: int) -> str:
    return f"orders:{user_id}"


def order_versions(*, user_id: int, number: str) -> list[str]:
    """What the pages of the order `number` of that account show."""
    return [STORE, account_version(user_id), order_version(number)]


def orders_versions(*, user_id: int) -> list[str]:
    """What the account's order list shows."""
    return [STORE, account_version(user_id), orders_list_version(user_id)]


def _orders_bump(order_ids: tuple[int, ...]) -> None:
    rows = Order.objects.filter(
        Q(pk__in=order_ids) | Q(extends_id__in=order_ids) | Q(extensions__in=order_ids)
    ).values_list("number", "user_id")
    names = {order_version(number) for number, _user_id in rows}
    names |= {orders_list_version(user_id) for _number, user_id in rows}
    versions_bump(*sorted(names))


def orders_changed(*, order_ids: Collection[int]) -> None:
    """What the pages of these orders show changed: they render afresh (rental.responsecache.
    versions_bump), with those of their rental or their extensions."""
    if order_ids:
        _orders_bump(tuple(order_ids))


def order_changed(*, order_id: int) -> None:
    orders_changed(order_ids=[order_id])


NEXT_MINUTE_SQL = "date_trunc('minute', now()) + interval '1 minute'"


def _order_deadlines(late_minutes: int) -> VersionParts:
    waiting = f"o.status IN ('{OrderStatus.PAID}', '{OrderStatus.PROVISIONING}')"
    late = f"max(e.created_at) + interval '{int(late_minutes)} minutes'"
    return VersionParts(
        deadlines=[
            "CASE WHEN o.payment_deadline > now() THEN o.payment_deadline END",
            # "Time left: 3 days, 4 hours" changes by the minute.
            NEXT_MINUTE_SQL.join(["CASE WHEN o.ends_at IS NOT NULL THEN ", " END"]),
            # Access not there ACCESS_LATE_MINUTES after payment: the page says staff know.
            f"CASE WHEN {waiting} AND o.access_host = '' THEN (SELECT {late} "
            f"FROM {table(OrderEvent)} e WHERE e.order_id = o.id "
            f"AND e.new_status = '{OrderStatus.PAID}' HAVING {late} > now()) END",
        ]
    )


@functools.cache
def _deadline_sql_of(registered: tuple[Callable[[], VersionParts], ...], late_minutes: int) -> str:
    """Written once per process for the parts the apps registered."""
    deadlines = [
        part
        for parts in (_order_deadlines(late_minutes), *(p() for p in registered))
        for part in parts.deadlines
    ]
    return (
        f"SELECT least({', '.join(deadlines)}) "
        f"FROM {table(Order)} o WHERE o.user_id = %s AND o.number = %s"
    )


def _prepared_fetchone(sql: str, params: list) -> tuple | None:
    """The first row of `sql` (with %s parameters), run as a statement this database session
    prepared: PostgreSQL then plans its many subqueries once per connection."""
    if connection.vendor != "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchone()
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


def order_lifetime(*, user_id: int, number: str) -> int:
    """Seconds the pages of the account's order `number` hold by the clock (LIFETIME for an
    order that is not the account's: its 404 is not stored anyway)."""
    if connection.vendor != "postgresql":
        return 0  # the SQL is PostgreSQL's: other databases (`make run`) render every time
    row = _prepared_fetchone(
        _deadline_sql_of(order_version_parts(), settings.ACCESS_LATE_MINUTES),
        [user_id, number.upper()],
    )
    if row is None or row[0] is None:
        return LIFETIME
    return int((row[0] - timezone.now()).total_seconds())

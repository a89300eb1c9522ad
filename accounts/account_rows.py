"""The account a signed-in request reads, in one query written once: its columns as SQL, and
the row turned back into a User (with whether it has a second factor) as the ORM would.
accounts.sessions reads them along with the session; accounts.backends alone."""

import functools
from dataclasses import dataclass

from django.db import connection
from django.db.models.expressions import Col
from django_otp.plugins.otp_totp.models import TOTPDevice

from accounts.models import User


def authenticator_confirmed_sql(user_column: str) -> str:
    """SQL: the account at `user_column` has a confirmed authenticator."""
    meta, quote = TOTPDevice._meta, connection.ops.quote_name
    return (
        f"EXISTS (SELECT 1 FROM {quote(meta.db_table)} d "
        f"WHERE d.{quote(meta.get_field('user').column)} = {user_column} "
        f"AND d.{quote(meta.get_field('confirmed').column)})"
    )


def signed_in_account(*, user_id: int) -> User | None:
    """The account a session names, with whether two_factor_enabled read along
    (`has_second_factor`): what every signed-in request needs, in one query written once.
    accounts.sessions reads the same columns along with the session itself."""
    with connection.cursor() as cursor:
        cursor.execute(_signed_in_account_sql(), [user_id])
        row = cursor.fetchone()
    return None if row is None else account_from_row(row)


def account_columns_sql(alias: str) -> str:
    """SQL: what account_from_row reads, of the account at `alias`, in its order."""
    quote = connection.ops.quote_name
    columns = [f"{alias}.{quote(str(field.column))}" for field in User._meta.concrete_fields]
    second_factor = authenticator_confirmed_sql(f"{alias}.{quote(str(User._meta.pk.column))}")
    return ", ".join([*columns, second_factor])


def account_from_row(values) -> User | None:
    """The account of a row of account_columns_sql, converted as the ORM converts its rows;
    None for a row of NULLs (an outer join that found no account)."""
    layout = _account_layout(connection.vendor)
    values = list(values)
    if values[layout.pk_index] is None:
        return None
    for index, converters, column in layout.converters:
        for converter in converters:
            values[index] = converter(values[index], column, connection)
    account = User.from_db(connection.alias, layout.attnames, values[:-1])
    account.has_second_factor = bool(values[-1])
    return account


@dataclass(frozen=True)
class _AccountLayout:
    pk_index: int
    attnames: list[str]
    # (index, converters, column) of the fields the database returns in another type than
    # the field's own (dates as text on SQLite, say).
    converters: list[tuple[int, list, Col]]


@functools.cache
def _account_layout(vendor: str) -> _AccountLayout:
    """What account_from_row needs of the account's fields, worked out once per process."""
    fields = User._meta.concrete_fields
    converters = []
    for index, field in enumerate(fields):
        column = field.get_col(User._meta.db_table)
        found = connection.ops.get_db_converters(column) + field.get_db_converters(connection)
        if found:
            converters.append((index, found, column))
    return _AccountLayout(
        pk_index=fields.index(User._meta.pk),
        attnames=[field.attname for field in fields],
        converters=converters,
    )


@functools.cache
def _signed_in_account_sql() -> str:
    return (
        f"SELECT {account_columns_sql('u')} "
        f"FROM {connection.ops.quote_name(User._meta.db_table)} u WHERE u.id = %s"
    )

"""`manage.py grant_app_role ROLE`, run as the tables' owner after `migrate`: the role the
app connects as may read and write rows, nothing more.

The triggers that keep issued factures and credit notes unchanged (billing's migrations) hold
only against a role that owns no table: an owner may `ALTER TABLE ... DISABLE TRIGGER` or
`TRUNCATE`. So production migrates as the owner (DATABASE_OWNER_URL in the README) and the
app connects as ROLE, granted here what it needs: SELECT, INSERT, UPDATE, DELETE on every
table, its sequences, and the same on tables later migrations add. Run again after each
`migrate`: it grants again, idempotently.
"""

from django.core.management.base import BaseCommand, CommandError
from django.db import connection
from psycopg2 import sql

# What the app does with rows; TRUNCATE, REFERENCES and TRIGGER stay the owner's.
TABLE_PRIVILEGES = "SELECT, INSERT, UPDATE, DELETE"
SEQUENCE_PRIVILEGES = "USAGE, SELECT"


class Command(BaseCommand):
    help = "Grant the app's database role what it needs on the tables (run as their owner)."

    def add_arguments(self, parser):
        parser.add_argument("role", help="the role the app connects as (DATABASE_URL's user)")

    def handle(self, *args, role: str, **options):
        if connection.vendor != "postgresql":
            raise CommandError("grant_app_role is for PostgreSQL.")
        with connection.cursor() as cursor:
            cursor.execute("SELECT rolsuper FROM pg_roles WHERE rolname = %s", [role])
            found = cursor.fetchone()
            if found is None:
                raise CommandError(f"No role {role!r}: create it first (README, Production).")
            cursor.execute("SELECT count(*) FROM pg_tables WHERE tableowner = %s", [role])
            if found[0] or cursor.fetchone()[0]:
                raise CommandError(f"{role!r} is a superuser or owns tables: it could undo them.")
            cursor.execute("SELECT current_user, current_database()")
            owner, database = cursor.fetchone()
            if owner == role:
                raise CommandError("Run this as the tables' owner, not as the app's role.")
            target = sql.Identifier(role)
            statements = [
                sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(
                    sql.Identifier(database), target
                ),
                sql.SQL("GRANT USAGE ON SCHEMA public TO {}").format(target),
                sql.SQL(f"GRANT {TABLE_PRIVILEGES} ON ALL TABLES IN SCHEMA public TO {{}}").format(
                    target
                ),
                sql.SQL(
                    f"GRANT {SEQUENCE_PRIVILEGES} ON ALL SEQUENCES IN SCHEMA public TO {{}}"
                ).format(target),
                sql.SQL(
                    "ALTER DEFAULT PRIVILEGES IN SCHEMA public "
                    f"GRANT {TABLE_PRIVILEGES} ON TABLES TO {{}}"
                ).format(target),
                sql.SQL(
                    "ALTER DEFAULT PRIVILEGES IN SCHEMA public "
                    f"GRANT {SEQUENCE_PRIVILEGES} ON SEQUENCES TO {{}}"
                ).format(target),
            ]
            for statement in statements:
                cursor.execute(statement)
        self.stdout.write(f"{role} may read and write the rows of {database}, as {owner}'s.")

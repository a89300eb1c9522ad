"""The change feed of sessions 14-15 wrote its triggers and functions after every migrate, not
in a migration: accounts 0012_i25 drops whatever of them a database still has."""

import importlib

import pytest
from django.db import connection

pytestmark = pytest.mark.django_db

migration = importlib.import_module("accounts.migrations.0012_i25_drop_change_feed")
COUNT = (
    "SELECT (SELECT count(*) FROM pg_proc WHERE proname LIKE 'rental\\_changed\\_%%'), "
    "(SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'rental\\_changed%%')"
)


def test_the_feed_s_functions_and_triggers_are_dropped():
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE FUNCTION rental_changed_catalog_gpumodel() RETURNS trigger "
            "LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$"
        )
        cursor.execute(
            "CREATE TRIGGER rental_changed AFTER INSERT OR UPDATE OR DELETE ON catalog_gpumodel "
            "FOR EACH ROW EXECUTE FUNCTION rental_changed_catalog_gpumodel()"
        )
        cursor.execute(
            "CREATE FUNCTION rental_changed_installed0123() RETURNS void "
            "LANGUAGE plpgsql AS $$ BEGIN END $$"
        )
        cursor.execute(COUNT)
        assert cursor.fetchone() == (2, 1)
    with connection.schema_editor() as editor:
        migration.drop(None, editor)
    with connection.cursor() as cursor:
        cursor.execute(COUNT)
        assert cursor.fetchone() == (0, 0)

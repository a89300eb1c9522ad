"""The change feed's triggers and functions go (the in-process tier of sessions 14-15 is gone:
pages are cached in Redis under versions bumped by the services that write). They were written
after every migrate, never by a migration: dropped here by name, on PostgreSQL only."""

from django.db import migrations

# Every function of the feed was named rental_changed_*: the per-table trigger functions, the
# TRUNCATE one, the release fingerprint; CASCADE drops their triggers with them.
DROP = """
DO $$
DECLARE f regprocedure;
BEGIN
  FOR f IN SELECT p.oid::regprocedure FROM pg_proc p
      JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = current_schema() AND p.proname LIKE 'rental\\_changed\\_%'
  LOOP
    EXECUTE 'DROP FUNCTION IF EXISTS ' || f::text || ' CASCADE';
  END LOOP;
END $$;
"""


def drop(apps, schema_editor) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP, params=None)  # no placeholder: LIKE keeps its %


class Migration(migrations.Migration):
    dependencies = [("accounts", "0011_i24_no_control_characters")]

    operations = [migrations.RunPython(drop, migrations.RunPython.noop, elidable=True)]

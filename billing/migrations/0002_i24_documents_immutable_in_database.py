"""Issued invoices and credit notes are immutable in the database too: a trigger refuses any
UPDATE or DELETE of their rows, whoever sends it (a raw SQL session, a script, another app),
not only the ORM (billing.models.DocumentQuerySet)."""

from django.db import migrations

MESSAGE = "an issued invoice or credit note is never changed nor deleted: issue a credit note"

POSTGRESQL = f"""
CREATE FUNCTION billing_document_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '{MESSAGE}' USING ERRCODE = 'integrity_constraint_violation';
END;
$$;
CREATE TRIGGER billing_document_immutable
    BEFORE UPDATE OR DELETE ON billing_billingdocument
    FOR EACH ROW EXECUTE FUNCTION billing_document_immutable();
"""
POSTGRESQL_REVERSE = """
DROP TRIGGER IF EXISTS billing_document_immutable ON billing_billingdocument;
DROP FUNCTION IF EXISTS billing_document_immutable();
"""
# SQLite (make run's default database): one trigger per statement kind.
SQLITE = [
    f"CREATE TRIGGER billing_document_no_{kind} BEFORE {kind.upper()} ON billing_billingdocument "
    f"BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END;"
    for kind in ("update", "delete")
]
SQLITE_REVERSE = [
    f"DROP TRIGGER IF EXISTS billing_document_no_{kind};" for kind in ("update", "delete")
]


def _run(statements: dict[str, list[str]]):
    def run(apps, schema_editor) -> None:
        for statement in statements.get(schema_editor.connection.vendor, []):
            schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):
    dependencies = [("billing", "0001_invoices_and_credit_notes")]

    operations = [
        migrations.RunPython(
            _run({"postgresql": [POSTGRESQL], "sqlite": SQLITE}),
            _run({"postgresql": [POSTGRESQL_REVERSE], "sqlite": SQLITE_REVERSE}),
        )
    ]

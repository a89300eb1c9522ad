"""Issued invoices and credit notes are immutable in the database too: a trigger refuses any
UPDATE or DELETE of their rows, whoever sends it (a raw SQL session, a script, another app),
not only the ORM (billing.models.DocumentQuerySet). The one write allowed is the one
DocumentQuerySet.service_period_fix makes: the service period a document paid before its
service started left open, written once when the service starts."""

from django.db import migrations

MESSAGE = "an issued invoice or credit note is never changed nor deleted: issue a credit note"

POSTGRESQL = f"""
CREATE FUNCTION billing_document_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND OLD.service_start IS NULL AND OLD.service_end IS NULL
       AND to_jsonb(NEW) - 'service_start' - 'service_end'
           = to_jsonb(OLD) - 'service_start' - 'service_end' THEN
        RETURN NEW;
    END IF;
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
# SQLite (make run's default database): an update of any other column, of a period already
# written, or a delete is refused. SQLite names the columns (those of this migration's time).
PERIOD = ("service_start", "service_end")
COLUMNS = (
    "id kind number year sequence_number order_id user_id credited_invoice_id issued_at seller "
    "buyer lines vat_mode vat_rate total_excl_vat vat_amount total currency payment"
).split()
SQLITE = [
    f"CREATE TRIGGER billing_document_no_update BEFORE UPDATE OF {', '.join(COLUMNS)} "
    f"ON billing_billingdocument BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END;",
    f"CREATE TRIGGER billing_document_period_once BEFORE UPDATE OF {', '.join(PERIOD)} "
    "ON billing_billingdocument WHEN OLD.service_start IS NOT NULL "
    f"OR OLD.service_end IS NOT NULL BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END;",
    "CREATE TRIGGER billing_document_no_delete BEFORE DELETE ON billing_billingdocument "
    f"BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END;",
]
SQLITE_REVERSE = [
    f"DROP TRIGGER IF EXISTS billing_document_{name};"
    for name in ("no_update", "period_once", "no_delete")
]


def _run(statements: dict[str, list[str]]):
    def run(apps, schema_editor) -> None:
        for statement in statements.get(schema_editor.connection.vendor, []):
            schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):
    dependencies = [("billing", "0002_i26b_service_period_fixed_at_start")]

    operations = [
        migrations.RunPython(
            _run({"postgresql": [POSTGRESQL], "sqlite": SQLITE}),
            _run({"postgresql": [POSTGRESQL_REVERSE], "sqlite": SQLITE_REVERSE}),
        )
    ]

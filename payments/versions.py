"""What payments adds to an order's pages, for orders.versions: the order's invoices with their
rates, assets, chains and the chains' cursors (confirmations count from the head) and whether
each invoice is still watched, read in one join; their transfers; its refunds and "I've paid"
claims."""

from orders.versions import row_version, rows_digest, table
from payments.models import Asset, Chain, Invoice, PaymentClaim, Rate, ScanCursor, Transfer
from payments.refunds.models import Refund


def _invoices_version() -> str:
    each = ", ".join(
        [
            *(row_version(alias) for alias in ("i", "r", "a", "c", "s")),
            "(i.monitor_until > now())::text",
            "(i.expires_at > now())::text",
        ]
    )
    return (
        f"(SELECT string_agg(concat_ws(':', {each}), ',' ORDER BY i.id) "
        f"FROM {table(Invoice)} i "
        f"JOIN {table(Rate)} r ON r.id = i.rate_id "
        f"JOIN {table(Asset)} a ON a.id = i.asset_id "
        f"JOIN {table(Chain)} c ON c.id = a.chain_id "
        f"LEFT JOIN {table(ScanCursor)} s ON s.chain_id = c.id "
        "WHERE i.order_id = o.id)"
    )


def order_payment_version_parts() -> list[str]:
    invoices = f"SELECT id FROM {table(Invoice)} WHERE order_id = o.id"
    return [
        _invoices_version(),
        rows_digest(Transfer, f"t.invoice_id IN ({invoices})"),
        rows_digest(Refund, "t.order_id = o.id"),
        rows_digest(PaymentClaim, "t.order_id = o.id"),
    ]

"""What payments adds to an order's pages, for orders.versions: the order's invoices, their
transfers, rates, assets, chains and the chains' cursors (confirmations count from the head),
its refunds and "I've paid" claims, and whether each invoice is still watched."""

from orders.versions import rows_digest, table
from payments.models import Asset, Chain, Invoice, PaymentClaim, Rate, ScanCursor, Transfer
from payments.refunds.models import Refund


def order_payment_version_parts() -> list[str]:
    invoices = f"SELECT {{column}} FROM {table(Invoice)} WHERE order_id = o.id"
    assets = f"SELECT asset_id FROM {table(Invoice)} WHERE order_id = o.id"
    chains = f"SELECT chain_id FROM {table(Asset)} WHERE id IN ({assets})"
    return [
        rows_digest(Invoice, "t.order_id = o.id"),
        rows_digest(Transfer, f"t.invoice_id IN ({invoices.format(column='id')})"),
        rows_digest(Rate, f"t.id IN ({invoices.format(column='rate_id')})"),
        rows_digest(Asset, f"t.id IN ({assets})"),
        rows_digest(Chain, f"t.id IN ({chains})"),
        rows_digest(ScanCursor, f"t.chain_id IN ({chains})"),
        rows_digest(Refund, "t.order_id = o.id"),
        rows_digest(PaymentClaim, "t.order_id = o.id"),
        f"(SELECT string_agg((monitor_until > now())::text || (expires_at > now())::text, ',' "
        f"ORDER BY id) FROM {table(Invoice)} WHERE order_id = o.id)",
    ]

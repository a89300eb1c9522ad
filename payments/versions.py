"""What payments adds to an order's pages, for orders.versions: the order's invoices with their
rates, assets, chains and the chains' cursors (confirmations count from the head) and whether
each invoice is still watched, read in one join; their transfers; its refunds and "I've paid"
claims; while the order is unpaid, the currencies it offers (the latest rates).
The tags and deadlines of the same, for what each process keeps (rental.changes)."""

from orders.hooks import VersionParts
from orders.models import OrderStatus
from orders.versions import row_version, rows_digest, table
from payments.models import Asset, Chain, Invoice, PaymentClaim, Rate, ScanCursor, Transfer
from payments.refunds.models import Refund
from payments.selectors import CLAIM_WATCH
from rental.changes import RATES_TAG_SQL, chain_tag_sql


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


def _latest_rates() -> str:
    """SQL FROM: the latest rate of each kind for each asset (alias `x`), what decides whether
    a currency is priced now (payments.selectors.rate_current)."""
    kinds = ", ".join(f"('{kind}')" for kind in Rate.Kind.values)
    return (
        f"{table(Asset)} a CROSS JOIN (VALUES {kinds}) k(kind) CROSS JOIN LATERAL ("
        f"SELECT t.xmin, t.ctid, t.expires_at FROM {table(Rate)} t "
        "WHERE t.asset_id = a.id AND t.kind = k.kind ORDER BY t.fetched_at DESC LIMIT 1) x"
    )


def order_payment_version_parts() -> VersionParts:
    invoices = f"SELECT id FROM {table(Invoice)} WHERE order_id = o.id"
    # An unpaid order offers the currencies priced now (payments.forms.AssetChoiceForm): they
    # change with a new rate, or as the latest one expires.
    unpaid = f"o.status = '{OrderStatus.AWAITING_PAYMENT}'"
    return VersionParts(
        digest=[
            _invoices_version(),
            rows_digest(Transfer, f"t.invoice_id IN ({invoices})"),
            rows_digest(Refund, "t.order_id = o.id"),
            rows_digest(PaymentClaim, "t.order_id = o.id"),
            f"CASE WHEN {unpaid} THEN (SELECT string_agg("
            f"{row_version('x')} || (x.expires_at > now())::text, ',' ORDER BY a.id, k.kind) "
            f"FROM {_latest_rates()}) END",
        ],
        tags=[
            # A transfer still confirming counts its confirmations from its chain's head.
            f"(SELECT string_agg(DISTINCT {chain_tag_sql('t.chain_id')}, ' ') "
            f"FROM {table(Transfer)} t "
            f"WHERE t.invoice_id IN ({invoices}) AND t.status = '{Transfer.Status.SEEN}')",
            f"CASE WHEN {unpaid} THEN {RATES_TAG_SQL} END",
        ],
        deadlines=[
            # The window to pay closes, the watch of the address ends.
            f"(SELECT min(v.at) FROM {table(Invoice)} i "
            "CROSS JOIN LATERAL (VALUES (i.monitor_until), (i.expires_at)) v(at) "
            "WHERE i.order_id = o.id AND v.at > now())",
            # The watch after "I've paid" ends: the page then says staff look at it.
            f"(SELECT max(c.created_at) + interval '{int(CLAIM_WATCH.total_seconds())} seconds' "
            f"FROM {table(PaymentClaim)} c WHERE c.order_id = o.id "
            f"HAVING max(c.created_at) + interval '{int(CLAIM_WATCH.total_seconds())} seconds' "
            "> now())",
            f"CASE WHEN {unpaid} THEN (SELECT min(x.expires_at) FROM {_latest_rates()} "
            "WHERE x.expires_at > now()) END",
        ],
    )

"""When an order's pages change by the clock alone because of its payment (orders.versions):
the window to pay closing, the watch of its address ending, and while the order is unpaid the
latest rate of a currency it offers expiring."""

from orders.hooks import VersionParts
from orders.models import OrderStatus
from orders.versions import table
from payments.models import Asset, Invoice, PaymentClaim, Rate
from payments.selectors import CLAIM_WATCH


def _latest_rates() -> str:
    """SQL FROM: the latest rate of each kind for each asset (alias `x`), what decides whether
    a currency is priced now (payments.selectors.rate_current)."""
    kinds = ", ".join(f"('{kind}')" for kind in Rate.Kind.values)
    return (
        f"{table(Asset)} a CROSS JOIN (VALUES {kinds}) k(kind) CROSS JOIN LATERAL ("
        f"SELECT t.expires_at FROM {table(Rate)} t "
        "WHERE t.asset_id = a.id AND t.kind = k.kind ORDER BY t.fetched_at DESC LIMIT 1) x"
    )


def order_payment_version_parts() -> VersionParts:
    unpaid = f"o.status = '{OrderStatus.AWAITING_PAYMENT}'"
    return VersionParts(
        deadlines=[
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

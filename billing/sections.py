"""What billing adds to an order's page: its invoice (and credit note), with the PDF; and the
rows that page then reads, for the stored answers' version (orders.versions)."""

from billing.models import BillingDocument
from orders.hooks import PageSection, VersionParts
from orders.models import Order
from orders.versions import rows_digest

BILLING_SECTION = "billing"


def order_billing_section(*, order: Order) -> PageSection:
    documents = BillingDocument.objects.filter(order=order).order_by("issued_at", "pk")
    return PageSection("billing/_order_section.html", {"billing_documents": documents})


def order_billing_version_parts() -> VersionParts:
    return VersionParts(digest=[rows_digest(BillingDocument, "t.order_id = o.id")])

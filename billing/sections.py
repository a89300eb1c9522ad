"""What billing adds to an order's page: its invoice (and credit note), with the PDF."""

from billing.models import BillingDocument
from orders.hooks import PageSection
from orders.models import UNPAID_STATUSES, Order

BILLING_SECTION = "billing"


def order_billing_section(*, order: Order) -> PageSection:
    # An order is billed once paid (billing.services.event_billed): one still waiting for its
    # money, the page its customer watches while paying, has nothing to read.
    if order.status in UNPAID_STATUSES:
        return PageSection("billing/_order_section.html", {"billing_documents": []})
    # What the section shows of each: its kind and number (the links are by number).
    documents = (
        BillingDocument.objects.filter(order=order)
        .order_by("issued_at", "pk")
        .only("kind", "number")
    )
    return PageSection("billing/_order_section.html", {"billing_documents": documents})

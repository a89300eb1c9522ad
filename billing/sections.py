"""What billing adds to an order's page: its invoice (and credit note), with the PDF."""

from billing.models import BillingDocument
from orders.hooks import PageSection
from orders.models import Order

BILLING_SECTION = "billing"


def order_billing_section(*, order: Order) -> PageSection:
    # What the section shows of each: its kind and number (the links are by number).
    documents = (
        BillingDocument.objects.filter(order=order)
        .order_by("issued_at", "pk")
        .only("kind", "number")
    )
    return PageSection("billing/_order_section.html", {"billing_documents": documents})

"""What billing adds to an order's page: its invoice (and credit note), with the PDF."""

from billing.models import BillingDocument
from orders.hooks import PageSection
from orders.models import Order

BILLING_SECTION = "billing"


def order_billing_section(*, order: Order) -> PageSection:
    documents = BillingDocument.objects.filter(order=order).order_by("issued_at", "pk")
    return PageSection("billing/_order_section.html", {"billing_documents": documents})

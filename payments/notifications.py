"""What payments adds to the order e-mails (orders.hooks, `order_email_sections`)."""

from orders.hooks import PageSection
from orders.models import Order
from payments.models import Invoice
from payments.selectors import payment_progress


def order_payment_email_section(*, order: Order) -> PageSection | None:
    """Once paid, the receipt: what came in, at which locked rate, for which total, in which
    transactions. Before that, an e-mail has no amount that would still hold."""
    progress = payment_progress(order=order)
    if progress is None or progress.invoice.status != Invoice.Status.PAID:
        return None
    return PageSection("payments/email/_receipt.txt", {"payment": progress})

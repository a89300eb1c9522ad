"""Small builders shared by the payment tests."""

from decimal import Decimal

from orders.models import Order, OrderEvent
from payments.models import Invoice
from payments.services import invoice_issue
from tests.factories import OrderFactory


def order_with_invoice(asset, *, user=None, total=Decimal("504.00"), **order_fields) -> Invoice:
    fields = {"total": total, **order_fields}
    if user is not None:
        fields["user"] = user
    order = OrderFactory(**fields)
    return invoice_issue(order=order, asset=asset)


def reload(invoice: Invoice) -> tuple[Invoice, Order]:
    invoice = Invoice.objects.select_related("order").get(pk=invoice.pk)
    return invoice, invoice.order


def timeline(order: Order) -> list[str]:
    """The order's events as short words: status changes by their new status."""
    return [
        event.new_status if event.kind == OrderEvent.Kind.STATUS else event.kind
        for event in order.events.order_by("created_at", "id")
    ]

"""Small builders shared by the payment tests."""

from datetime import datetime
from decimal import Decimal

from django.conf import settings

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


def deadline_at(invoice: Invoice, deadline: datetime) -> None:
    """Move the order's payment deadline (and its invoice's) to `deadline`."""
    Order.objects.filter(pk=invoice.order_id).update(payment_deadline=deadline)
    Invoice.objects.filter(pk=invoice.pk).update(
        expires_at=deadline, monitor_until=deadline + settings.PAYMENTS_MONITOR_PERIOD
    )
    invoice.expires_at = deadline


def reload(invoice: Invoice) -> tuple[Invoice, Order]:
    invoice = Invoice.objects.select_related("order").get(pk=invoice.pk)
    return invoice, invoice.order


def timeline(order: Order) -> list[str]:
    """The order's events as short words: status changes by their new status."""
    return [
        event.new_status if event.kind == OrderEvent.Kind.STATUS else event.kind
        for event in order.events.order_by("created_at", "id")
    ]

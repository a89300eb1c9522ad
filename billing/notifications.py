"""The invoice travels with the "paid" e-mail (an extension's with the "extended" one). The
e-mail channel runs after the claim that issued it committed (orders.events), so the document
is there when the mail is built."""

from billing.models import BillingDocument
from billing.rendering import document_pdf
from billing.services import event_billed
from orders.models import OrderEvent


def order_event_invoice_attachment(*, event: OrderEvent) -> list[tuple[str, bytes, str]]:
    billed = event_billed(event=event)
    if billed is None:
        return []
    order, kind = billed
    document = BillingDocument.objects.filter(order=order, kind=kind).first()
    if document is None:
        return []
    return [(document.filename, document_pdf(document), "application/pdf")]

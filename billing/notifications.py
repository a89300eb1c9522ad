"""The invoice travels with the "paid" e-mail. The e-mail channel runs after the claim that
issued it committed (orders.events), so the document is there when the mail is built."""

from billing.models import BillingDocument, DocumentKind
from billing.rendering import document_pdf
from orders.models import OrderEvent, OrderStatus

# The e-mail of each status that carries a document, and which one.
ATTACHED = {OrderStatus.PAID: DocumentKind.INVOICE, OrderStatus.REFUNDED: DocumentKind.CREDIT_NOTE}


def order_event_invoice_attachment(*, event: OrderEvent) -> list[tuple[str, bytes, str]]:
    if event.kind != OrderEvent.Kind.STATUS or event.new_status not in ATTACHED:
        return []
    kind = ATTACHED[OrderStatus(event.new_status)]
    document = BillingDocument.objects.filter(order_id=event.order_id, kind=kind).first()
    if document is None:
        return []
    return [(document.filename, document_pdf(document), "application/pdf")]

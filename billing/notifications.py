"""The invoice travels with the "paid" e-mail (an extension's with the "extended" one). The
e-mail channel runs after the claim that issued it committed (orders.events), so the document
is there when the mail is built."""

from billing.pdfs import document_pdf_stored
from billing.services import event_document
from orders.models import OrderEvent


def order_event_invoice_attachment(*, event: OrderEvent) -> list[tuple[str, bytes, str]]:
    document = event_document(event=event)
    if document is None:
        return []
    return [(document.filename, document_pdf_stored(document=document), "application/pdf")]

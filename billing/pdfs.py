"""The PDF a document is handed out as (the account page, the API, the admin, the e-mail):
rendered once and stored, so that a customer downloading their facture again and again costs
a read, not a WeasyPrint run of a few hundred milliseconds.

It is rendered as the document is issued, once the claim that issued it has committed (the
numbering lock is long released by then): `document_pdf_on_event`, in settings.HOOKS before
the e-mail that attaches it. A document that has none (issued before this release, a worker
that died in between, the service period written when the rental started) gets it at its
first download, under the document's row lock: eight downloads at once render it once.
"""

from django.db import transaction

from billing.models import BillingDocument, DocumentPdf
from billing.rendering import document_pdf
from billing.services import event_document
from orders.models import OrderEvent


def document_pdf_stored(*, document: BillingDocument) -> bytes:
    """The stored PDF of `document`, rendered and stored first if it has none."""
    stored = DocumentPdf.objects.filter(document=document).values_list("content", flat=True)
    content = stored.first()
    if content is None:
        with transaction.atomic():
            # Locking reads the row only: the document's triggers refuse updates, not this.
            BillingDocument.objects.select_for_update().only("pk").get(pk=document.pk)
            content = stored.first()
            if content is None:
                content = document_pdf(document)
                DocumentPdf.objects.create(document=document, content=content)
    return bytes(content)


def document_pdf_on_event(*, event: OrderEvent) -> None:
    """The document `event` issued gets its PDF now, before the e-mail that attaches it."""
    document = event_document(event=event)
    if document is not None:
        document_pdf_stored(document=document)

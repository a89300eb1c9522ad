"""The PDF a document is handed out as (the account page, the API, the admin, the e-mail):
rendered once and stored, so that a customer downloading their facture again and again costs
a read, not a WeasyPrint run of a few hundred milliseconds.

It is rendered the first time it is asked for (usually the e-mail that attaches it, once the
claim that issued the document has committed and its numbering lock is long released), under
the document's row lock: eight downloads at once render it once. Writing the service period
into a document drops its stored PDF (billing.models.DocumentQuerySet.service_period_fix), so
the next one renders it with the period.
"""

from django.db import transaction

from billing.models import BillingDocument, DocumentPdf
from billing.rendering import document_pdf


def document_pdf_stored(*, document: BillingDocument) -> bytes:
    """The stored PDF of `document`, rendered and stored first if it has none."""
    stored = DocumentPdf.objects.filter(document=document).values_list("content", flat=True)
    content = stored.first()
    if content is None:
        with transaction.atomic():
            # Rendered from the row read under the lock: a service period written meanwhile
            # is in it. Locking reads the row: the document's triggers refuse updates only.
            locked = BillingDocument.objects.select_for_update().get(pk=document.pk)
            content = stored.first()
            if content is None:
                content = document_pdf(locked)
                DocumentPdf.objects.create(document=document, content=content)
    return bytes(content)

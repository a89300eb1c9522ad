import io

from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404
from django.shortcuts import render
from django.views.decorators.http import require_GET

from billing.models import BillingDocument
from billing.pdfs import document_pdf_stored
from billing.rendering import document_context
from billing.selectors import billing_document_for_user, billing_documents_for_user


def _own_document(request, number: str) -> BillingDocument:
    # Another customer's number answers exactly like a number that does not exist.
    document = billing_document_for_user(user=request.user, number=number)
    if document is None:
        raise Http404
    return document


def pdf_response(document: BillingDocument) -> FileResponse:
    """The stored PDF, streamed: nothing is rendered for a download."""
    return FileResponse(
        io.BytesIO(document_pdf_stored(document=document)),
        as_attachment=True,
        filename=document.filename,
        content_type="application/pdf",
    )


@login_required
@require_GET
def document_list(request):
    documents = billing_documents_for_user(user=request.user)
    return render(request, "billing/document_list.html", {"documents": documents})


@login_required
@require_GET
def document_detail(request, number: str):
    context = document_context(_own_document(request, number))
    return render(request, "billing/document_detail.html", context)


@login_required
@require_GET
def document_pdf_download(request, number: str):
    return pdf_response(_own_document(request, number))

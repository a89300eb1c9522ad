from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from billing.models import BillingDocument
from billing.rendering import document_context, document_pdf
from billing.selectors import billing_document_for_user, billing_documents_for_user


def _own_document(request, number: str) -> BillingDocument:
    # Another customer's number answers exactly like a number that does not exist.
    document = billing_document_for_user(user=request.user, number=number)
    if document is None:
        raise Http404
    return document


def pdf_response(document: BillingDocument) -> HttpResponse:
    response = HttpResponse(document_pdf(document), content_type="application/pdf")
    response["Content-Disposition"] = f'attachment; filename="{document.filename}"'
    return response


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

"""Invoices and credit notes: the legal documents of the account's paid and refunded orders
(the billing app), as on the account's invoices page."""

from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.reverse import reverse

from api.pagination import ApiPagination
from api.views.base import ApiView
from billing.models import BillingDocument, DocumentKind
from billing.selectors import billing_document_for_user, billing_documents_for_user
from billing.views import pdf_response

INVOICE_EXAMPLE = {
    "number": "F-2026-000042",
    "order": "LG-7KQ2-M9XD",
    "kind": "invoice",
    "issued_at": "2026-03-04T10:21:07+01:00",
    "credited_invoice": None,
    "total_excl_vat": "840.00",
    "vat": "168.00",
    "total": "1008.00",
    "currency": "EUR",
    "pdf_url": "https://locagpu.example/api/v1/invoices/F-2026-000042/pdf/",
}


class InvoiceOutputSerializer(serializers.Serializer):
    number = serializers.CharField(
        help_text="`F-<year>-<n>` for invoices, `AV-…` for credit notes."
    )
    order = serializers.CharField(source="order.number", help_text="The order's number.")
    kind = serializers.ChoiceField(choices=DocumentKind.choices)
    issued_at = serializers.DateTimeField()
    credited_invoice = serializers.CharField(
        source="credited_invoice.number",
        allow_null=True,
        default=None,
        help_text="For a credit note, the number of the invoice it cancels.",
    )
    total_excl_vat = serializers.DecimalField(max_digits=12, decimal_places=2)
    vat = serializers.DecimalField(source="vat_amount", max_digits=12, decimal_places=2)
    total = serializers.DecimalField(max_digits=12, decimal_places=2)
    currency = serializers.CharField()
    pdf_url = serializers.SerializerMethodField(help_text="The PDF with its Factur-X XML.")

    class Meta:
        ref_name = "Invoice"

    def get_pdf_url(self, document: BillingDocument) -> str:
        request = self.context["request"]
        return reverse("api:invoice-pdf", kwargs={"number": document.number}, request=request)


class InvoiceListApi(ApiView):
    pagination_class = ApiPagination

    @extend_schema(
        operation_id="invoices_list",
        summary="List your invoices and credit notes",
        description=(
            "Issued when an order (or an extension) is paid, a credit note when it is "
            "refunded; newest first, 20 per page. They never change once issued."
        ),
        responses=InvoiceOutputSerializer(many=True),
        examples=[OpenApiExample("A page of invoices", value=INVOICE_EXAMPLE, response_only=True)],
        tags=["invoices"],
    )
    def get(self, request):
        documents = billing_documents_for_user(user=request.user)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(documents, request, view=self)
        data = InvoiceOutputSerializer(page, many=True, context={"request": request}).data
        return paginator.get_paginated_response(data)


class InvoicePdfApi(ApiView):
    def perform_content_negotiation(self, request, force=False):
        # The PDF is the answer whatever `Accept` says; errors stay JSON like everywhere else.
        return super().perform_content_negotiation(request, force=True)

    @extend_schema(
        operation_id="invoices_pdf",
        summary="Download an invoice or credit note (PDF)",
        description=(
            "The PDF/A-3 document, with its Factur-X XML (profile BASIC) embedded for "
            "accounting software. Another account's number is a 404."
        ),
        responses={
            (200, "application/pdf"): OpenApiResponse(
                response=OpenApiTypes.BINARY, description="The PDF."
            )
        },
        tags=["invoices"],
    )
    def get(self, request, number: str):
        document = billing_document_for_user(user=request.user, number=number)
        if document is None:
            raise Http404
        return pdf_response(document)

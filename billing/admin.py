from django import forms
from django.contrib import admin
from django.http import HttpResponse
from django.template.response import TemplateResponse
from django.urls import path
from django.utils.translation import gettext_lazy as _

from billing.exports import documents_csv
from billing.models import BillingDocument
from billing.selectors import billing_documents_issued
from billing.views import pdf_response
from orders.hooks import PageSection
from orders.models import Order
from rental.admin import ReadOnlyAdmin


class ExportForm(forms.Form):
    start = forms.DateField(label=_("From"), widget=forms.DateInput(attrs={"type": "date"}))
    end = forms.DateField(label=_("To"), widget=forms.DateInput(attrs={"type": "date"}))

    def clean(self) -> dict:
        cleaned = super().clean() or {}
        start, end = cleaned.get("start"), cleaned.get("end")
        if start and end and start > end:
            raise forms.ValidationError(_("The period ends before it starts."))
        return cleaned


@admin.register(BillingDocument)
class BillingDocumentAdmin(ReadOnlyAdmin):
    """Read-only: an issued document is never changed nor deleted (a refund issues a credit
    note); staff read them, download their PDF and export a period for the accountant."""

    list_display = ["number", "kind", "issued_at", "order", "user", "total", "currency"]
    list_filter = ["kind", "vat_mode", "year"]
    search_fields = ["number", "order__number", "user__email"]
    date_hierarchy = "issued_at"
    list_select_related = ["order", "user"]
    change_list_template = "admin/billing/billingdocument/change_list.html"

    def get_urls(self):
        own = [
            path(
                "export/",
                self.admin_site.admin_view(self.export_view),
                name="billing_billingdocument_export",
            ),
            path(
                "<int:document_id>/pdf/",
                self.admin_site.admin_view(self.pdf_view),
                name="billing_billingdocument_pdf",
            ),
        ]
        return own + super().get_urls()

    def export_view(self, request):
        if not self.has_view_permission(request):
            return HttpResponse(status=403)
        form = ExportForm(request.GET or None)
        if form.is_valid():
            start, end = form.cleaned_data["start"], form.cleaned_data["end"]
            body = documents_csv(billing_documents_issued(start=start, end=end))
            response = HttpResponse(body, content_type="text/csv; charset=utf-8")
            filename = f"factures-{start:%Y%m%d}-{end:%Y%m%d}.csv"
            response["Content-Disposition"] = f'attachment; filename="{filename}"'
            return response
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "form": form,
            "title": _("Export invoices and credit notes (CSV)"),
        }
        status = 400 if form.is_bound else 200
        return TemplateResponse(
            request, "admin/billing/billingdocument/export.html", context, status=status
        )

    def pdf_view(self, request, document_id: int):
        if not self.has_view_permission(request):
            return HttpResponse(status=403)
        document = BillingDocument.objects.filter(pk=document_id).first()
        if document is None:
            return HttpResponse(status=404)
        return pdf_response(document)


def order_admin_billing_section(*, order: Order) -> PageSection:
    """The order's invoice and credit note on its admin page, each with its PDF."""
    return PageSection(
        template="billing/admin/_order_documents.html",
        context={"documents": BillingDocument.objects.filter(order=order).order_by("issued_at")},
    )

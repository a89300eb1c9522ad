"""Refunds in admin: what is owed to whom ("à rembourser : 12,50 USDC vers 0x… sur Base"),
and the action where staff paste the hash of the transaction they sent."""

from django.contrib import admin, messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.template.response import TemplateResponse
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from payments.queue import refund_queue_cases
from payments.refunds.forms import RefundTransactionForm
from payments.refunds.models import Refund
from payments.refunds.selectors import refund_to_send
from payments.refunds.services import refund_open, refund_tx_submit
from payments.services import PaymentError
from rental.admin import AppendOnlyAdmin, queue_filter


@admin.register(Refund)
class RefundAdmin(AppendOnlyAdmin):
    list_display = ["order", "to_refund", "status", "rejection", "tx_hash", "created_at"]
    list_filter = [queue_filter(refund_queue_cases), "status", "chain", "asset"]
    search_fields = ["order__number", "address", "tx_hash"]
    list_select_related = ["order", "asset", "chain"]
    actions = ["record_transaction"]
    readonly_fields = [f.name for f in Refund._meta.fields] + ["to_refund"]

    def has_add_permission(self, request):
        return False  # owed refunds come from the payments, never typed in

    @admin.display(description=_("to refund"))
    def to_refund(self, refund: Refund) -> str:
        return refund_to_send(refund)

    @admin.action(
        description=_("Record the refund transaction (paste its hash)"), permissions=["change"]
    )
    def record_transaction(self, request, queryset):
        if queryset.count() != 1:
            self.message_user(request, gettext("Choose one refund at a time."), messages.ERROR)
            return None
        # Opening it pins the address: what this page shows is what staff pay.
        refund = refund_open(refund=queryset.get())
        applied = "apply" in request.POST
        form = RefundTransactionForm(
            request.POST if applied else None, initial={"address": refund.address}
        )
        if form.is_valid():
            try:
                refund_tx_submit(
                    refund=refund,
                    tx_hash=form.cleaned_data["tx_hash"],
                    address=form.cleaned_data["address"],
                    staff_user=request.user,
                )
            except PaymentError as exc:
                form.add_error("tx_hash", exc.message)
            else:
                self.message_user(
                    request,
                    gettext("Transaction recorded: it is being checked on chain."),
                    messages.SUCCESS,
                )
                return None
        return TemplateResponse(
            request,
            "payments/admin/refund_transaction.html",
            {
                **self.admin_site.each_context(request),
                "title": gettext("Record the refund transaction"),
                "refund": refund,
                "to_refund": self.to_refund(refund),
                "form": form,
                "action_checkbox_name": ACTION_CHECKBOX_NAME,
                "opts": self.model._meta,
            },
        )

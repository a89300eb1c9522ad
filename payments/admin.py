from dataclasses import dataclass

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.template.response import TemplateResponse
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext_lazy

from orders.hooks import PageSection
from orders.models import Order
from payments.ledger import invoice_ledger
from payments.models import (
    Asset,
    Chain,
    Invoice,
    PaymentClaim,
    PriceFeed,
    Rate,
    ScanCursor,
    Transfer,
)
from payments.queue import (
    asset_queue_cases,
    claim_queue_cases,
    flag_label,
    invoice_queue_cases,
    invoice_status_label,
)
from payments.rates import RateRefused, rate_held_confirm, rate_manual_check, rate_set_manually

# Registers the refunds' admin (payments/refunds/admin.py) with the rest of payments.
from payments.refunds import admin as _refunds_admin  # noqa: F401
from payments.refunds.selectors import refund_to_send, refunds_with_facts
from payments.selectors import (
    TransferProgress,
    in_asset_units,
    invoices_with_progress,
    transfers_with_confirmations,
)
from payments.services import PaymentError, invoice_funds_lost_clear, invoice_mark_paid
from rental.admin import AppendOnlyAdmin, queue_filter


def _in_units(amount, asset: Asset) -> str:
    return f"{in_asset_units(amount, asset=asset)} {asset.symbol}"


@admin.register(Chain)
class ChainAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "chain_id",
        "finality_tag",
        "confirmations",
        "is_devnet",
        "is_active",
        "scanned_to",
    ]
    list_filter = ["is_active", "is_devnet"]

    @admin.display(description=_("scanned to block"))
    def scanned_to(self, chain):
        cursor = ScanCursor.objects.filter(chain=chain).first()
        return cursor.block_number if cursor else "—"


@admin.register(PriceFeed)
class PriceFeedAdmin(admin.ModelAdmin):
    list_display = ["pair", "chain", "role", "address", "decimals", "heartbeat_seconds"]
    list_filter = ["chain", "role"]


@admin.register(Asset)
class AssetAdmin(admin.ModelAdmin):
    list_display = [
        "slug",
        "symbol",
        "chain",
        "kind",
        "contract_address",
        "decimals",
        "price_feed",
        "is_active",
        "rate_refusal",
        "rate_held_display",
    ]
    list_filter = [queue_filter(asset_queue_cases), "chain", "kind", "is_active"]
    list_select_related = ["chain", "price_feed", "rate_held__asset"]
    readonly_fields = ["rate_refusal", "rate_checked_at", "rate_held_display"]
    actions = ["rate_held_confirm"]

    @admin.display(description=_("rate held"))
    def rate_held_display(self, asset: Asset) -> str:
        held = asset.rate_held
        return "—" if held is None else f"{held} ({held.reason})"

    @admin.action(description=_("Confirm the held rate"))
    def rate_held_confirm(self, request, queryset):
        # Staff checked the new price elsewhere: it prices invoices from now on.
        for asset in queryset:
            confirmed = rate_held_confirm(asset=asset, staff_user=request.user)
            if confirmed is None:
                self.message_user(
                    request,
                    _("%(asset)s: no rate held any more.") % {"asset": asset},
                    messages.WARNING,
                )
            else:
                self.message_user(request, _("Rate confirmed: %(rate)s.") % {"rate": confirmed})


class ManualRateForm(forms.ModelForm):
    class Meta:
        model = Rate
        fields = ["asset", "currency", "rate", "expires_at", "reason"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if "reason" in self.fields:  # absent on the read-only view of a saved rate
            self.fields["reason"].required = True

    def clean(self):
        super().clean()
        data = self.cleaned_data
        if not self.errors:
            try:
                rate_manual_check(
                    rate=data["rate"], reason=data["reason"], expires_at=data["expires_at"]
                )
            except RateRefused as exc:
                raise forms.ValidationError(str(exc)) from None
        return data


@admin.register(Rate)
class RateAdmin(admin.ModelAdmin):
    """Rates are history (invoices point to them): staff add manual ones, never edit any."""

    list_display = ["asset", "rate", "currency", "kind", "source", "fetched_at", "expires_at"]
    list_filter = ["kind", "asset", "currency"]
    date_hierarchy = "fetched_at"
    form = ManualRateForm

    def has_change_permission(self, request, obj=None):
        return False

    def save_model(self, request, obj, form, change):
        try:
            rate = rate_set_manually(
                asset=obj.asset,
                rate=obj.rate,
                currency=obj.currency,
                reason=obj.reason,
                expires_at=obj.expires_at,
                staff_user=request.user,
            )
        except RateRefused as exc:
            # The form checked the same rules a moment ago: only the clock can differ.
            self.message_user(request, str(exc), messages.ERROR)
            return
        obj.pk = rate.pk


class TransferInline(admin.TabularInline):
    model = Transfer
    extra = 0
    can_delete = False
    readonly_fields = (
        "tx_hash",
        "log_index",
        "block_number",
        "asset",
        "amount",
        "status",
        "disposition",
    )
    fields = readonly_fields

    def has_add_permission(self, request, obj=None):
        return False


class ReasonForm(forms.Form):
    reason = forms.CharField(
        label=_("Reason"),
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=_("Kept in the order's timeline with your name."),
    )


@admin.register(Invoice)
class InvoiceAdmin(AppendOnlyAdmin):
    list_display = ["order", "asset", "status_shown", "due", "received", "flag_list", "created_at"]
    list_filter = [queue_filter(invoice_queue_cases), "status", *Invoice.FLAGS, "asset"]
    search_fields = ["order__number", "deposit_address"]
    list_select_related = ["order", "asset"]
    inlines = [TransferInline]
    actions = ["mark_paid", "clear_funds_lost"]
    # Staff may tick `review` once they looked; the rest is the money trail.
    editable_after_save = ("review",)
    readonly_fields = ["refund_owed_display"]

    def has_add_permission(self, request):
        return False

    @admin.display(description=_("status"), ordering="status")
    def status_shown(self, invoice):
        return invoice_status_label(invoice)

    @admin.display(description=_("due"))
    def due(self, invoice):
        return _in_units(invoice.amount_due, invoice.asset)

    @admin.display(description=_("received"))
    def received(self, invoice):
        return _in_units(invoice.amount_received, invoice.asset)

    @admin.display(description=_("flags"))
    def flag_list(self, invoice):
        return ", ".join(flag_label(flag) for flag in invoice.flags) or "—"

    @admin.display(description=_("refund owed"))
    def refund_owed_display(self, invoice):
        owed = invoice_ledger(invoice=invoice).owed(invoice=invoice, order=invoice.order)
        return _in_units(owed, invoice.asset)

    @admin.action(description=_("Mark as paid (with a reason)"), permissions=["change"])
    def mark_paid(self, request, queryset):
        return self._with_reason(
            request,
            queryset,
            action="mark_paid",
            service=invoice_mark_paid,
            title=_("Mark as paid"),
            intro=_(
                "These orders will be marked paid by you, through the usual steps (confirming, "
                "then paid). The reason is kept in each order's timeline."
            ),
            done=ngettext_lazy(
                "%(count)d order marked paid.", "%(count)d orders marked paid.", "count"
            ),
        )

    @admin.action(description=_("Clear “funds lost” (with a reason)"), permissions=["change"])
    def clear_funds_lost(self, request, queryset):
        return self._with_reason(
            request,
            queryset,
            action="clear_funds_lost",
            service=invoice_funds_lost_clear,
            title=_("Clear “funds lost”"),
            intro=_(
                "The payment of these paid orders left the chain. Clear the flag once you have "
                "decided (paid again another way, written off...): provisioning may then start. "
                "The reason is kept in each order's timeline, which the customer sees."
            ),
            done=ngettext_lazy("%(count)d flag cleared.", "%(count)d flags cleared.", "count"),
        )

    def _with_reason(self, request, queryset, *, action, service, title, intro, done):
        """An action on invoices that staff confirm with a reason, on a page of its own."""
        form = ReasonForm(request.POST if "apply" in request.POST else None)
        if form.is_valid():
            count = 0
            for invoice in queryset.select_related("order"):
                try:
                    count += service(
                        invoice=invoice,
                        staff_user=request.user,
                        reason=form.cleaned_data["reason"],
                    )
                except PaymentError as exc:
                    self.message_user(request, f"{invoice.order}: {exc.message}", messages.ERROR)
            if count:
                self.message_user(request, done % {"count": count}, messages.SUCCESS)
            return None
        return TemplateResponse(
            request,
            "payments/admin/with_reason.html",
            {
                **self.admin_site.each_context(request),
                "title": title,
                "intro": intro,
                "action": action,
                "form": form,
                "invoices": queryset,
                "action_checkbox_name": ACTION_CHECKBOX_NAME,
                "opts": self.model._meta,
            },
        )


@admin.register(Transfer)
class TransferAdmin(AppendOnlyAdmin):
    list_display = ["tx_hash", "log_index", "chain", "asset", "amount", "status", "invoice"]
    list_filter = ["chain", "status", "disposition", "asset"]
    search_fields = ["tx_hash", "to_address", "from_address"]
    readonly_fields = [f.name for f in Transfer._meta.fields]

    def has_add_permission(self, request):
        return False


@admin.register(PaymentClaim)
class PaymentClaimAdmin(AppendOnlyAdmin):
    list_display = ["order", "user", "tx_hash", "created_at"]
    list_filter = [queue_filter(lambda: claim_queue_cases(now=timezone.now()))]
    search_fields = ["order__number", "tx_hash"]
    readonly_fields = ["order", "invoice", "user", "tx_hash", "created_at"]

    def has_add_permission(self, request):
        return False  # the customer's "I've paid", never typed in by staff


@admin.register(ScanCursor)
class ScanCursorAdmin(admin.ModelAdmin):
    list_display = [
        "chain",
        "block_number",
        "block_time",
        "head_block",
        "block_range",
        "updated_at",
    ]
    readonly_fields = [
        "chain",
        "block_number",
        "block_hash",
        "block_time",
        "head_block",
        "updated_at",
    ]


# --- The order's admin page: its payment records (orders.hooks, `order_admin_sections`) -----------


@dataclass(frozen=True)
class InvoiceRecords:
    invoice: Invoice
    due: str
    received: str
    flags: list[str]
    status: str  # in words
    transfers: list[tuple[TransferProgress, str]]  # with the amount in words


def order_admin_payment_section(*, order: Order) -> PageSection:
    """The order's invoices (flags in words), every transfer to them with its amount, hash
    (explorer link) and confirmations, its "I've paid" claims and its refunds."""
    invoices = [
        InvoiceRecords(
            invoice=invoice,
            due=_in_units(invoice.amount_due, invoice.asset),
            received=_in_units(invoice.amount_received, invoice.asset),
            flags=[flag_label(flag) for flag in invoice.flags],
            status=invoice_status_label(invoice),
            transfers=[
                (item, _in_units(item.transfer.amount, invoice.asset))
                for item in transfers_with_confirmations(invoice=invoice)
            ],
        )
        for invoice in invoices_with_progress()
        .filter(order=order)
        .select_related("order")
        .order_by("created_at")
    ]
    return PageSection(
        template="payments/admin/_order_payments.html",
        context={
            "invoices": invoices,
            "claims": PaymentClaim.objects.filter(order=order).order_by("created_at"),
            "refunds": [
                (refund, refund_to_send(refund))
                for refund in refunds_with_facts().filter(order=order)
            ],
        },
    )

"""The payment section's endpoints. Thin: look the order up, call a service, render.

What the section shows comes from payments.selectors.payment_progress, the reader the API and
webhooks use too; this module only adds what a page needs (display amounts, forms, polling).
"""

from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST
from eth_utils import to_checksum_address

from orders.hooks import PageSection
from orders.models import Order, OrderStatus
from orders.selectors import order_for_user_or_404
from orders.views import order_page
from payments.forms import AssetChoiceForm, PaymentClaimForm
from payments.models import Invoice
from payments.selectors import (
    PaymentProgress,
    in_asset_units,
    order_claim_watch,
    payment_progress,
)
from payments.services import (
    PaymentError,
    invoice_issue,
    payment_claim_rate_limited,
    payment_claim_record,
)

FINAL_STATUSES = {
    OrderStatus.PAID,
    OrderStatus.PROVISIONING,
    OrderStatus.ACTIVE,
    OrderStatus.COMPLETED,
    OrderStatus.CANCELLED,
    OrderStatus.REFUNDED,
}


def _transfer_rows(progress: PaymentProgress) -> list[dict]:
    return [
        {
            "transfer": row.transfer,
            "amount": in_asset_units(row.transfer.amount, asset=row.transfer.asset),
            "confirmations": row.confirmations,
            "needed": progress.required,
            "percent": int(row.confirmations * 100 / progress.required),
            "explorer": row.explorer_url,
        }
        for row in progress.transfers
    ]


def _instructions_version(order: Order, progress: PaymentProgress | None, payable: bool) -> str:
    """What the instructions part depends on, in a word: the page sends the version it shows
    with each poll and gets the part again only when this changed (a QR code is not free)."""
    if progress is None:
        return f"{order.status}-{int(payable)}"
    invoice = progress.invoice
    return f"{order.status}-{int(payable)}-{invoice.pk}-{invoice.status}-{int(progress.left)}"


def payment_status_context(*, order: Order, now=None) -> dict:
    """What the polled part of the payment section shows: transfers and their confirmations.

    No RPC and nothing the instructions alone need: this runs every few seconds per open page.
    """
    now = now or timezone.now()
    progress = payment_progress(order=order)
    invoice = progress.invoice if progress is not None else None
    payable = order.status == OrderStatus.AWAITING_PAYMENT and order.payment_deadline > now
    context: dict = {
        "order": order,
        "progress": progress,
        "invoice": invoice,
        "payable": payable,
        "transfers": [],
        # After "I've paid" with nothing seen yet: the address is watched, until when. A
        # transfer already seen (the progress has them all) says there is nothing to watch.
        "claim_watch": None
        if progress is not None and progress.transfers
        else order_claim_watch(order=order, now=now),
        "polling": order.status not in FINAL_STATUSES
        and not (invoice is None and not payable)
        and (invoice is None or now < invoice.monitor_until),
    }
    context["shown"] = _instructions_version(order, progress, payable)
    if progress is None:
        return context
    context.update(
        {
            "asset": progress.asset,
            "chain": progress.chain,
            "transfers": _transfer_rows(progress),
            "amount_left": in_asset_units(progress.left, asset=progress.asset),
            "waiting_for_money": progress.invoice.status == Invoice.Status.OPEN and payable,
        }
    )
    return context


def payment_section_context(*, order: Order, now=None, status: dict | None = None) -> dict:
    """Everything the payment section of the order page shows: the status above, plus the
    instructions (address, amount, payment request for the QR code) and the forms.
    `status`: payment_status_context(order=order, now=now), when the caller has it."""
    now = now or timezone.now()
    context = status or payment_status_context(order=order, now=now)
    progress, payable = context["progress"], context["payable"]
    can_issue = payable and not context["transfers"]
    context.update(
        {
            "can_issue": can_issue,
            # A cancelled or expired order that received nothing has nothing left to pay or see.
            "hidden": order.status in (OrderStatus.CANCELLED, OrderStatus.EXPIRED)
            and not context["transfers"],
            # Shown only where a currency may still be chosen (its offered assets: a query).
            "issue_form": AssetChoiceForm() if can_issue else None,
            "claim_form": PaymentClaimForm(),
            "deadline": order.payment_deadline,
            "seconds_left": max(int((order.payment_deadline - now).total_seconds()), 0),
        }
    )
    if progress is None:
        return context
    asset, invoice = progress.asset, progress.invoice
    context.update(
        {
            "deposit_address": to_checksum_address(invoice.deposit_address),
            "token_contract": ""
            if asset.is_native
            else to_checksum_address(asset.contract_address),
            "amount_due": in_asset_units(progress.due, asset=asset),
            # Seen counts as well: what is left to send already leaves it out.
            "amount_received": in_asset_units(progress.received + progress.pending, asset=asset),
            "partly_paid": 0 < progress.left < progress.due,
            "payment_uri": progress.uri,
            "confirmations_needed": progress.required,
            # Past the deadline, before or after the order expired: a payment may still come.
            "late_claims_possible": order.status
            in (OrderStatus.AWAITING_PAYMENT, OrderStatus.EXPIRED)
            and now < invoice.monitor_until,
        }
    )
    return context


# The section's name on the order page (orders.hooks, `order_page_sections`).
PAYMENT_SECTION = "payment"


def _payment_section(payment: dict) -> PageSection:
    return PageSection("payments/_payment_section.html", {"payment": payment})


def order_payment_section(*, order: Order) -> PageSection:
    """The payment section of the order page (named in settings.HOOKS)."""
    return _payment_section(payment_section_context(order=order))


def _is_htmx(request) -> bool:
    return request.headers.get("HX-Request") == "true"


def _back(order: Order):
    return redirect("orders:detail", number=order.number)


def _render_section(request, order: Order, *, status: int = 200, **forms):
    """The payment section alone for htmx, else the whole order page (it is the payment page)."""
    payment = payment_section_context(order=order)
    payment.update({name: form for name, form in forms.items() if form is not None})
    if _is_htmx(request):
        context = {"order": order, "payment": payment}
        return render(request, "payments/_payment_section.html", context, status=status)
    return order_page(
        request, order, status=status, given={PAYMENT_SECTION: _payment_section(payment)}
    )


@login_required
@require_GET
def payment_page(request, number: str):
    return _render_section(request, order_for_user_or_404(user=request.user, number=number))


@login_required
@require_POST
def payment_issue(request, number: str):
    order = order_for_user_or_404(user=request.user, number=number)
    form = AssetChoiceForm(request.POST)
    if form.is_valid():
        try:
            invoice_issue(order=order, asset=form.cleaned_data["asset"])
        except PaymentError as exc:
            form.add_error(None, exc.message)
    if not form.is_valid():
        return _render_section(request, order, status=400, issue_form=form)
    return _render_section(request, order) if _is_htmx(request) else _back(order)


@login_required
@require_POST
def payment_claim(request, number: str):
    order = order_for_user_or_404(user=request.user, number=number)
    form = PaymentClaimForm(request.POST)
    if payment_claim_rate_limited(order=order):
        form.is_valid()
        form.add_error(None, _("Too many presses in a short time: wait a minute and try again."))
        return _render_section(request, order, status=429, claim_form=form)
    if form.is_valid():
        try:
            payment_claim_record(
                order=order, user=request.user, tx_hash=form.cleaned_data["tx_hash"]
            )
        except PaymentError as exc:
            form.add_error("tx_hash", exc.message)
    if not form.is_valid():
        return _render_section(request, order, status=400, claim_form=form)
    if _is_htmx(request):
        return _render_section(request, order, claimed=True)
    return _back(order)


@login_required
@require_GET
def payment_status(request, number: str):
    # The poll shows no GPU nor environment; an extension's rental is read if shown.
    order = order_for_user_or_404(user=request.user, number=number, related=())
    now = timezone.now()
    payment = payment_status_context(order=order, now=now)
    # Money arrived, the window closed, the order was paid...: the instructions the page shows
    # no longer hold, so this answer brings them again (an out-of-band swap).
    changed = request.GET.get("shown") != payment["shown"]
    if changed:
        payment = payment_section_context(order=order, now=now, status=payment)
    context = {"order": order, "payment": payment, "refresh_instructions": changed}
    return render(request, "payments/_payment_status.html", context)

"""The payment section's endpoints. Thin: look the order up, call a service, render."""

from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from orders.models import Order
from orders.selectors import order_for_user_or_404, order_page_context
from payments.forms import AssetChoiceForm, PaymentClaimForm
from payments.selectors import payment_context, payment_progress
from payments.services import (
    PaymentError,
    invoice_issue,
    payment_claim_rate_limited,
    payment_claim_record,
)


def _is_htmx(request) -> bool:
    return request.headers.get("HX-Request") == "true"


def _back(order: Order):
    return redirect("orders:detail", number=order.number)


def _render_section(request, order: Order, *, status: int = 200, **forms):
    """The payment section alone for htmx, else the whole order page (it is the payment page)."""
    payment = payment_context(order=order)
    payment.update({name: form for name, form in forms.items() if form is not None})
    if _is_htmx(request):
        context = {"order": order, "payment": payment}
        return render(request, "payments/_payment_section.html", context, status=status)
    context = {**order_page_context(order=order), "payment": payment}
    return render(request, "orders/order_detail.html", context, status=status)


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
    order = order_for_user_or_404(user=request.user, number=number)
    context = {"order": order, "payment": payment_progress(order=order)}
    return render(
        request, "payments/_payment_status.html", {**context, "refresh_instructions": True}
    )

"""The refund section of the order page: shown only when a refund is owed (or was made).

Thin: look the order up, call a service, render. Named in settings.HOOKS for orders.hooks'
`order_page_sections`, next to the payment section.
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from orders.hooks import PageSection
from orders.models import Order, OrderEvent
from orders.selectors import order_for_user_or_404
from orders.views import order_page
from payments.refunds.forms import RefundAddressForm
from payments.refunds.selectors import (
    refund_address_changeable,
    refund_address_display,
    refund_amount_localized,
    refund_current,
)
from payments.refunds.services import refund_address_set
from payments.services import PaymentError

# The section's name on the order page (orders.hooks, `order_page_sections`).
REFUND_SECTION = "refund"
TEMPLATE = "payments/_refund_section.html"


def refund_section_context(*, order: Order, form: RefundAddressForm | None = None) -> dict:
    refund = refund_current(order=order)
    if refund is None:
        return {"refund": None}
    return {
        "refund": refund,
        "amount": refund_amount_localized(refund),
        "address": refund_address_display(refund),
        "explorer_url": refund.chain.explorer_link(refund.tx_hash) if refund.tx_hash else "",
        "form": form or (RefundAddressForm() if refund_address_changeable(refund) else None),
    }


def order_refund_section(*, order: Order) -> PageSection:
    return PageSection(TEMPLATE, {"refund_section": refund_section_context(order=order)})


@login_required
@require_POST
def refund_address(request, number: str):
    order = order_for_user_or_404(user=request.user, number=number)
    form = RefundAddressForm(request.POST)
    if form.is_valid():
        try:
            refund_address_set(
                order=order,
                address=form.cleaned_data["address"],
                confirmation=form.cleaned_data["confirmation"],
                user=request.user,
                actor=OrderEvent.Actor.CUSTOMER,
            )
        except PaymentError as exc:
            form.add_error("address" if exc.code == "address" else None, exc.message)
    if not form.is_valid():
        section = PageSection(
            TEMPLATE, {"refund_section": refund_section_context(order=order, form=form)}
        )
        return order_page(request, order, status=400, given={REFUND_SECTION: section})
    messages.success(request, _("Thank you: the refund will be sent to this address."))
    return redirect("orders:detail", number=order.number)

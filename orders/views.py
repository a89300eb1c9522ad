from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth import logout
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.selectors import user_email_verified
from orders import selectors
from orders.forms import ConfigureForm
from orders.hooks import PageSection, order_page_sections
from orders.models import Order, OrderEvent
from orders.services import OrderError, order_cancel, order_create, quote_build
from orders.stock import gpus_with_availability

# OrderError names service fields; the form calls the term `term` (it is also the query key).
FORM_FIELD = {
    "term_days": "term",
    "environment": "environment",
    "quantity": "quantity",
    "environment_details": "environment_details",
}


# What a first visit shows priced: one GPU, PyTorch, one week.
DEFAULT_CONFIGURATION = {"environment": "pytorch", "quantity": "1", "term": "7"}


def _gpu_or_404(slug: str):
    gpu = (
        gpus_with_availability()
        .prefetch_related("prices")
        .filter(slug=slug, is_active=True)
        .first()
    )
    if gpu is None:
        raise Http404
    return gpu


def _quote_for(form: ConfigureForm, gpu, *, details_required: bool):
    """The quote of a valid form, or None with the reason added to the form."""
    if not form.is_valid():
        return None
    data = form.cleaned_data
    try:
        return quote_build(
            gpu=gpu,
            environment=data["environment"],
            quantity=data["quantity"],
            term_days=data["term"],
            environment_details=data["environment_details"],
            available_units=gpu.available_units,
            largest_free_block=gpu.largest_free_block,
            details_required=details_required,
        )
    except OrderError as error:
        form.add_error(FORM_FIELD.get(error.field), error.message)
        return None


def configure(request, slug):
    gpu = _gpu_or_404(slug)
    if request.method == "POST":
        submitted = request.POST
    elif any(key in request.GET for key in ConfigureForm.base_fields):
        submitted = request.GET
    else:
        submitted = DEFAULT_CONFIGURATION
    form = ConfigureForm(
        submitted,
        available_units=gpu.available_units,
        daily_rates={price.term_days: price.daily_rate for price in gpu.prices.all()},
    )
    # Only ordering needs the custom environment's description; a price preview does not.
    quote = _quote_for(form, gpu, details_required=request.method == "POST")

    if request.method == "POST" and quote is not None:
        query = urlencode(
            {
                "environment": quote.environment.slug,
                "quantity": quote.quantity,
                "term": quote.term_days,
                "environment_details": form.cleaned_data["environment_details"],
            }
        )
        # Back to this very configuration after sign-up or login, to confirm it.
        back = f"{reverse('orders:configure', args=[gpu.slug])}?{query}"
        if not request.user.is_authenticated:
            messages.info(request, _("Create your account or log in to confirm this order."))
            return redirect(f"{reverse('account_signup')}?{urlencode({'next': back})}")
        if not user_email_verified(user=request.user):
            # Only accounts older than mandatory verification get here (logins now need it).
            logout(request)
            messages.info(request, _("Confirm your e-mail address to order: log in again."))
            return redirect(f"{reverse('account_login')}?{urlencode({'next': back})}")
        try:
            order = order_create(
                user=request.user,
                gpu=gpu,
                environment=quote.environment,
                quantity=quote.quantity,
                term_days=quote.term_days,
                environment_details=form.cleaned_data["environment_details"],
            )
        except OrderError as error:
            form.add_error(FORM_FIELD.get(error.field), error.message)
            quote = None
        else:
            messages.success(
                request,
                _("Order %(number)s saved. Choose how to pay below.") % {"number": order.number},
            )
            return redirect("orders:detail", number=order.number)

    context = {"gpu": gpu, "form": form, "quote": quote}
    if request.headers.get("HX-Request") and request.method == "GET":
        return render(request, "orders/_quote.html", context)
    return render(request, "orders/configure.html", context, status=200)


@login_required
def order_list(request):
    page = Paginator(selectors.orders_for_user(user=request.user), 20).get_page(
        request.GET.get("page")
    )
    return render(request, "orders/order_list.html", {"page": page})


def order_page(
    request, order: Order, *, status: int = 200, given: dict[str, PageSection] | None = None
):
    """The order page with the sections other apps add to it (orders.hooks); `given` replaces
    the registered section of that name (the app that handled a form, with its errors)."""
    context = {
        **selectors.order_page_context(order=order),
        "sections": order_page_sections(order=order, given=given),
    }
    return render(request, "orders/order_detail.html", context, status=status)


@login_required
def order_detail(request, number):
    return order_page(request, selectors.order_for_user_or_404(user=request.user, number=number))


@login_required
def order_status(request, number):
    """The live part of the order page (status, timeline, events), polled by htmx."""
    order = selectors.order_for_user_or_404(user=request.user, number=number)
    return render(request, "orders/_status.html", selectors.order_page_context(order=order))


@login_required
@require_POST
def order_cancel_view(request, number):
    order = selectors.order_for_user_or_404(user=request.user, number=number)
    try:
        cancelled = order_cancel(
            order=order, actor=OrderEvent.Actor.CUSTOMER, actor_user=request.user
        )
    except OrderError as error:
        messages.error(request, error.message)
    else:
        if cancelled:
            messages.success(
                request, _("Order %(number)s is cancelled.") % {"number": order.number}
            )
        else:
            messages.error(request, _("This order changed meanwhile; nothing was cancelled."))
    return redirect("orders:detail", number=order.number)

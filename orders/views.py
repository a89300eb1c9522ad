import secrets
from urllib.parse import quote as url_quote
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth import logout
from django.contrib.auth.decorators import login_required
from django.contrib.messages.storage.base import Message
from django.core.paginator import Paginator
from django.db.models import prefetch_related_objects
from django.http import Http404, JsonResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from accounts.selectors import ssh_keys_for_user, user_email_verified
from accounts.services import ssh_key_kept
from accounts.ssh_keys import SshKeyRefused
from catalog.legal import TERMS_OF_SALE
from catalog.models import Environment
from catalog.selectors import active_environments
from hosts.provisioning.keys import order_ssh_keys_set
from hosts.provisioning.services import order_access_late, order_is_automatic
from orders import selectors
from orders.consent import TermsAcceptance
from orders.extensions import (
    ExtensionPending,
    extension_create,
    extension_offer,
    extension_page_context,
    extension_refusal,
)
from orders.forms import ConfigureForm, ExtendForm, OrderKeysForm
from orders.hooks import PageSection, order_page_sections
from orders.journal import journal_data, journal_for_page, order_journal
from orders.models import Order, OrderEvent, OrderStatus
from orders.services import (
    OrderError,
    order_cancel,
    order_create,
    order_stop_early,
    quote_build,
)
from orders.stock import gpus_with_availability
from rental.context_processors import language_links

# OrderError names service fields; the form calls the term `term` (it is also the query key).
FORM_FIELD: dict[str | None, str] = {
    "term_days": "term",
    "environment": "environment",
    "quantity": "quantity",
    "environment_details": "environment_details",
    "ssh_keys": "ssh_keys",
    "accept_terms": "accept_terms",
}


# What a first visit shows priced: one GPU, PyTorch, one week.
DEFAULT_CONFIGURATION = {"environment": "pytorch", "quantity": "1", "term": "7"}
# The choices that make the configurator's URL; the description stays in the session
# (SESSION_DETAILS): it can be long and is nobody else's business.
URL_FIELDS = ("environment", "quantity", "term")
SESSION_DETAILS = "configurator_details"  # {gpu slug: description}
# The configuration a visitor ordered before having an account, placed once signed in.
SESSION_PENDING = "configurator_pending"


def _environment_chosen(data) -> Environment | None:
    """The offered environment the choices name, whose CUDA decides which hosts count."""
    slug = data.get("environment")
    return active_environments().filter(slug=slug).first() if isinstance(slug, str) else None


def _gpu_or_404(slug: str, *, environment: Environment | None):
    gpu = (
        gpus_with_availability(environment=environment)
        .prefetch_related("prices")
        .filter(slug=slug, is_active=True)
        .first()
    )
    if gpu is None:
        raise Http404
    return gpu


def _quote_for(form: ConfigureForm, gpu, *, details_required: bool):
    """The quote of the form's choices, or None with the reason added to the form. An
    unticked terms box stops the order, not the price: the price stays shown beside it."""
    form.is_valid()
    if any(field != "accept_terms" for field in form.errors):
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
            highest_cuda=gpu.machine_cuda_max,
            details_required=details_required,
        )
    except OrderError as error:
        form.add_error(FORM_FIELD.get(error.field), error.message)
        return None


def _configuration_url(gpu, data) -> str:
    """This configuration's address: Back, reload and the language switch come back to it."""
    query = urlencode([(key, data[key]) for key in URL_FIELDS if data.get(key)])
    return f"{reverse('orders:configure', args=[gpu.slug])}?{query}"


def _remember_details(request, gpu, details: str) -> None:
    remembered = request.session.get(SESSION_DETAILS, {})
    if remembered.get(gpu.slug, "") != details:
        request.session[SESSION_DETAILS] = {**remembered, gpu.slug: details}


def _configurator_form(request, gpu, data, *, ordering: bool) -> ConfigureForm:
    """`ordering`: the customer asks to order, so the terms of sale must be accepted."""
    return ConfigureForm(
        data,
        ordering=ordering,
        available_units=gpu.available_units,
        daily_rates={price.term_days: price.daily_rate for price in gpu.prices.all()},
        ssh_keys=ssh_keys_for_user(user=request.user) if request.user.is_authenticated else None,
        buyer=request.user,
    )


def _configurator_page(request, gpu, form, quote, *, similar_order=None):
    token = form.cleaned_data.get("form_token") if hasattr(form, "cleaned_data") else None
    context = {
        "gpu": gpu,
        "form": form,
        "quote": quote,
        # A page that was not sent yet gets a fresh token; a refused one keeps its own.
        "form_token": token or secrets.token_urlsafe(16),
        "similar_order": similar_order,
        "terms_version": TERMS_OF_SALE.version,
        "language_links": language_links(_configuration_url(gpu, form.data)),
        "back_here": url_quote(request.get_full_path()),
    }
    return render(request, "orders/configure.html", context)


def _place(
    request, gpu, form: ConfigureForm, quote, *, another: bool, terms: TermsAcceptance | None
):
    """Place the order of a valid, priced form once: its token finds an order already placed,
    and an unpaid order of the same configuration is offered back unless `another`. `terms`:
    the customer's acceptance of the terms of sale, when and where they ticked the box."""
    data = form.cleaned_data
    configuration = {
        "gpu": gpu,
        "environment": data["environment"],
        "quantity": data["quantity"],
        "term_days": data["term"],
        "environment_details": data["environment_details"],
    }
    token = data["form_token"]
    placed = token and selectors.order_placed_by_form(user=request.user, form_token=token)
    if placed:
        return redirect("orders:detail", number=placed.number)
    if not another:
        similar = selectors.unpaid_order_like(user=request.user, **configuration)
        if similar is not None:
            return _configurator_page(request, gpu, form, quote, similar_order=similar)
    refusal = _public_key_keep(request, data.get("public_key", ""))
    if refusal:
        form.add_error("public_key", refusal)
        return _configurator_page(request, gpu, form, None)
    # Keys ticked on the page; a configuration placed after sign-up, or with the key pasted
    # in the page (the account's first), takes all the account's keys.
    chosen = "ssh_keys" in data and not data.get("public_key")
    try:
        order = order_create(
            user=request.user,
            form_token=token,
            ssh_key_ids=[key.pk for key in data["ssh_keys"]] if chosen else None,
            terms=terms,
            **configuration,
        )
    except OrderError as error:
        field = FORM_FIELD.get(error.field)
        if field == "ssh_keys" and "public_key" in form.fields:
            field = "public_key"  # the account has no key to tick: the one to paste is asked
        form.add_error(field, error.message)
        if error.code == "form_used":
            form.cleaned_data.pop("form_token")  # the page sent again gets a token of its own
        return _configurator_page(request, gpu, form, None)
    messages.success(
        request, _("Order %(number)s saved. Choose how to pay below.") % {"number": order.number}
    )
    return redirect("orders:detail", number=order.number)


def _public_key_keep(request, public_key: str) -> str:
    """Add the key pasted in the configurator to the account; the reason when the account
    refuses it, else ""."""
    try:
        if public_key:
            ssh_key_kept(user=request.user, public_key=public_key)
    except SshKeyRefused as refusal:
        return refusal.message
    return ""


def _pend(request, gpu, form: ConfigureForm) -> None:
    """Keep what a visitor ordered for the moment they are signed in (place_pending)."""
    data = form.cleaned_data
    request.session[SESSION_PENDING] = {
        "gpu": gpu.slug,
        "environment": data["environment"].slug,
        "quantity": data["quantity"],
        "term": data["term"],
        "environment_details": data["environment_details"],
        "public_key": data.get("public_key", ""),
        "form_token": data["form_token"] or secrets.token_urlsafe(16),
        # Ticked on this very page: the order placed after sign-up records it as given here.
        "accept_terms": data["accept_terms"],
        "terms": TermsAcceptance.given_now(request).as_session(),
    }


def configure(request, slug):
    if request.method == "POST":
        data = request.POST
    else:
        chosen = any(key in request.GET for key in URL_FIELDS)
        data = request.GET.copy() if chosen else QueryDict(urlencode(DEFAULT_CONFIGURATION), True)
        if "environment_details" not in request.GET:
            remembered = request.session.get(SESSION_DETAILS, {}).get(slug, "")
            data["environment_details"] = remembered
    gpu = _gpu_or_404(slug, environment=_environment_chosen(data))
    form = _configurator_form(request, gpu, data, ordering=request.method == "POST")
    # Only ordering needs the custom environment's description; a price preview does not.
    quote = _quote_for(form, gpu, details_required=request.method == "POST")
    if "environment_details" in form.cleaned_data:
        _remember_details(request, gpu, form.cleaned_data["environment_details"])

    if request.headers.get("HX-Request") and request.method == "GET":
        url = _configuration_url(gpu, data)
        context = {"gpu": gpu, "form": form, "quote": quote, "language_links": language_links(url)}
        response = render(request, "orders/_quote_swap.html", context)
        response["HX-Replace-Url"] = url
        return response
    if request.method != "POST" or quote is None or form.errors:
        return _configurator_page(request, gpu, form, quote)

    if not request.user.is_authenticated:
        _pend(request, gpu, form)
        messages.info(request, _("Create your account or log in: your order is placed next."))
        next_query = urlencode({"next": reverse("orders:place_pending")})
        return redirect(f"{reverse('account_signup')}?{next_query}")
    if not user_email_verified(user=request.user):
        # Only accounts older than mandatory verification get here (logins now need it).
        logout(request)
        _pend(request, gpu, form)  # after logout, which empties the session
        messages.info(request, _("Confirm your e-mail address to order: log in again."))
        next_query = urlencode({"next": reverse("orders:place_pending")})
        return redirect(f"{reverse('account_login')}?{next_query}")
    return _place(
        request,
        gpu,
        form,
        quote,
        another=request.POST.get("another") == "1",
        terms=TermsAcceptance.given_now(request),
    )


@login_required
def place_pending(request):
    """Place what the customer ordered before signing up or logging in, on their way back.

    A GET that writes: only the configuration this very session sent by POST (CSRF-checked)
    is placed, once (its form token), so a link from elsewhere orders nothing.
    """
    pending = request.session.pop(SESSION_PENDING, None)
    if not pending:
        return redirect("orders:list")
    gpu = _gpu_or_404(pending.pop("gpu"), environment=_environment_chosen(pending))
    terms = TermsAcceptance.from_session(pending.pop("terms", None))
    # An account that had keys before logging in gets the pasted one too (its form has no
    # field for it): the order names all of them.
    _public_key_keep(request, pending.pop("public_key", ""))
    form = _configurator_form(request, gpu, pending, ordering=True)
    quote = _quote_for(form, gpu, details_required=True)
    if quote is None or form.errors:
        # Sold out or changed meanwhile: the configurator says why, every choice kept.
        return _configurator_page(request, gpu, form, quote)
    return _place(request, gpu, form, quote, another=False, terms=terms)


@login_required
def order_list(request):
    page = Paginator(selectors.orders_for_user(user=request.user), 20).get_page(
        request.GET.get("page")
    )
    return render(request, "orders/order_list.html", {"page": page})


# The order page offers to change the keys once paid (the API, as soon as it is placed).
KEYS_SHOWN = (OrderStatus.PAID, OrderStatus.PROVISIONING, OrderStatus.ACTIVE)
ACCESS_PENDING = (OrderStatus.PAID, OrderStatus.PROVISIONING)


def _order_live_context(order: Order, given: dict[str, PageSection] | None = None) -> dict:
    """The parts of the order page below and beside its status (orders/_live.html and
    _aside.html): the page shows them, and the status poll again after each event."""
    prefetch_related_objects([order], "ssh_keys")  # the form, the facts and the fingerprints
    return {
        **extension_page_context(order=order),
        "keys_form": OrderKeysForm(
            initial={"ssh_keys": list(order.ssh_keys.all())},
            ssh_keys=ssh_keys_for_user(user=order.user),
        )
        if order.status in KEYS_SHOWN and not order.is_extension
        else None,
        "sections": order_page_sections(order=order, given=given),
        "journal": journal_for_page(order=order),
    }


def _order_status_context(order: Order, events: list[OrderEvent] | None = None) -> dict:
    return {
        **selectors.order_page_context(order=order, events=events),
        # Machines set up without staff: the page says how long it usually takes.
        "access_automatic": order.status in ACCESS_PENDING and order_is_automatic(order=order),
        "access_late": order_access_late(order=order),
    }


def order_page(
    request, order: Order, *, status: int = 200, given: dict[str, PageSection] | None = None
):
    """The order page with the sections other apps add to it (orders.hooks); `given` replaces
    the registered section of that name (the app that handled a form, with its errors)."""
    context = {**_order_status_context(order), **_order_live_context(order, given)}
    return render(request, "orders/order_detail.html", context, status=status)


@login_required
def order_detail(request, number):
    return order_page(request, selectors.order_for_user_or_404(user=request.user, number=number))


@login_required
def order_status(request, number):
    """The live top of the order page (status, timeline), polled by htmx; its history and
    other parts only after an event."""
    # The events first: whether something happened since the page was drawn decides what the
    # order is read with. Nothing new (every open page, every 3 s): the order alone. Else its
    # other parts come along (swapped out of band), so payment, facture, access, « Prolonger »
    # and journal follow, with the GPU and environment they show. An extension's rental is
    # read when shown, not joined for every other order's polls.
    events = selectors.order_events_for_user(user=request.user, number=number)
    refresh = request.GET.get("seen") != selectors.order_live_marker(events=events)
    order = selectors.order_for_user_or_404(
        user=request.user, number=number, related=("gpu", "environment") if refresh else ()
    )
    context = _order_status_context(order, events)
    if refresh:
        context.update(_order_live_context(order), refresh=True)
    return render(request, "orders/_status_poll.html", context)


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


@login_required
@require_POST
def order_keys_view(request, number):
    """The keys the order's machines accept: ticked ones stay, a pasted one joins them."""
    order = selectors.order_for_user_or_404(user=request.user, number=number)
    form = OrderKeysForm(request.POST, ssh_keys=ssh_keys_for_user(user=request.user))
    if not form.is_valid():
        for errors in form.errors.values():
            messages.error(request, " ".join(str(error) for error in errors))
        return redirect("orders:detail", number=order.number)
    keys = [key.pk for key in form.cleaned_data["ssh_keys"]]
    public_key = form.cleaned_data["public_key"]
    try:
        if public_key:
            keys.append(ssh_key_kept(user=request.user, public_key=public_key).pk)
        changed = order_ssh_keys_set(
            order=order, user=request.user, ssh_key_ids=keys, actor=OrderEvent.Actor.CUSTOMER
        )
    except (OrderError, SshKeyRefused) as error:
        messages.error(request, error.message)
    else:
        if changed:
            messages.success(
                request, _("SSH keys saved: your machines accept them in a few seconds.")
            )
    return redirect("orders:detail", number=order.number)


@login_required
@require_http_methods(["GET", "POST"])
def order_stop_view(request, number):
    """Ending a rental early: a GET asks (and says nothing is refunded), the POST ends it."""
    order = selectors.order_for_user_or_404(user=request.user, number=number)
    if request.method != "POST":
        if order.status != OrderStatus.ACTIVE:
            messages.error(request, _("Only an active rental can be ended."))
            return redirect("orders:detail", number=order.number)
        return render(request, "orders/order_stop.html", {"order": order})
    try:
        stopped = order_stop_early(order=order, user=request.user)
    except OrderError as error:
        messages.error(request, error.message)
    else:
        if stopped:
            messages.success(
                request,
                _("Rental %(number)s has ended. There is no refund for the unused time.")
                % {"number": order.number},
            )
        else:
            messages.error(request, _("This rental changed meanwhile; it was not ended."))
    return redirect("orders:detail", number=order.number)


@login_required
def order_journal_json(request, number):
    """The experiment-journal card as a JSON file, for the owner of a paid order."""
    order = selectors.order_for_user_or_404(user=request.user, number=number)
    card = order_journal(order=order)
    if card is None:
        raise Http404
    response = JsonResponse(journal_data(card), json_dumps_params={"indent": 2})
    response["Content-Disposition"] = f'attachment; filename="{order.number}-journal.json"'
    return response


def _extension_refused(request, refusal: OrderError, *, back: str):
    """Where a refused "Prolonger" goes: an extension waiting for its payment is where the
    customer goes on (its page is where it is paid); else back to the rental, saying why."""
    if isinstance(refusal, ExtensionPending):
        # Asked again before a page showed the notice (tabs, Back, a double click): once.
        notice = Message(messages.INFO, str(refusal.message))
        if notice not in messages.get_messages(request):
            messages.add_message(request, notice.level, notice.message)
        return redirect("orders:detail", number=refusal.extension.number)
    messages.error(request, refusal.message)
    return redirect(back)


@login_required
@require_http_methods(["GET", "POST"])
def order_extend_view(request, number):
    """ "Prolonger": the GET shows the extension to confirm (its price, the days it adds, the
    terms of sale box); the POST, box ticked, makes it, then its own page to pay it."""
    rental = selectors.order_for_user_or_404(user=request.user, number=number)
    back = f"{reverse('orders:detail', args=[rental.number])}#prolonger"
    confirming = request.method == "POST"
    form = ExtendForm(request.POST if confirming else request.GET, confirming=confirming)
    form.is_valid()
    offer = "term_days" not in form.errors and extension_offer(
        rental=rental, term_days=form.cleaned_data["term_days"]
    )
    if not offer:
        messages.error(request, _("Choose a term of 3, 7 or 30 days."))
        return redirect(back)
    refusal = extension_refusal(rental=rental)
    if refusal is not None:
        return _extension_refused(request, refusal, back=back)
    if not confirming or form.errors:
        context = {
            "order": rental,
            "offer": offer,
            "form": form,
            # Not started yet: the term it will run, this extension included.
            "rental_days": selectors.order_rental_days(order=rental) + offer.term_days,
        }
        return render(
            request, "orders/order_extend.html", context, status=400 if form.errors else 200
        )
    try:
        extension = extension_create(
            rental=rental,
            user=request.user,
            term_days=offer.term_days,
            terms=TermsAcceptance.given_now(request),
        )
    except OrderError as error:  # changed since the check above: another tab, the API
        return _extension_refused(request, error, back=back)
    messages.success(
        request,
        _("Extension %(number)s saved. Choose how to pay below.") % {"number": extension.number},
    )
    return redirect("orders:detail", number=extension.number)

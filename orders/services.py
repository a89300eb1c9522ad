"""Writes on orders: quotes, creation, customer and staff actions, expiry and completion."""

from collections.abc import Collection
from contextlib import suppress
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop, ngettext_lazy

from accounts.models import SshKey, User
from catalog.images import cuda_supports, cuda_version, custom_environment_parse
from catalog.models import TERMS, Environment, GpuModel
from catalog.vat import VatSplit, price_split
from hosts.models import Host, SlotHold
from orders.ceiling import unpaid_ceiling_check
from orders.consent import TermsAcceptance, terms_in_force
from orders.errors import OrderError
from orders.extensions import rental_end, rental_shorten
from orders.hooks import (
    order_cancel_record,
    order_funds_received,
    order_may_expire,
    order_provisioning_hold,
    order_refund_record,
)
from orders.models import UNPAID_STATUSES, Order, OrderEvent, OrderStatus
from orders.selectors import daily_rate_for_term, order_public_keys
from orders.stock import gpus_with_availability, order_slots_take
from orders.transitions import order_event_record, order_transition

Actor = OrderEvent.Actor

MAX_QUANTITY = 64
MAX_ENVIRONMENT_DETAILS = 4000
_FORM_USED = _("This form was already used. Reload the page and order again.")
SSH_KEY_REQUIRED = _("Add an SSH key to your account: it is installed on the machines for you.")
BILLING_ADDRESS_REQUIRED = _(
    "A business invoice shows the buyer's address: add your billing address on your account "
    "page (My account), then order again."
)


@dataclass(frozen=True)
class Quote:
    gpu: GpuModel
    environment: Environment
    quantity: int
    term_days: int
    daily_rate: Decimal
    total: Decimal
    currency: str
    available_units: int
    # The most GPUs one machine can give now: a larger quantity spans machines.
    largest_free_block: int
    # The total split for the buyer who asked (a consumer's split when nobody is named).
    vat: VatSplit

    @property
    def spans_hosts(self) -> bool:
        return self.quantity > self.largest_free_block

    @property
    def days(self) -> int:
        return self.term_days


def _check_request(
    *,
    gpu: GpuModel,
    environment: Environment,
    quantity: int,
    term_days: int,
    details: str,
    details_required: bool = True,
) -> None:
    if not gpu.is_active:
        raise OrderError(_("This GPU is not on sale."), field="gpu", code="unknown_gpu")
    if not environment.is_active:
        raise OrderError(_("This environment is not offered."), field="environment")
    if term_days not in TERMS:
        raise OrderError(_("Choose a term of 3, 7 or 30 days."), field="term_days")
    if not 1 <= quantity <= MAX_QUANTITY:
        raise OrderError(
            _("Choose between 1 and %(max)d GPUs.") % {"max": MAX_QUANTITY}, field="quantity"
        )
    if details_required and environment.requires_details and not details.strip():
        raise OrderError(
            _("Give the image or the requirements file of your custom environment."),
            field="environment_details",
        )
    if len(details) > MAX_ENVIRONMENT_DETAILS:
        raise OrderError(
            _("Keep the description under %(max)d characters.") % {"max": MAX_ENVIRONMENT_DETAILS},
            field="environment_details",
        )
    # What the container starts from must be right before anything is held: a reference a
    # registry would refuse, or a line pip cannot read, would fail only once paid.
    if details_required and environment.requires_details:
        try:
            custom_environment_parse(details)
        except ValidationError as refusal:
            raise OrderError(
                refusal.messages[0], field="environment_details", code=str(refusal.code)
            ) from None


def _check_environment_runs(*, environment: Environment, highest_cuda: Decimal | None) -> None:
    """Refuse an environment that needs a newer CUDA than any machine of the model runs."""
    required = environment.cuda_required
    if not cuda_supports(highest_cuda, required):
        raise OrderError(
            _(
                "No machine of this model supports CUDA %(version)s, which this environment "
                "needs: choose another environment or another GPU."
            )
            % {"version": cuda_version(required)},
            field="environment",
            code="cuda_unsupported",
        )


def quote_build(
    *,
    gpu: GpuModel,
    environment: Environment,
    quantity: int,
    term_days: int,
    environment_details: str = "",
    available_units: int | None = None,
    largest_free_block: int | None = None,
    highest_cuda: Decimal | None = None,
    details_required: bool = True,
    buyer_vat_number: str = "",
) -> Quote:
    """The price of a configuration; the configurator page, the API and order_create share it.

    `available_units`, `largest_free_block` and `highest_cuda` (the `machine_cuda_max` of
    gpus_with_availability) are the stock the caller read for this environment; what is not
    given is read here.

    Raises OrderError for an impossible configuration, including more units than available
    and an environment no machine of the model can run.
    A price shown while the customer is still filling the form does not need the custom
    environment's description yet (`details_required=False`); an order does.
    """
    _check_request(
        gpu=gpu,
        environment=environment,
        quantity=quantity,
        term_days=term_days,
        details=environment_details,
        details_required=details_required,
    )
    daily_rate = daily_rate_for_term(gpu=gpu, term_days=term_days)
    needs_cuda = environment.cuda_required is not None
    if available_units is None or largest_free_block is None or (needs_cuda and not highest_cuda):
        # Annotated (mypy cannot see it), on the hosts that can run the environment.
        shown: Any = gpus_with_availability(environment=environment).get(pk=gpu.pk)
        if available_units is None:
            available_units = shown.available_units
        if largest_free_block is None:
            largest_free_block = shown.largest_free_block
        highest_cuda = shown.machine_cuda_max
    _check_environment_runs(environment=environment, highest_cuda=highest_cuda)
    if quantity > available_units:
        raise OrderError(
            ngettext_lazy(
                "Not enough units: %(available)d available right now.",
                "Not enough units: %(available)d available right now.",
                available_units,
            )
            % {"available": available_units},
            field="quantity",
            code="not_enough_units",
        )
    total = daily_rate * term_days * quantity
    return Quote(
        gpu=gpu,
        environment=environment,
        quantity=quantity,
        term_days=term_days,
        daily_rate=daily_rate,
        total=total,
        currency=settings.STORE_CURRENCY,
        available_units=available_units,
        largest_free_block=largest_free_block,
        vat=price_split(total=total, buyer_vat_number=buyer_vat_number),
    )


def order_keys_required(*, order: Order) -> bool:
    """Whether the order needs at least one SSH key before it is paid: some of its machines are
    set up automatically (an `ssh` host), with its keys, or the ORDERS_SSH_KEY_REQUIRED setting
    asks it of every order. Asked in order_create's transaction, once the slots are held."""
    if settings.ORDERS_SSH_KEY_REQUIRED:
        return True
    return SlotHold.objects.filter(
        order=order, released_at__isnull=True, host__provisioning=Host.Provisioning.SSH
    ).exists()


def order_ssh_keys_chosen(*, user: User, ssh_key_ids: Collection[int] | None) -> list[SshKey]:
    """The keys the order names (all the account's when None), locked until it is saved: a
    key deleted meanwhile is either named by the order or refused here, never half-linked."""
    owned = SshKey.objects.filter(user=user).select_for_update(no_key=True).order_by("pk")
    if ssh_key_ids is None:
        return list(owned)
    wanted = set(ssh_key_ids)
    keys = list(owned.filter(pk__in=wanted))
    if len(keys) != len(wanted):
        raise OrderError(
            _("Choose among the SSH keys of your account."),
            field="ssh_keys",
            code="unknown_ssh_key",
        )
    return keys


def order_create(
    *,
    user: User,
    gpu: GpuModel,
    environment: Environment,
    quantity: int,
    term_days: int,
    environment_details: str = "",
    ssh_key_ids: Collection[int] | None = None,
    actor: str = Actor.CUSTOMER,
    form_token: str = "",
    terms: TermsAcceptance | None = None,
) -> Order:
    """Store an order holding concrete slots until its payment deadline.

    The GPU row is locked while availability is re-checked and slots are chosen, so two buyers
    of the last unit are served one after the other and the second one is refused. The
    account's row is locked before it, so that its unpaid ceiling holds across GPU models.

    A `form_token` already used returns the order it placed: the same form sent twice is
    one order. The GPU lock serialises two sends of one form (they order the same GPU), so
    the second one sees the first one's order; the unique constraint is the backstop.

    The order names the SSH keys `ssh_key_ids` of the account, all of them by default.

    `terms` is the customer's acceptance of the terms of sale in force, stored on the order:
    without it, or for another version, the order is refused (field `accept_terms`).

    A business account (a company or a VAT number) without a billing address is refused
    (field `billing_address`): its facture must name where the buyer is.
    """
    accepted = terms_in_force(terms)
    with transaction.atomic():
        # The account first: its ceiling (orders.ceiling) counts orders of every GPU, which
        # the GPU's lock alone would let two requests for two models pass at once.
        User.objects.select_for_update(no_key=True).only("pk").get(pk=user.pk)
        locked_gpu = GpuModel.objects.select_for_update().get(pk=gpu.pk)
        if form_token:
            placed = Order.objects.filter(form_token=form_token).first()
            if placed is not None:
                if placed.user_id != user.pk:
                    raise OrderError(_FORM_USED, code="form_used")
                return placed
        if user.is_business and not user.billing_address.strip():
            raise OrderError(
                BILLING_ADDRESS_REQUIRED, field="billing_address", code="billing_address_required"
            )
        quote = quote_build(
            gpu=locked_gpu,
            environment=environment,
            quantity=quantity,
            term_days=term_days,
            environment_details=environment_details,
        )
        unpaid_ceiling_check(user=user, quantity=quantity)
        now = timezone.now()
        try:
            order = Order.objects.create_numbered(
                user=user,
                gpu=locked_gpu,
                environment=environment,
                environment_details=environment_details.strip(),
                quantity=quantity,
                term_days=term_days,
                daily_rate=quote.daily_rate,
                total=quote.total,
                currency=quote.currency,
                payment_deadline=now + settings.ORDER_PAYMENT_WINDOW,
                created_at=now,
                form_token=form_token,
                terms_version=accepted.version,
                terms_accepted_at=accepted.accepted_at,
                terms_ip_hash=accepted.ip_hash,
            )
        except IntegrityError:
            # The same form, sent at once for another GPU: a forged replay.
            raise OrderError(_FORM_USED, code="form_used") from None
        if not order_slots_take(order=order, gpu=locked_gpu):
            raise RuntimeError("Slots counted free under the GPU lock could not be held.")
        keys = order_ssh_keys_chosen(user=user, ssh_key_ids=ssh_key_ids)
        order.ssh_keys.set(keys)
        # Every key source counts (orders.hooks), the account's keys being one of them.
        if not keys and order_keys_required(order=order) and not order_public_keys(order=order):
            raise OrderError(SSH_KEY_REQUIRED, field="ssh_keys", code="ssh_key_required")
        order_event_record(
            order=order,
            kind=OrderEvent.Kind.STATUS,
            actor=actor,
            # The owner placed it, in the browser or through their API key.
            actor_user=user,
            data={"quantity": quantity, "term_days": term_days, "total": str(quote.total)},
            old_status="",
        )
    return order


def order_cancel(
    *, order: Order, actor: str, actor_user: User | None = None, reason: str = ""
) -> bool:
    """Cancel an order on which nothing was received; its units are free at once.

    The order's row lock (the first lock of the one lock order) is held from the check to the
    move: the watcher records transfers under it too, so a transfer is either seen here or
    lands on the cancelled order, where it is recorded against the closed invoice and flagged
    for staff, never credited elsewhere. Whether money arrived is payments' answer
    (orders.hooks), asked under that lock.
    """
    with transaction.atomic():
        locked = Order.objects.select_for_update().get(pk=order.pk)
        if locked.status not in (OrderStatus.AWAITING_PAYMENT, OrderStatus.EXPIRED):
            raise OrderError(_("Only an unpaid order can be cancelled."), code="not_cancellable")
        if order_funds_received(order=locked):
            raise OrderError(
                _("A payment has reached this order: it can no longer be cancelled. Contact us."),
                code="not_cancellable",
            )
        order.status = locked.status
        cancelled = order_transition(
            order=order, to=OrderStatus.CANCELLED, actor=actor, actor_user=actor_user, reason=reason
        )
        if cancelled:
            order_cancel_record(order=order)
        return cancelled


def orders_expire(*, now=None) -> int:
    """Expire the unpaid orders past their deadline (beat task). Returns how many.

    An order whose payment could still be unseen (the watcher has not read its chain past the
    deadline yet, orders.hooks) keeps its units and waits for a later run.
    """
    now = now or timezone.now()
    expired = 0
    due = Order.objects.filter(status=OrderStatus.AWAITING_PAYMENT, payment_deadline__lte=now).only(
        "pk", "status", "payment_deadline"
    )
    for order in due.iterator():
        if not order_may_expire(order=order, now=now):
            continue
        expired += order_transition(
            order=order,
            to=OrderStatus.EXPIRED,
            actor=Actor.SYSTEM,
            reason=gettext_noop("payment deadline passed"),
        )
    return expired


def orders_complete(*, now=None) -> int:
    """Complete every active rental whose term has ended (beat task). Returns how many.

    A rental with an extension still awaiting payment or confirming waits: money sent in time
    may still be on its way (the extension expires once the watcher has read past its deadline,
    the rental's end, and the next run completes the rental)."""
    now = now or timezone.now()
    completed = 0
    due = Order.objects.filter(status=OrderStatus.ACTIVE, ends_at__lte=now).exclude(
        extensions__status__in=UNPAID_STATUSES
    )
    for order in due.iterator():
        completed += order_transition(
            order=order,
            to=OrderStatus.COMPLETED,
            actor=Actor.SYSTEM,
            reason=gettext_noop("term ended"),
        )
    return completed


def order_provisioning_start(*, order: Order, actor_user: User) -> bool:
    """Staff start preparing the machines, unless a payment problem holds the order."""
    if order.is_extension:
        raise OrderError(_("An extension has no machines of its own."), code="is_extension")
    hold = order_provisioning_hold(order=order)
    if hold:
        raise OrderError(hold, code="on_hold")
    return order_transition(
        order=order, to=OrderStatus.PROVISIONING, actor=Actor.STAFF, actor_user=actor_user
    )


def order_activate(
    *, order: Order, actor_user: User, host: str, port: int | None, user: str, notes: str = ""
) -> bool:
    """Hand the machines over: access details become visible and the term (with the paid
    extensions' days) starts now."""
    if not host.strip():
        raise OrderError(_("Give the host the customer connects to."), field="access_host")
    now = timezone.now()
    with transaction.atomic():
        return order_transition(
            order=order,
            to=OrderStatus.ACTIVE,
            actor=Actor.STAFF,
            actor_user=actor_user,
            fields={
                "access_host": host.strip(),
                "access_port": port,
                "access_user": user.strip(),
                "access_notes": notes.strip(),
                "activated_at": now,
                "ends_at": rental_end(order=order, start=now),
            },
        )


def order_complete(*, order: Order, actor_user: User, reason: str = "") -> bool:
    return order_transition(
        order=order,
        to=OrderStatus.COMPLETED,
        actor=Actor.STAFF,
        actor_user=actor_user,
        reason=reason,
    )


def order_stop_early(*, order: Order, user: User) -> bool:
    """The customer ends their rental before its term: it completes now, its units are free
    (and whatever releases a completed rental's machines releases them), and nothing is
    refunded for the unused time.

    The order's row lock serialises this with staff and the beat ending it at the same time;
    the transition's conditional UPDATE lets only one of them complete it. Returns False when
    another got there first.
    """
    with transaction.atomic():
        locked = Order.objects.select_for_update().get(pk=order.pk)
        if locked.status != OrderStatus.ACTIVE:
            raise OrderError(_("Only an active rental can be ended."), code="not_active")
        now = timezone.now()
        order.status = locked.status
        return order_transition(
            order=order,
            to=OrderStatus.COMPLETED,
            actor=Actor.CUSTOMER,
            actor_user=user,
            reason=gettext_noop("stopped early by the customer"),
            data={
                "stopped_early": True,
                "planned_end": locked.ends_at and locked.ends_at.isoformat(),
            },
            fields={"ends_at": now},
        )


# An extension not paid yet: its rental's refund cancels it, so it can never be paid for days
# that will not come (money reaching it anyway is owed back in full).
PENDING_EXTENSION = (OrderStatus.AWAITING_PAYMENT, OrderStatus.EXPIRED)
REFUNDABLE = (OrderStatus.PAID, OrderStatus.PROVISIONING)


def _extension_cancel(*, extension: Order, actor_user: User) -> None:
    # Money reached it meanwhile (not cancellable): the settlement finds the rental gone and
    # owes it back.
    with suppress(OrderError):
        order_cancel(
            order=extension,
            actor=Actor.STAFF,
            actor_user=actor_user,
            reason=gettext_noop("its rental was refunded"),
        )


def order_refund(*, order: Order, actor_user: User, reason: str) -> bool:
    """Staff refund a paid order: it ends, and what it received is owed back (orders.hooks).

    A rental is refunded before its machines run (paid or provisioning): the extensions
    already paid for it would add days to nothing, so they are refunded with it. An extension
    refunded alone takes its days back from its rental (rental_shorten)."""
    if not reason.strip():
        raise OrderError(_("Give the reason for the refund."), field="reason")
    with transaction.atomic():
        # Extensions before their rental, as everywhere (orders.extensions): a refund of one
        # of them at the same time takes the same locks in the same order.
        extensions = (
            []
            if order.is_extension
            else list(
                Order.objects.select_for_update()
                .filter(extends=order, status__in=[OrderStatus.PAID, *PENDING_EXTENSION])
                .order_by("pk")
            )
        )
        paid_extensions = [each for each in extensions if each.status == OrderStatus.PAID]
        # The rental's row next (its extensions hold theirs already, so a payment settling one
        # of them waits there first): it cannot move before its pending extensions are gone.
        rental_status = Order.objects.select_for_update().values_list("status", flat=True)
        if rental_status.get(pk=order.pk) in REFUNDABLE:
            for extension in extensions:
                if extension.status in PENDING_EXTENSION:
                    _extension_cancel(extension=extension, actor_user=actor_user)
        refunded = order_transition(
            order=order,
            to=OrderStatus.REFUNDED,
            actor=Actor.STAFF,
            actor_user=actor_user,
            reason=reason.strip(),
        )
        if refunded:
            order_refund_record(order=order)
            if order.is_extension:
                rental_shorten(extension=order, actor_user=actor_user)
            for extension in paid_extensions:
                order_refund(order=extension, actor_user=actor_user, reason=reason)
    return refunded

"""Writes on orders: quotes, creation, customer and staff actions, expiry and completion."""

import secrets
from collections.abc import Collection
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop, ngettext_lazy

from accounts.models import SshKey, User
from catalog.legal import TERMS_OF_SALE
from catalog.models import TERMS, Environment, GpuModel
from catalog.pagecache import catalog_changed
from orders.consent import TermsAcceptance
from orders.hooks import (
    order_funds_received,
    order_may_expire,
    order_provisioning_hold,
    order_refund_record,
)
from orders.models import Order, OrderEvent, OrderStatus
from orders.stock import gpus_with_availability, order_slots_take
from orders.transitions import order_event_record, order_transition

Actor = OrderEvent.Actor

MAX_QUANTITY = 64
MAX_ENVIRONMENT_DETAILS = 4000
# Easy to read aloud: no 0/O, 1/I/L. 31^8 numbers, drawn at random (not sequential).
NUMBER_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
_FORM_USED = _("This form was already used. Reload the page and order again.")


class OrderError(Exception):
    """A request the store refuses, with a message for the customer and the field at fault."""

    def __init__(self, message, *, field: str | None = None, code: str = "invalid"):
        super().__init__(str(message))
        self.message, self.field, self.code = message, field, code


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
            _("Describe the image or the requirements of your custom environment."),
            field="environment_details",
        )
    if len(details) > MAX_ENVIRONMENT_DETAILS:
        raise OrderError(
            _("Keep the description under %(max)d characters.") % {"max": MAX_ENVIRONMENT_DETAILS},
            field="environment_details",
        )


def _daily_rate(*, gpu: GpuModel, term_days: int) -> Decimal:
    # gpu.prices: the configurator has them prefetched already; elsewhere, one query.
    for price in gpu.prices.all():
        if price.term_days == term_days:
            return price.daily_rate
    raise OrderError(_("This term is not available for this GPU."), field="term_days")


def quote_build(
    *,
    gpu: GpuModel,
    environment: Environment,
    quantity: int,
    term_days: int,
    environment_details: str = "",
    available_units: int | None = None,
    largest_free_block: int | None = None,
    details_required: bool = True,
) -> Quote:
    """The price of a configuration; the configurator page, the API and order_create share it.

    Raises OrderError for an impossible configuration, including more units than available.
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
    daily_rate = _daily_rate(gpu=gpu, term_days=term_days)
    if available_units is None or largest_free_block is None:
        shown: Any = gpus_with_availability().get(pk=gpu.pk)  # annotated: mypy cannot see it
        if available_units is None:
            available_units = shown.available_units
        if largest_free_block is None:
            largest_free_block = shown.largest_free_block
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
    return Quote(
        gpu=gpu,
        environment=environment,
        quantity=quantity,
        term_days=term_days,
        daily_rate=daily_rate,
        total=daily_rate * term_days * quantity,
        currency=settings.STORE_CURRENCY,
        available_units=available_units,
        largest_free_block=largest_free_block,
    )


def _new_number() -> str:
    body = "".join(secrets.choice(NUMBER_ALPHABET) for _ in range(8))
    return f"LG-{body[:4]}-{body[4:]}"


def order_keys_required(*, order: Order) -> bool:
    """Whether the order needs at least one SSH key before it is paid: its machines are set up
    automatically, with its keys. Asked once the order exists in order_create's transaction,
    so the answer may depend on the machines it holds; until hosts are modelled, the
    ORDERS_SSH_KEY_REQUIRED setting answers for every order."""
    return settings.ORDERS_SSH_KEY_REQUIRED


def _order_ssh_keys(*, user: User, ssh_key_ids: Collection[int] | None) -> list[SshKey]:
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


def _terms_in_force(terms: TermsAcceptance | None) -> TermsAcceptance:
    if terms is None:
        raise OrderError(
            _("Accept the terms of sale to order."),
            field="accept_terms",
            code="terms_not_accepted",
        )
    if terms.version != TERMS_OF_SALE.version:
        raise OrderError(
            _("The terms of sale have changed: read the new version and accept it to order."),
            field="accept_terms",
            code="terms_outdated",
        )
    return terms


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
    of the last unit are served one after the other and the second one is refused.

    A `form_token` already used returns the order it placed: the same form sent twice is
    one order. The GPU lock serialises two sends of one form (they order the same GPU), so
    the second one sees the first one's order; the unique constraint is the backstop.

    The order names the SSH keys `ssh_key_ids` of the account, all of them by default.

    `terms` is the customer's acceptance of the terms of sale in force, stored on the order:
    without it, or for another version, the order is refused (field `accept_terms`).
    """
    accepted = _terms_in_force(terms)
    with transaction.atomic():
        locked_gpu = GpuModel.objects.select_for_update().get(pk=gpu.pk)
        if form_token:
            placed = Order.objects.filter(form_token=form_token).first()
            if placed is not None:
                if placed.user_id != user.pk:
                    raise OrderError(_FORM_USED, code="form_used")
                return placed
        quote = quote_build(
            gpu=locked_gpu,
            environment=environment,
            quantity=quantity,
            term_days=term_days,
            environment_details=environment_details,
        )
        now = timezone.now()
        for _attempt in range(5):
            try:
                with transaction.atomic():
                    order = Order.objects.create(
                        number=_new_number(),
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
                break
            except IntegrityError:
                if form_token and Order.objects.filter(form_token=form_token).exists():
                    # The same form, sent at once for another GPU: a forged replay.
                    raise OrderError(_FORM_USED, code="form_used") from None
                continue  # the random number was taken: draw another
        else:
            raise RuntimeError("Could not draw a free order number.")
        if not order_slots_take(order=order, gpu=locked_gpu):
            raise RuntimeError("Slots counted free under the GPU lock could not be held.")
        keys = _order_ssh_keys(user=user, ssh_key_ids=ssh_key_ids)
        if not keys and order_keys_required(order=order):
            raise OrderError(
                _("Add an SSH key to your account: it is installed on the machines for you."),
                field="ssh_keys",
                code="ssh_key_required",
            )
        order.ssh_keys.set(keys)
        catalog_changed()  # its units are held from now on
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
        return order_transition(
            order=order, to=OrderStatus.CANCELLED, actor=actor, actor_user=actor_user, reason=reason
        )


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
    """Complete every active rental whose term has ended (beat task). Returns how many."""
    now = now or timezone.now()
    completed = 0
    for order in Order.objects.filter(status=OrderStatus.ACTIVE, ends_at__lte=now).iterator():
        completed += order_transition(
            order=order,
            to=OrderStatus.COMPLETED,
            actor=Actor.SYSTEM,
            reason=gettext_noop("term ended"),
        )
    return completed


def orders_warn_ending(*, now=None, notice: timedelta = timedelta(hours=24)) -> int:
    """Send the "ends in 24 hours" e-mail once per rental (beat task). Returns how many."""
    now = now or timezone.now()
    warned = 0
    candidates = Order.objects.filter(
        status=OrderStatus.ACTIVE, ends_at__lte=now + notice, ending_notice_sent_at__isnull=True
    )
    for order in candidates.iterator():
        with transaction.atomic():
            claimed = Order.objects.filter(pk=order.pk, ending_notice_sent_at__isnull=True).update(
                ending_notice_sent_at=now
            )
            if claimed:
                order_event_record(
                    order=order,
                    kind=OrderEvent.Kind.NOTE,
                    actor=Actor.SYSTEM,
                    reason=gettext_noop("rental ends within 24 hours"),
                    data={"notice": "ending_soon"},
                )
                warned += 1
    return warned


def order_provisioning_start(*, order: Order, actor_user: User) -> bool:
    """Staff start preparing the machines, unless a payment problem holds the order."""
    hold = order_provisioning_hold(order=order)
    if hold:
        raise OrderError(hold, code="on_hold")
    return order_transition(
        order=order, to=OrderStatus.PROVISIONING, actor=Actor.STAFF, actor_user=actor_user
    )


def order_activate(
    *, order: Order, actor_user: User, host: str, port: int | None, user: str, notes: str = ""
) -> bool:
    """Hand the machines over: access details become visible and the term starts now."""
    if not host.strip():
        raise OrderError(_("Give the host the customer connects to."), field="access_host")
    now = timezone.now()
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
            "ends_at": now + timedelta(days=order.term_days),
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


def order_refund(*, order: Order, actor_user: User, reason: str) -> bool:
    """Staff refund a paid order: it ends, and what it received is owed back (orders.hooks)."""
    if not reason.strip():
        raise OrderError(_("Give the reason for the refund."), field="reason")
    with transaction.atomic():
        refunded = order_transition(
            order=order,
            to=OrderStatus.REFUNDED,
            actor=Actor.STAFF,
            actor_user=actor_user,
            reason=reason.strip(),
        )
        if refunded:
            order_refund_record(order=order)
    return refunded

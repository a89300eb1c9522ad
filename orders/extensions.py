"""Extensions ("Prolonger"): more days for a paid rental, paid like an order.

An extension is an Order of its own (`extends` names the rental) with its own number, invoices,
watcher and flags. It holds no slots: the rental's stay held. Paid before the rental ends, it
moves the rental's end (or adds to the term a rental not started yet runs); not paid by then,
it expires and the money that comes late is owed back.

Lock order: the extension first (and its invoices, held by the payment's caller), then the
rental's row. Creating one locks the rental alone; refunding a rental locks its paid
extensions before it (orders.services.order_refund); nothing locks a rental then an extension.
"""

from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop

from accounts.models import User
from catalog.models import TERMS
from orders.consent import TermsAcceptance, terms_in_force
from orders.errors import OrderError, UnitsGone
from orders.models import (
    EXTENDABLE_STATUSES,
    UNPAID_STATUSES,
    Order,
    OrderEvent,
    OrderStatus,
)
from orders.selectors import (
    daily_rate_for_term,
    order_rental_days,
    rental_extensions,
    rental_unpaid_extension,
)
from orders.transitions import order_event_record, order_transition

S = OrderStatus
Actor = OrderEvent.Actor
# An order in these statuses was never paid, so never extended.
NEVER_PAID = (S.AWAITING_PAYMENT, S.CONFIRMING, S.EXPIRED, S.CANCELLED)
# Too close to the end for a payment to be seen in time.
MIN_TIME_LEFT = timedelta(minutes=15)
# The note a refunded extension leaves on its running rental (rental_shorten).
SHORTENED = "shortened"


class ExtensionLapsed(UnitsGone):
    """Money for an extension that expired, or whose rental is no longer running."""

    reason = gettext_noop("late payment for an extension: the rental has ended")


class ExtensionPending(OrderError):
    """The rental already has an extension waiting for its payment (`extension`)."""

    def __init__(self, extension: Order):
        super().__init__(
            _("Extension %(number)s is waiting for its payment: pay it or let it expire first.")
            % {"number": extension.number},
            code="extension_pending",
        )
        self.extension = extension


@dataclass(frozen=True)
class ExtensionOffer:
    """One term the customer may add, priced at today's rate."""

    term_days: int
    daily_rate: Decimal
    total: Decimal
    currency: str
    # The rental's end now and once this extension is paid; None while it has not started.
    end: datetime | None
    new_end: datetime | None


def extension_offers(*, rental: Order) -> list[ExtensionOffer]:
    """The 3, 7 and 30 days terms for `rental`, priced (the terms its GPU is sold for)."""
    offers = []
    for term_days in TERMS:
        try:
            rate = daily_rate_for_term(gpu=rental.gpu, term_days=term_days)
        except OrderError:
            continue
        offers.append(
            ExtensionOffer(
                term_days=term_days,
                daily_rate=rate,
                total=rate * term_days * rental.quantity,
                currency=rental.currency,
                end=rental.ends_at,
                new_end=rental.ends_at and rental.ends_at + timedelta(days=term_days),
            )
        )
    return offers


def extension_offer(*, rental: Order, term_days: int) -> ExtensionOffer | None:
    """The offer of `term_days` for `rental`, None when its GPU is not sold for that term."""
    return next(
        (each for each in extension_offers(rental=rental) if each.term_days == term_days), None
    )


def extension_refusal(*, rental: Order, now: datetime | None = None) -> OrderError | None:
    """Why `rental` cannot be extended now, or None. ExtensionPending names the extension
    waiting for its payment, so that the page can link to it."""
    now = now or timezone.now()
    if rental.is_extension:
        return OrderError(
            _("An extension cannot be extended: extend the rental itself."), code="is_extension"
        )
    if rental.status not in EXTENDABLE_STATUSES:
        return OrderError(
            _("Only a paid, provisioning or active rental can be extended."),
            code="not_extendable",
        )
    if rental.ends_at is not None and rental.ends_at - now < MIN_TIME_LEFT:
        return OrderError(
            _("This rental ends in less than 15 minutes: it can no longer be extended."),
            code="ends_soon",
        )
    pending = rental_unpaid_extension(rental=rental)
    return None if pending is None else ExtensionPending(pending)


def extension_create(
    *,
    rental: Order,
    user: User,
    term_days: int,
    terms: TermsAcceptance | None,
    actor: str = Actor.CUSTOMER,
) -> Order:
    """An extension of `term_days` for `user`'s `rental`, awaiting payment, bought under the
    terms of sale `terms` accepts (refused without them, field `accept_terms`, as an order).

    The rental's row is locked while the refusals are checked and the extension is stored: two
    requests at once make one extension, the second is refused as pending. Its deadline is the
    payment window, cut at the rental's end: paid later, it would extend nothing.
    """
    if rental.user_id != user.pk:
        raise OrderError(_("Order not found."), code="not_found")
    if term_days not in TERMS:
        raise OrderError(_("Choose a term of 3, 7 or 30 days."), field="term_days")
    accepted = terms_in_force(terms)
    with transaction.atomic():
        # The rental's row alone: its GPU's would hold back every buyer of that model, and is
        # locked after the order on every path (docs/ARCHITECTURE.md, Locks).
        locked = (
            Order.objects.select_for_update(of=("self",)).select_related("gpu").get(pk=rental.pk)
        )
        now = timezone.now()
        refusal = extension_refusal(rental=locked, now=now)
        if refusal is not None:
            raise refusal
        rate = daily_rate_for_term(gpu=locked.gpu, term_days=term_days)
        deadline = now + settings.ORDER_PAYMENT_WINDOW
        if locked.ends_at is not None:
            deadline = min(deadline, locked.ends_at)
        total = rate * term_days * locked.quantity
        extension = Order.objects.create_numbered(
            extends=locked,
            user=locked.user,
            gpu=locked.gpu,
            environment_id=locked.environment_id,
            environment_details=locked.environment_details,
            quantity=locked.quantity,
            term_days=term_days,
            daily_rate=rate,
            total=total,
            currency=locked.currency,
            payment_deadline=deadline,
            created_at=now,
            terms_version=accepted.version,
            terms_accepted_at=accepted.accepted_at,
            terms_ip_hash=accepted.ip_hash,
        )
        order_event_record(
            order=extension,
            kind=OrderEvent.Kind.STATUS,
            actor=actor,
            actor_user=user,
            data={"extends": locked.number, "term_days": term_days, "total": str(total)},
            old_status="",
        )
    return extension


def extension_page_context(*, order: Order) -> dict:
    """What the order page shows about extensions: for a rental, its extensions and (while it
    may be extended) the priced terms or why not; for an extension, nothing more than itself."""
    if order.is_extension or order.status in NEVER_PAID:
        return {}  # an order never paid has no extensions: no query for the unpaid page
    extensions = rental_extensions(rental=order)
    refusal = extension_refusal(rental=order)
    offerable = order.status in EXTENDABLE_STATUSES
    return {
        "extensions": extensions,
        # The days paid extensions add to the term (the configuration shows both).
        "extended_days": sum(each.term_days for each in extensions if each.status == S.PAID),
        "extension_offers": extension_offers(rental=order) if offerable and not refusal else [],
        "extension_refusal": refusal if offerable else None,
        "extendable": offerable,
    }


def _rental_id(extension: Order) -> int:
    assert extension.extends_id is not None, "not an extension"
    return extension.extends_id


def rental_extendable(*, extension: Order) -> bool:
    """Whether the rental `extension` extends still runs (an invoice may still be issued)."""
    return Order.objects.filter(pk=_rental_id(extension), status__in=EXTENDABLE_STATUSES).exists()


def rental_end(*, order: Order, start: datetime) -> datetime:
    """When the rental `order` starting at `start` ends: its term and its paid extensions'.

    Locks the rental's row (inside the caller's transaction): an extension being paid meanwhile
    either committed before (counted here) or waits and finds the rental active (then moves
    its end itself); its days are never lost between the two.
    """
    locked = Order.objects.select_for_update().get(pk=order.pk)
    return start + timedelta(days=order_rental_days(order=locked))


def extension_paying_transition(
    *,
    extension: Order,
    to: str,
    actor: str,
    actor_user: User | None = None,
    reason: str = "",
    data: dict[str, Any] | None = None,
) -> bool:
    """Move `extension` to confirming or paid while its rental runs; once paid, the rental's
    end moves by its days in the same transaction (same slots, same access).

    Raises ExtensionLapsed when the extension expired or the rental no longer runs: the money
    received is owed back. Returns order_transition's answer.
    """
    with transaction.atomic():
        rental = Order.objects.select_for_update().get(pk=_rental_id(extension))
        if extension.status not in UNPAID_STATUSES or rental.status not in EXTENDABLE_STATUSES:
            raise ExtensionLapsed(extension)
        moved = order_transition(
            order=extension, to=to, actor=actor, actor_user=actor_user, reason=reason, data=data
        )
        if moved and to == S.PAID:
            _rental_extend(rental=rental, extension=extension, actor=actor, actor_user=actor_user)
        return moved


def _rental_extend(*, rental: Order, extension: Order, actor: str, actor_user: User | None):
    days = timedelta(days=extension.term_days)
    old_end = rental.ends_at if rental.status == S.ACTIVE else None
    if old_end is not None:
        _rental_end_move(rental=rental, end=old_end + days)
    # Not active yet: activation counts the paid extensions' days (rental_end).
    order_event_record(
        order=rental,
        kind=OrderEvent.Kind.EXTENDED,
        actor=actor,
        actor_user=actor_user,
        reason=gettext_noop("rental extended"),
        data={
            "extension": extension.number,
            "days": extension.term_days,
            "old_end": old_end and old_end.isoformat(),
            "new_end": old_end and (old_end + days).isoformat(),
        },
    )


def _rental_end_move(*, rental: Order, end: datetime) -> None:
    """The running rental (locked by the caller) ends at `end`; its reminders start again
    from there."""
    Order.objects.filter(pk=rental.pk).update(ends_at=end, ending_notice_hours=None)
    rental.ends_at, rental.ending_notice_hours = end, None


def rental_shorten(*, extension: Order, actor_user: User | None) -> None:
    """Take the days of `extension`, just refunded, back from its rental while it runs: the
    end moves back by them, never before now (the beat then completes the rental). A rental
    not active yet counts its paid extensions only when it starts (rental_end): nothing moves.

    Called with the extension locked (its refund); locks the rental after it."""
    rental = Order.objects.select_for_update().get(pk=_rental_id(extension))
    if rental.status != S.ACTIVE or rental.ends_at is None:
        return
    old_end = rental.ends_at
    new_end = max(old_end - timedelta(days=extension.term_days), timezone.now())
    _rental_end_move(rental=rental, end=new_end)
    order_event_record(
        order=rental,
        kind=OrderEvent.Kind.NOTE,
        actor=Actor.STAFF,
        actor_user=actor_user,
        reason=gettext_noop("extension refunded: the rental ends earlier"),
        data={
            "notice": SHORTENED,  # the customer's e-mail (orders.notifications)
            "extension": extension.number,
            "days": -extension.term_days,
            "old_end": old_end.isoformat(),
            "new_end": new_end.isoformat(),
        },
    )

"""The order state machine: the only code that changes `Order.status`."""

from typing import Any

from django.db import transaction
from django.utils import timezone

from accounts.models import User
from hosts.slots import slots_release
from orders.models import ALLOWED_TRANSITIONS, HOLDING_STATUSES, Order, OrderEvent, OrderStatus
from rental.celery import enqueue_after_commit

Actor = OrderEvent.Actor
# An extension stops at paid: it has no machines of its own, its rental has them.
RENTAL_ONLY = frozenset({OrderStatus.PROVISIONING, OrderStatus.ACTIVE})


class TransitionNotAllowed(Exception):
    """The transition is not in ALLOWED_TRANSITIONS."""

    def __init__(self, old: str, new: str):
        super().__init__(f"An order cannot go from {old!r} to {new!r}.")
        self.old, self.new = old, new


def order_event_record(
    *,
    order: Order,
    kind: str,
    actor: str,
    actor_user: User | None = None,
    reason: str = "",
    data: dict[str, Any] | None = None,
    old_status: str | None = None,
) -> OrderEvent:
    """A timeline entry that is not a transition: a payment claim, a transfer seen, or the
    order's first status (then `old_status=""`)."""
    event = OrderEvent.objects.create(
        order=order,
        kind=kind,
        old_status=order.status if old_status is None else old_status,
        new_status=order.status,
        actor=actor,
        actor_user=actor_user,
        reason=reason,
        data=data or {},
    )
    _dispatch_after_commit(event)
    return event


# What a transition writes itself: `fields` may not name them.
TRANSITION_COLUMNS = frozenset({"status", "updated_at"})


def order_transition(
    *,
    order: Order,
    to: str,
    actor: str,
    actor_user: User | None = None,
    reason: str = "",
    data: dict[str, Any] | None = None,
    fields: dict[str, Any] | None = None,
) -> bool:
    """Move `order` to `to` if the table allows it and nobody else moved it first.

    Returns False when the order is no longer in the status read (another worker got there
    first): nothing is written then. Raises TransitionNotAllowed for a move outside the table.
    `fields` are other columns written in the same UPDATE (access details, end date...); one
    that names a column the transition writes itself raises ValueError.
    """
    overwritten = TRANSITION_COLUMNS & set(fields or {})
    if overwritten:
        raise ValueError(f"order_transition writes {sorted(overwritten)} itself")
    old = order.status
    if to not in ALLOWED_TRANSITIONS[OrderStatus(old)] or (
        order.extends_id is not None and to in RENTAL_ONLY
    ):
        raise TransitionNotAllowed(old, to)
    now = timezone.now()
    changes = {"status": to, "updated_at": now, **(fields or {})}
    with transaction.atomic():
        updated = Order.objects.filter(pk=order.pk, status=old).update(**changes)
        if updated != 1:
            return False
        if old in HOLDING_STATUSES and to not in HOLDING_STATUSES:
            # Expiry, cancellation, completion (early stop included), refund: the slots are
            # free for the next buyer as this transaction commits, never before.
            slots_release(order=order)
        event = OrderEvent.objects.create(
            order=order,
            kind=OrderEvent.Kind.STATUS,
            old_status=old,
            new_status=to,
            actor=actor,
            actor_user=actor_user,
            reason=reason,
            data=data or {},
            created_at=now,
        )
        for name, value in changes.items():
            setattr(order, name, value)
        _dispatch_after_commit(event)
    return True


def _dispatch_after_commit(event: OrderEvent) -> None:
    # The one publication of the event: its channels subscribe in orders.events.
    enqueue_after_commit("orders.tasks.order_event_dispatch_task", event.pk)

"""Reminders that a rental is about to end, offering the extension: at 72 h, 24 h and 1 h
before `ends_at`, each at most once per end date.

The beat task runs every minute (rental/settings, CELERY_BEAT_SCHEDULE), so even the 1 h
reminder leaves with most of its hour to go.
"""

from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import ngettext, override

from orders.models import Order, OrderEvent, OrderStatus
from orders.transitions import order_event_record

# The one place that knows the thresholds, most distant first.
ENDING_REMINDERS_HOURS = (72, 24, 1)
# The note event's data: {"notice": ENDING_SOON, "hours": <threshold>}.
ENDING_SOON = "ending_soon"


def ending_reminder_text(hours: int) -> str:
    """The timeline's line for a reminder, in the active language."""
    return ngettext(
        "rental ends within %(hours)d hour", "rental ends within %(hours)d hours", hours
    ) % {"hours": hours}


def ending_reminder_due(*, order: Order, now: datetime) -> int | None:
    """The most urgent reminder the rental is owed at `now`, in hours, or None.

    Only the most urgent threshold reached counts: a rental 30 minutes from its end that was
    sent nothing gets the 1 h reminder alone, not three. A threshold the rental was already
    past when it started is skipped: a 3-day rental gets no "72 hours left" the moment it
    starts.
    """
    if order.ends_at is None or order.ends_at <= now:
        return None
    left = order.ends_at - now
    reached = [hours for hours in ENDING_REMINDERS_HOURS if left <= timedelta(hours=hours)]
    if not reached:
        return None
    hours = min(reached)
    sent = order.ending_notice_hours
    if sent is not None and sent <= hours:
        return None
    if order.activated_at and order.ends_at - order.activated_at <= timedelta(hours=hours):
        return None
    return hours


def _reminder_send(*, order: Order, hours: int) -> bool:
    """Claim the reminder and record its note event (the e-mail follows it after commit).

    The conditional UPDATE is the claim: of two beats at once, one sends. The end date is part
    of it, so a reminder computed for an end an extension has just moved is not sent.
    """
    with transaction.atomic():
        claimed = (
            Order.objects.filter(pk=order.pk, status=OrderStatus.ACTIVE, ends_at=order.ends_at)
            .filter(Q(ending_notice_hours__isnull=True) | Q(ending_notice_hours__gt=hours))
            .update(ending_notice_hours=hours)
        )
        if not claimed:
            return False
        with override("en"):  # stored in English, as every reason; the timeline translates
            reason = ending_reminder_text(hours)
        order_event_record(
            order=order,
            kind=OrderEvent.Kind.NOTE,
            actor=OrderEvent.Actor.SYSTEM,
            reason=reason,
            data={"notice": ENDING_SOON, "hours": hours},
        )
    return True


def orders_remind_ending(*, now: datetime | None = None) -> int:
    """Send the end-of-rental reminders due (beat task). Returns how many were sent."""
    now = now or timezone.now()
    candidates = Order.objects.filter(
        status=OrderStatus.ACTIVE,
        ends_at__gt=now,
        ends_at__lte=now + timedelta(hours=max(ENDING_REMINDERS_HOURS)),
    ).exclude(ending_notice_hours__lte=min(ENDING_REMINDERS_HOURS))
    sent = 0
    for order in candidates.only("pk", "status", "activated_at", "ends_at", "ending_notice_hours"):
        hours = ending_reminder_due(order=order, now=now)
        if hours is not None:
            sent += _reminder_send(order=order, hours=hours)
    return sent

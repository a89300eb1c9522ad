"""The order cases of the staff's "to handle" queue (backoffice): one condition each, shared
by the queue's counts and the order list's filter, so a count and its list always agree."""

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Exists, OuterRef, Q
from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from orders.events import order_events_given_up
from orders.models import OrderEvent, OrderStatus

S = OrderStatus
ENDING_SOON = timedelta(hours=24)


@dataclass(frozen=True)
class QueueCase:
    key: str
    label: str | Promise
    condition: Q


def order_queue_cases(*, now: datetime) -> list[QueueCase]:
    # A paid extension stays paid: it has no machines of its own to wait for.
    awaiting_machines = Q(status__in=[S.PAID, S.PROVISIONING], extends__isnull=True)
    return [
        QueueCase(
            "paid_waiting",
            _("Paid, waiting for provisioning"),
            awaiting_machines & Q(status=S.PAID, provisioning_problem=""),
        ),
        QueueCase(
            "access_late",
            _("Paid, access still not ready after the usual delay"),
            awaiting_machines & Q(status=S.PROVISIONING) & access_late(now=now),
        ),
        QueueCase(
            "provisioning_failed",
            _("Provisioning failed"),
            awaiting_machines & ~Q(provisioning_problem=""),
        ),
        # Confirmed once the machines are being prepared (order_environment_confirm): before
        # that the order waits as paid, and a failure is its own case. Each order counts once.
        QueueCase(
            "environment_waiting",
            _("Custom environment waiting for confirmation"),
            awaiting_machines
            & Q(
                status=S.PROVISIONING,
                provisioning_problem="",
                environment__requires_details=True,
                environment_confirmed_at__isnull=True,
            ),
        ),
        # The sweep gave up on them (orders.events): each event's deliveries say what failed.
        QueueCase(
            "events_undelivered",
            _("Order events a channel never got (billing, provisioning, webhooks, e-mail)"),
            Q(
                Exists(
                    OrderEvent.objects.filter(order=OuterRef("pk")).filter(
                        order_events_given_up(now=now)
                    )
                )
            ),
        ),
        QueueCase(
            "ending_soon",
            _("Rentals ending within 24 hours"),
            Q(status=S.ACTIVE, ends_at__lte=now + ENDING_SOON),
        ),
    ]


def access_late(*, now: datetime) -> Q:
    """No access yet, no problem reported, and paid longer ago than ACCESS_LATE_MINUTES."""
    cutoff = now - timedelta(minutes=settings.ACCESS_LATE_MINUTES)
    paid_before = OrderEvent.objects.filter(
        order=OuterRef("pk"), new_status=S.PAID, created_at__lte=cutoff
    )
    return Q(access_host="", provisioning_problem="") & Q(Exists(paid_before))

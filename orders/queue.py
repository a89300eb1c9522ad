"""The order cases of the staff's "to handle" queue (backoffice): one condition each, shared
by the queue's counts and the order list's filter, so a count and its list always agree."""

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Q
from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from orders.models import OrderStatus

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
        QueueCase(
            "ending_soon",
            _("Rentals ending within 24 hours"),
            Q(status=S.ACTIVE, ends_at__lte=now + ENDING_SOON),
        ),
    ]

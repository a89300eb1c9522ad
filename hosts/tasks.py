from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.utils.translation import gettext_noop

from hosts.provisioning.keys import order_keys_sync
from hosts.provisioning.services import (
    ProvisioningError,
    order_access_revoke,
    order_provision,
    order_provisioning_flag,
    rentals_purge,
)
from orders.models import Order

# The tasks that run `grant` may wait PROVISIONING_REQUIREMENTS_TIMEOUT (200 s) for a host
# installing a requirements file: more than the default soft limit, under the hard one (5 min).
# An order on several such hosts may take longer: its attempt ends at this limit as any failed
# one, and the next finds the hosts already done ("kept").
GRANT_SOFT_TIME_LIMIT = 4 * 60


# Provisioning reaches hosts over SSH (queue `hosts`). A failure queues the next attempt with a
# doubling back-off (a new message, not a retry of this one: the attempt number travels with
# it); once the attempts are spent the order is flagged for staff with the reason.
@shared_task(acks_late=True, soft_time_limit=GRANT_SOFT_TIME_LIMIT)
def order_provision_task(order_id: int, attempt: int = 1) -> bool:
    return _attempt(order_provision_task, order_provision, order_id, attempt)


@shared_task(acks_late=True, soft_time_limit=GRANT_SOFT_TIME_LIMIT)
def order_keys_sync_task(order_id: int, attempt: int = 1) -> bool:
    return _attempt(order_keys_sync_task, order_keys_sync, order_id, attempt)


@shared_task(acks_late=True)
def order_access_revoke_task(order_id: int, attempt: int = 1) -> bool:
    return _attempt(order_access_revoke_task, order_access_revoke, order_id, attempt)


@shared_task(acks_late=True)
def rentals_purge_task() -> int:
    return rentals_purge()


def _attempt(task, step, order_id: int, attempt: int) -> bool:
    order = Order.objects.select_related("environment").filter(pk=order_id).first()
    if order is None:
        return False
    try:
        return step(order=order)
    except SoftTimeLimitExceeded:
        error = ProvisioningError(gettext_noop("host answered too late"), "task time limit")
    except ProvisioningError as failed:
        error = failed
    if attempt >= settings.PROVISIONING_ATTEMPTS:
        order_provisioning_flag(
            order=order, reason=error.reason, detail=error.detail, attempts=attempt
        )
        return False
    countdown = settings.PROVISIONING_RETRY_SECONDS * 2 ** (attempt - 1)
    task.apply_async((order_id, attempt + 1), countdown=countdown)
    return False

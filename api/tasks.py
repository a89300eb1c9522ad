"""Celery entry points of the API's webhooks: thin, and safe to run twice."""

from celery import shared_task

from api.webhooks.pausing import webhook_endpoint_paused_notify
from api.webhooks.selectors import webhook_deliveries_due
from api.webhooks.services import webhook_delivery_attempt


@shared_task(acks_late=True, ignore_result=True)
def webhook_delivery_attempt_task(delivery_id: str) -> str:
    # A copy that finds the delivery done, not due or claimed elsewhere returns "skipped".
    return webhook_delivery_attempt(delivery_id=delivery_id)


@shared_task(acks_late=True, ignore_result=True)
def webhook_deliveries_due_task() -> int:
    """Beat: every pending delivery whose time has come, including those whose countdown
    was lost with a worker."""
    due = webhook_deliveries_due()
    for delivery_id in due:
        webhook_delivery_attempt_task.delay(str(delivery_id))
    return len(due)


@shared_task(acks_late=True, ignore_result=True)
def webhook_endpoint_paused_notify_task(endpoint_id: int) -> bool:
    # An e-mail: the default queue's work, not the webhook workers'.
    return webhook_endpoint_paused_notify(endpoint_id=endpoint_id)

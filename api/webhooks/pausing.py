"""One attempt at a time per endpoint, and endpoints that keep failing or answering slowly
paused, their owner told once by e-mail.

A customer's slow receiver then holds at most one webhook worker, and only until it has
failed API_WEBHOOK_PAUSE_AFTER_FAILURES times in a row.
"""

from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from accounts.mail import user_mail
from api.models import WebhookDelivery, WebhookEndpoint
from rental.celery import enqueue_after_commit


def endpoint_claim(*, endpoint_id: int, now: datetime, lease: timedelta) -> bool:
    """Take the endpoint for one attempt; False if it is paused or another attempt runs
    (that one queues the next due delivery when it ends)."""
    free = Q(busy_until__isnull=True) | Q(busy_until__lte=now)
    claimed = WebhookEndpoint.objects.filter(free, pk=endpoint_id, paused_at__isnull=True).update(
        busy_until=now + lease
    )
    return bool(claimed)


def endpoint_release(*, endpoint_id: int) -> None:
    """Give the endpoint back without an attempt to count."""
    WebhookEndpoint.objects.filter(pk=endpoint_id).update(busy_until=None)


def endpoint_attempt_record(*, endpoint_id: int, failed: bool, now: datetime) -> bool:
    """Count the attempt's outcome, release the endpoint and pause it after too many failures
    in a row. Returns True when this call paused it. Runs in the caller's transaction."""
    endpoint = WebhookEndpoint.objects.filter(pk=endpoint_id)
    if not failed:
        endpoint.update(failures=0, busy_until=None)
        return False
    endpoint.update(failures=F("failures") + 1, busy_until=None)
    # Conditional: of two attempts that both cross the threshold, one pauses and e-mails.
    paused = endpoint.filter(
        paused_at__isnull=True, failures__gte=settings.API_WEBHOOK_PAUSE_AFTER_FAILURES
    ).update(paused_at=now)
    if paused:
        enqueue_after_commit("api.tasks.webhook_endpoint_paused_notify_task", endpoint_id)
    return bool(paused)


def endpoint_next_due_after_commit(*, endpoint_id: int, now: datetime) -> None:
    """Queue the endpoint's oldest due delivery, so a backlog drains one by one without
    waiting for the beat sweep."""
    next_id = (
        WebhookDelivery.objects.filter(
            endpoint_id=endpoint_id,
            endpoint__paused_at__isnull=True,
            status=WebhookDelivery.Status.PENDING,
            next_attempt_at__lte=now,
        )
        .order_by("next_attempt_at")
        .values_list("pk", flat=True)
        .first()
    )
    if next_id is not None:
        enqueue_after_commit("api.tasks.webhook_delivery_attempt_task", str(next_id))


def webhook_endpoint_resume(*, endpoint: WebhookEndpoint, now=None) -> WebhookEndpoint:
    """The owner fixed their receiver: deliveries that waited are sent again, oldest first."""
    now = now or timezone.now()
    with transaction.atomic():
        resumed = WebhookEndpoint.objects.filter(pk=endpoint.pk, paused_at__isnull=False).update(
            paused_at=None, failures=0, busy_until=None
        )
        if resumed:
            WebhookDelivery.objects.filter(
                endpoint=endpoint, status=WebhookDelivery.Status.PENDING
            ).update(next_attempt_at=now)
            endpoint_next_due_after_commit(endpoint_id=endpoint.pk, now=now)
    endpoint.refresh_from_db()
    return endpoint


def webhook_endpoint_paused_notify(*, endpoint_id: int) -> bool:
    """The e-mail to the owner of a paused endpoint, in their language."""
    endpoint = (
        WebhookEndpoint.objects.select_related("user")
        .filter(pk=endpoint_id, paused_at__isnull=False)
        .first()
    )
    if endpoint is None:  # resumed or removed meanwhile
        return False
    user_mail(
        user=endpoint.user,
        template="api/email/webhook_paused",
        context={"endpoint": endpoint, "failures": endpoint.failures},
    ).send()
    return True

"""Webhook endpoints and deliveries: one delivery row per (endpoint, order event), sent and
retried from the database so a worker restart loses nothing."""

import logging
import time
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import certifi
import urllib3
from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext
from pydantic import BaseModel, ConfigDict

from accounts.models import User
from api.models import WebhookDelivery, WebhookEndpoint, WebhookEvent
from api.selectors import api_order_for_user
from api.serializers import order_representation
from api.webhooks.pausing import (
    endpoint_attempt_record,
    endpoint_claim,
    endpoint_next_due_after_commit,
    endpoint_release,
)
from api.webhooks.signing import signature_header, webhook_secret_new
from api.webhooks.targets import WebhookTargetError, target_addresses_check
from orders.models import OrderEvent
from rental.celery import enqueue_after_commit

logger = logging.getLogger(__name__)

# After attempt n fails, the next one comes RETRY_DELAYS[n - 1] later, then every hour,
# for RETRY_WINDOW after the event.
RETRY_DELAYS = (timedelta(seconds=10), timedelta(minutes=1), timedelta(minutes=10))
RETRY_EVERY = timedelta(hours=1)
RETRY_WINDOW = timedelta(hours=24)
# A claimed attempt that never reports back (worker killed) is due again after this.
ATTEMPT_LEASE = timedelta(seconds=60)
# Per account: each endpoint may hold a webhook worker while it answers.
MAX_ENDPOINTS_PER_USER = 5
USER_AGENT = "LocaGPU-Webhooks/1.0"


class WebhookBody(BaseModel):
    """The JSON every receiver gets."""

    model_config = ConfigDict(extra="forbid")

    id: str
    type: str
    created_at: datetime
    event: dict
    order: dict


class WebhookEndpointLimit(Exception):
    @property
    def message(self) -> str:
        return gettext(
            "An account has at most %(count)d webhook endpoints: remove one before adding another."
        ) % {"count": MAX_ENDPOINTS_PER_USER}


def webhook_event_type(event: OrderEvent) -> str:
    if event.kind == OrderEvent.Kind.STATUS:
        if not event.old_status:
            return WebhookEvent.ORDER_CREATED
        return WebhookEvent.ORDER_STATUS_CHANGED
    return f"order.{event.kind}"


def webhook_endpoint_create(*, user: User, url: str, events: list[str]) -> WebhookEndpoint:
    """Raises WebhookTargetError for a URL the store will not call, WebhookEndpointLimit
    past MAX_ENDPOINTS_PER_USER."""
    target_addresses_check(url)
    unknown = set(events) - set(WebhookEvent.values)
    if unknown:
        raise ValueError(f"Unknown webhook events: {sorted(unknown)}")
    with transaction.atomic():
        # Serialises concurrent creations by one user, so the limit holds.
        User.objects.select_for_update().only("pk").get(pk=user.pk)
        if WebhookEndpoint.objects.filter(user=user).count() >= MAX_ENDPOINTS_PER_USER:
            raise WebhookEndpointLimit
        return WebhookEndpoint.objects.create(
            user=user, url=url, events=sorted(set(events)), secret=webhook_secret_new()
        )


def webhook_endpoints_pause(*, user: User, now: datetime) -> int:
    """Pause the account's endpoints (new password); returns how many were running."""
    return WebhookEndpoint.objects.filter(user=user, paused_at__isnull=True).update(paused_at=now)


def webhook_endpoint_delete(*, endpoint: WebhookEndpoint) -> None:
    """Deletes the endpoint and its deliveries: nothing more is sent to it."""
    with transaction.atomic():
        endpoint.delete()


def _attempt_after_commit(delivery_id, *, countdown: float | None = None) -> None:
    enqueue_after_commit(
        "api.tasks.webhook_delivery_attempt_task", str(delivery_id), countdown=countdown
    )


def webhook_deliveries_create(*, event: OrderEvent, now=None) -> list[WebhookDelivery]:
    """A delivery for each of the order owner's endpoints subscribed to this event.

    The webhook channel of order events (orders.events, subscribed in settings.HOOKS), run
    in the transaction that claims the event; a second call finds the deliveries made and
    adds none.
    """
    event_type = webhook_event_type(event)
    endpoints = [
        endpoint
        # A paused endpoint's deliveries are made too: they wait until its owner resumes it.
        for endpoint in WebhookEndpoint.objects.filter(user_id=event.order.user_id)
        if event_type in endpoint.events
    ]
    if not endpoints:
        return []
    order = api_order_for_user(user=event.order.user, number=event.order.number)
    assert order is not None  # the event's order belongs to the event's order's user
    body = WebhookBody(
        id=f"evt_{event.pk}",
        type=event_type,
        created_at=event.created_at,
        event={
            "kind": event.kind,
            "old_status": event.old_status,
            "new_status": event.new_status,
            "actor": event.actor,
            "reason": event.reason,
        },
        order=order_representation(order),
    )
    payload = body.model_dump(mode="json")
    now = now or timezone.now()
    created = []
    with transaction.atomic():
        for endpoint in endpoints:
            delivery, is_new = WebhookDelivery.objects.get_or_create(
                endpoint=endpoint,
                event=event,
                defaults={
                    "event_type": event_type,
                    "payload": payload,
                    "next_attempt_at": now,
                    "retry_until": now + RETRY_WINDOW,
                    "created_at": now,
                },
            )
            if is_new:
                created.append(delivery)
                _attempt_after_commit(delivery.pk)
    return created


def _next_attempt_delay(attempts: int) -> timedelta:
    return RETRY_DELAYS[attempts - 1] if attempts <= len(RETRY_DELAYS) else RETRY_EVERY


def _post(delivery: WebhookDelivery) -> tuple[int | None, str]:
    """One HTTP attempt: (status code or None, error text)."""
    try:
        address = target_addresses_check(delivery.endpoint.url)
    except WebhookTargetError as exc:
        return None, f"Refused target: {exc}"
    body = WebhookBody.model_validate(delivery.payload).model_dump_json().encode()
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "X-Rental-Delivery": str(delivery.pk),
        "X-Rental-Event": delivery.event_type,
        "X-Rental-Signature": signature_header(
            secret=delivery.endpoint.secret, body=body, timestamp=int(time.time())
        ),
    }
    try:
        status = _post_to_address(delivery.endpoint.url, address, body=body, headers=headers)
    except urllib3.exceptions.HTTPError as exc:
        # The exception's text can describe the receiver's network: the type says enough.
        return None, type(exc).__name__
    if 200 <= status < 300:
        return status, ""
    return status, f"HTTP {status}"


def _post_to_address(url: str, address: str, *, body: bytes, headers: dict) -> int:
    """POST to `url` through the already checked `address`: no second DNS lookup. TLS still
    verifies the certificate against the URL's host name."""
    parts = urlsplit(url)
    timeout = urllib3.Timeout(
        connect=settings.API_WEBHOOK_CONNECT_TIMEOUT_SECONDS,
        total=settings.API_WEBHOOK_TIMEOUT_SECONDS,
    )
    pool: urllib3.HTTPConnectionPool
    if parts.scheme == "https":
        pool = urllib3.HTTPSConnectionPool(
            address,
            port=parts.port or 443,
            server_hostname=parts.hostname,
            assert_hostname=parts.hostname,
            cert_reqs="CERT_REQUIRED",
            ca_certs=certifi.where(),
            timeout=timeout,
            retries=False,
        )
    else:  # development and tests only (API_WEBHOOK_ALLOW_LOCAL_TARGETS)
        pool = urllib3.HTTPConnectionPool(
            address, port=parts.port or 80, timeout=timeout, retries=False
        )
    path = parts.path or "/"
    if parts.query:
        path = f"{path}?{parts.query}"
    with pool:
        # A redirect could point anywhere, the store's own network included: not followed.
        response = pool.urlopen(
            "POST", path, body=body, headers={**headers, "Host": parts.netloc}, redirect=False
        )
    return response.status


def webhook_delivery_attempt(*, delivery_id, now=None) -> str:
    """Send a due delivery once and record the outcome; returns delivered, retry, failed or
    skipped (not due, already done, claimed by another worker, or its endpoint paused or
    busy with another attempt)."""
    now = now or timezone.now()
    endpoint_id = (
        WebhookDelivery.objects.filter(
            pk=delivery_id, status=WebhookDelivery.Status.PENDING, next_attempt_at__lte=now
        )
        .values_list("endpoint_id", flat=True)
        .first()
    )
    if endpoint_id is None or not endpoint_claim(
        endpoint_id=endpoint_id, now=now, lease=ATTEMPT_LEASE
    ):
        return "skipped"
    # The claims are the locks: one attempt at a time per delivery and per endpoint, and no
    # row lock held during the HTTP call.
    claimed = WebhookDelivery.objects.filter(
        pk=delivery_id,
        status=WebhookDelivery.Status.PENDING,
        next_attempt_at__lte=now,
        endpoint__paused_at__isnull=True,
    ).update(next_attempt_at=now + ATTEMPT_LEASE)
    if not claimed:
        endpoint_release(endpoint_id=endpoint_id)
        return "skipped"
    delivery = WebhookDelivery.objects.select_related("endpoint").get(pk=delivery_id)
    started = time.monotonic()
    status_code, error = _post(delivery)
    slow = time.monotonic() - started > settings.API_WEBHOOK_SLOW_SECONDS
    finished = timezone.now()
    attempts = delivery.attempts + 1
    changes: dict[str, Any] = {
        "attempts": attempts,
        "last_attempt_at": finished,
        "last_status_code": status_code,
        "last_error": error,
    }
    if not error:
        outcome = "delivered"
        changes.update(
            status=WebhookDelivery.Status.DELIVERED, delivered_at=finished, next_attempt_at=None
        )
    else:
        next_attempt_at = now + _next_attempt_delay(attempts)
        if next_attempt_at > delivery.retry_until:
            outcome = "failed"
            changes.update(status=WebhookDelivery.Status.FAILED, next_attempt_at=None)
        else:
            outcome = "retry"
            changes.update(next_attempt_at=next_attempt_at)
    with transaction.atomic():
        WebhookDelivery.objects.filter(
            pk=delivery_id, status=WebhookDelivery.Status.PENDING
        ).update(**changes)
        paused = endpoint_attempt_record(
            endpoint_id=endpoint_id, failed=bool(error) or slow, now=finished
        )
        if outcome == "retry" and not paused:
            # The countdown only saves waiting for the beat sweep; the row is what counts.
            delay = (changes["next_attempt_at"] - timezone.now()).total_seconds()
            _attempt_after_commit(delivery_id, countdown=max(delay, 0))
        endpoint_next_due_after_commit(endpoint_id=endpoint_id, now=finished)
    if outcome != "delivered" or slow:
        logger.info("Webhook delivery %s: %s (%s, slow=%s)", delivery_id, outcome, error, slow)
    return outcome


def webhook_delivery_redeliver(*, delivery: WebhookDelivery, now=None) -> WebhookDelivery:
    """Send a delivery again now, whatever its state, with a fresh retry window."""
    now = now or timezone.now()
    with transaction.atomic():
        WebhookDelivery.objects.filter(pk=delivery.pk).update(
            status=WebhookDelivery.Status.PENDING,
            attempts=0,
            next_attempt_at=now,
            retry_until=now + RETRY_WINDOW,
            delivered_at=None,
        )
        _attempt_after_commit(delivery.pk)
    delivery.refresh_from_db()
    return delivery

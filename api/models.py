import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from accounts.models import ApiKey
from orders.models import Order, OrderEvent


class IdempotencyRecord(models.Model):
    """One `Idempotency-Key` seen on `POST /orders/`, and the order it produced.

    A key is the account's, whichever of its API keys (or its browser session) sent it: a
    retry from another key of the same account, as a partner's second deployment makes, finds
    the same order. The unique constraint makes two concurrent requests with one key create
    one order: the second INSERT waits for the first transaction and then fails, and the
    second request answers with the first one's order.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    # The key the first request came with (null for a browser session): for the record only.
    api_key = models.ForeignKey(
        ApiKey, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    key = models.CharField(max_length=255)
    request_hash = models.CharField(max_length=64)
    # Set in the transaction that inserted the record, so never seen empty by another one.
    order = models.ForeignKey(Order, on_delete=models.CASCADE, null=True, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "key"], name="idempotency_key_once_per_account")
        ]

    def __str__(self) -> str:
        return self.key


class WebhookEvent(models.TextChoices):
    ORDER_CREATED = "order.created", _("Order created")
    ORDER_STATUS_CHANGED = "order.status_changed", _("Order status changed")
    ORDER_PAYMENT_CLAIMED = "order.payment_claimed", _("Customer reported a payment")
    ORDER_TRANSFER_SEEN = "order.transfer_seen", _("Transfer seen on chain")
    ORDER_TRANSFER_CONFIRMED = "order.transfer_confirmed", _("Transfer confirmed")
    ORDER_TRANSFER_ORPHANED = "order.transfer_orphaned", _("Transfer removed by a reorganisation")
    ORDER_PAYMENT_FLAGGED = "order.payment_flagged", _("Payment needs attention")
    ORDER_REFUND_OWED = "order.refund_owed", _("Refund owed")
    ORDER_REFUND_ADDRESS_GIVEN = "order.refund_address_given", _("Refund address given")
    ORDER_REFUND_SENT = "order.refund_sent", _("Refund sent, checking on chain")
    ORDER_REFUND_CONFIRMED = "order.refund_confirmed", _("Refund confirmed on chain")
    ORDER_REFUND_REJECTED = "order.refund_rejected", _("Refund transaction refused")
    ORDER_PROVISIONING = "order.provisioning", _("Host preparation")
    ORDER_PROVISIONING_FAILED = "order.provisioning_failed", _("Host preparation failed")
    ORDER_ENVIRONMENT_CONFIRMED = "order.environment_confirmed", _("Custom environment confirmed")
    ORDER_EXTENDED = "order.extended", _("Rental extended")
    ORDER_ACCESS_REVOKED = "order.access_revoked", _("Access revoked")
    ORDER_DATA_PURGED = "order.data_purged", _("Rental data removed")
    ORDER_NOTE = "order.note", _("Note")


class WebhookEndpoint(models.Model):
    """A URL of a customer's that receives their orders' events, signed with `secret`."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="webhook_endpoints"
    )
    url = models.URLField(_("URL"), max_length=500)
    # Event types (WebhookEvent values) the endpoint receives.
    events = models.JSONField(_("events"), default=list)
    # Kept in clear: it signs every delivery. Shown to the customer once, at creation.
    secret = models.CharField(max_length=80, editable=False)
    created_at = models.DateTimeField(_("created"), default=timezone.now)
    # Failed or slow attempts in a row; API_WEBHOOK_PAUSE_AFTER_FAILURES of them pause it.
    failures = models.PositiveIntegerField(_("failures in a row"), default=0, editable=False)
    # Nothing is sent to a paused endpoint (deliveries wait) until its owner resumes it: set
    # after repeated failures, or when the account's password changes (someone else may have
    # set it up).
    paused_at = models.DateTimeField(_("paused"), null=True, blank=True, editable=False)
    # One attempt at a time per endpoint: set while an attempt runs, a lease in case its
    # worker dies, so a slow receiver holds one webhook worker at most.
    busy_until = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["created_at", "id"]
        verbose_name = _("webhook endpoint")
        verbose_name_plural = _("webhook endpoints")

    def __str__(self) -> str:
        return self.url


class WebhookDelivery(models.Model):
    """One event owed to one endpoint. The row is the queue: it survives worker restarts and
    a beat task sends every pending delivery whose `next_attempt_at` has come."""

    class Status(models.TextChoices):
        PENDING = "pending", _("Pending")
        DELIVERED = "delivered", _("Delivered")
        FAILED = "failed", _("Failed")

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    endpoint = models.ForeignKey(
        WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries"
    )
    event = models.ForeignKey(OrderEvent, on_delete=models.CASCADE, related_name="+")
    event_type = models.CharField(max_length=40, choices=WebhookEvent.choices)
    payload = models.JSONField()
    status = models.CharField(
        _("status"), max_length=10, choices=Status.choices, default=Status.PENDING
    )
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    retry_until = models.DateTimeField()
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    last_status_code = models.PositiveIntegerField(null=True, blank=True)
    last_error = models.CharField(max_length=500, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("webhook delivery")
        verbose_name_plural = _("webhook deliveries")
        indexes = [models.Index(fields=["status", "next_attempt_at"])]
        constraints = [
            models.UniqueConstraint(
                fields=["endpoint", "event"], name="one_delivery_per_endpoint_and_event"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.event_type} → {self.endpoint_id} ({self.status})"

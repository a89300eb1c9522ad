from django.db.models import QuerySet
from django.utils import timezone

from accounts.models import User
from api.models import WebhookDelivery, WebhookEndpoint


def webhook_deliveries_due(*, now=None, limit: int = 500) -> list:
    now = now or timezone.now()
    # A paused endpoint's deliveries wait for its owner to resume it.
    due = WebhookDelivery.objects.filter(
        status=WebhookDelivery.Status.PENDING,
        next_attempt_at__lte=now,
        endpoint__paused_at__isnull=True,
    ).order_by("next_attempt_at")
    return list(due.values_list("pk", flat=True)[:limit])


def webhook_endpoints_for_user(*, user: User) -> QuerySet[WebhookEndpoint]:
    return WebhookEndpoint.objects.filter(user=user)


def webhook_endpoint_for_user(*, user: User, endpoint_id: int) -> WebhookEndpoint | None:
    return webhook_endpoints_for_user(user=user).filter(pk=endpoint_id).first()


def webhook_deliveries_for_endpoint(*, endpoint: WebhookEndpoint) -> QuerySet[WebhookDelivery]:
    return WebhookDelivery.objects.filter(endpoint=endpoint).order_by("-created_at")

"""A receiver that keeps failing or answering slowly is paused, its owner told once; one
attempt at a time goes to an endpoint, so a slow receiver holds one webhook worker at most."""

import threading
from datetime import timedelta

import pytest
from django.core import mail
from django.db import connection
from django.utils import timezone

from api.models import WebhookDelivery, WebhookEndpoint
from api.tasks import webhook_deliveries_due_task
from api.webhooks.services import webhook_delivery_attempt
from tests.api.test_webhooks import time_passes
from tests.drills.processes import wait_until

PAUSE_AFTER = 5


@pytest.fixture
def endpoint(api, receiver, settings):
    settings.API_WEBHOOK_PAUSE_AFTER_FAILURES = PAUSE_AFTER
    response = api.post("/api/v1/webhooks/", {"url": receiver.url}, format="json")
    assert response.status_code == 201, response.content
    return WebhookEndpoint.objects.get(pk=response.json()["id"])


def pause_emails() -> list:
    return [email for email in mail.outbox if "webhook" in email.subject]


def _place_order(api, order_body, django_capture_on_commit_callbacks) -> None:
    """An order of one GPU, and what its commit queues: the event's dispatch and first
    attempts."""
    body = {**order_body, "quantity": 1}
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post("/api/v1/orders/", body, format="json")
        assert response.status_code == 201, response.content


@pytest.mark.django_db
@pytest.mark.parametrize("trouble", ["failing", "slow"])
def test_an_endpoint_that_keeps_failing_is_paused_and_its_owner_gets_one_email(
    api,
    customer,
    endpoint,
    receiver,
    order_body,
    settings,
    celery_eager,
    django_capture_on_commit_callbacks,
    trouble,
):
    # A partner placing orders one after the other, beyond one account's unpaid ceiling.
    settings.ORDERS_NEW_ACCOUNT_UNPAID_CEILING = {
        "orders": 2 * PAUSE_AFTER,
        "units": 2 * PAUSE_AFTER,
    }
    if trouble == "failing":
        receiver.statuses = [500] * 20
    else:  # answers 200, but later than the store waits for comfortably
        settings.API_WEBHOOK_SLOW_SECONDS = 0.2
        receiver.delay_seconds = 0.3
    for _order in range(PAUSE_AFTER):
        _place_order(api, order_body, django_capture_on_commit_callbacks)
    assert len(receiver.requests) == PAUSE_AFTER
    endpoint.refresh_from_db()
    assert endpoint.paused_at is not None and endpoint.failures == PAUSE_AFTER

    [email] = pause_emails()
    assert email.to == [customer.email]
    assert email.subject == "Votre point de réception webhook est en pause"
    assert endpoint.url in email.body and f"/api/v1/webhooks/{endpoint.pk}/resume/" in email.body

    # Paused: a new event waits, neither the sweep nor a queued attempt sends anything, and
    # no second e-mail goes out.
    _place_order(api, order_body, django_capture_on_commit_callbacks)
    WebhookDelivery.objects.update(next_attempt_at=timezone.now() - timedelta(seconds=1))
    with django_capture_on_commit_callbacks(execute=True):
        assert webhook_deliveries_due_task() == 0
        for delivery in WebhookDelivery.objects.all():
            assert webhook_delivery_attempt(delivery_id=delivery.pk) == "skipped"
    assert len(receiver.requests) == PAUSE_AFTER and len(pause_emails()) == 1
    assert api.get(f"/api/v1/webhooks/{endpoint.pk}/").json()["paused_at"] is not None

    # The owner fixed the receiver and resumes: what waited is sent at once, one by one.
    receiver.statuses, receiver.delay_seconds = [], 0
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(f"/api/v1/webhooks/{endpoint.pk}/resume/")
    assert response.status_code == 200 and response.json()["paused_at"] is None
    statuses = set(WebhookDelivery.objects.values_list("status", flat=True))
    assert statuses == {WebhookDelivery.Status.DELIVERED}
    assert len(pause_emails()) == 1


@pytest.mark.django_db(transaction=True)
def test_one_attempt_at_a_time_goes_to_an_endpoint(
    api, endpoint, receiver, order_body, celery_eager
):
    receiver.statuses = [500, 500]  # both first attempts fail, and wait for their retry
    for _order in range(2):
        assert api.post("/api/v1/orders/", order_body, format="json").status_code == 201
    first, second = WebhookDelivery.objects.order_by("created_at")
    for delivery in (first, second):
        time_passes(delivery)
    receiver.delay_seconds = 1.0
    outcomes = {}

    def attempt_first():
        try:
            outcomes["first"] = webhook_delivery_attempt(delivery_id=first.pk)
        finally:
            connection.close()

    sending = threading.Thread(target=attempt_first)
    sending.start()
    try:
        # While the first attempt is in flight, the endpoint takes no other.
        wait_until(
            lambda: WebhookEndpoint.objects.get(pk=endpoint.pk).busy_until,
            timeout=5,
            what="the first attempt to claim the endpoint",
        )
        assert webhook_delivery_attempt(delivery_id=second.pk) == "skipped"
    finally:
        sending.join(timeout=10)
    # When the first attempt ended, it queued the endpoint's next due delivery.
    assert outcomes["first"] == "delivered"
    second.refresh_from_db()
    assert second.status == WebhookDelivery.Status.DELIVERED
    assert len(receiver.requests) == 4

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from api.models import WebhookDelivery, WebhookEndpoint
from api.tasks import webhook_deliveries_due_task
from api.webhooks.services import RETRY_WINDOW, webhook_delivery_attempt
from api.webhooks.signing import signature_valid

pytestmark = pytest.mark.django_db


@pytest.fixture
def endpoint(api, receiver):
    """The customer's endpoint for every event type, with its secret."""
    response = api.post("/api/v1/webhooks/", {"url": receiver.url}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


@pytest.fixture
def place(api, order_body, celery_eager, django_capture_on_commit_callbacks):
    """Places an order and runs what its commit queues (event dispatch, first attempts)."""

    def place(**changes):
        with django_capture_on_commit_callbacks(execute=True):
            response = api.post("/api/v1/orders/", {**order_body, **changes}, format="json")
        assert response.status_code == 201, response.content
        return response.json()

    return place


def time_passes(delivery: WebhookDelivery) -> None:
    """Brings the delivery's next attempt to now, as the clock would."""
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        next_attempt_at=timezone.now() - timedelta(seconds=1)
    )


def test_an_order_event_reaches_the_receiver_signed(endpoint, receiver, place):
    order = place()
    [request] = receiver.wait_for(1)
    body = json.loads(request.body)
    assert body["type"] == "order.created"
    assert body["order"]["number"] == order["number"]
    assert body["order"]["payment"]["address"] == order["payment"]["address"]
    assert set(body) == {"id", "type", "created_at", "event", "order"}
    assert signature_valid(
        secret=endpoint["secret"], body=request.body, header=request.headers["X-Rental-Signature"]
    )
    assert not signature_valid(
        secret="whsec_wrong", body=request.body, header=request.headers["X-Rental-Signature"]
    )
    delivery = WebhookDelivery.objects.get()
    assert request.headers["X-Rental-Delivery"] == str(delivery.pk)
    assert request.headers["X-Rental-Event"] == "order.created"
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == ("delivered", 1, 200)


def test_every_event_of_the_order_is_sent(
    api, endpoint, receiver, place, django_capture_on_commit_callbacks
):
    order = place()
    with django_capture_on_commit_callbacks(execute=True):
        api.post(f"/api/v1/orders/{order['number']}/cancel/")
    bodies = [json.loads(r.body) for r in receiver.wait_for(2)]
    assert [b["type"] for b in bodies] == ["order.created", "order.status_changed"]
    assert bodies[1]["event"]["new_status"] == "cancelled"
    assert bodies[1]["order"]["status"] == "cancelled"
    assert bodies[0]["id"] != bodies[1]["id"]


def test_an_endpoint_gets_only_the_events_it_subscribed_to(api, receiver, place):
    api.post(
        "/api/v1/webhooks/",
        {"url": receiver.url, "events": ["order.status_changed"]},
        format="json",
    )
    place()
    assert not WebhookDelivery.objects.exists()
    assert receiver.requests == []


def test_a_receiver_that_fails_twice_gets_the_event_until_it_succeeds(endpoint, receiver, place):
    receiver.statuses = [500, 503]
    place()
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == ("pending", 1, 500)
    assert timedelta(seconds=5) < delivery.next_attempt_at - timezone.now() <= timedelta(seconds=10)

    # The worker restarts: nothing survives but the row, which the beat task finds when due.
    assert webhook_deliveries_due_task() == 0
    time_passes(delivery)
    assert webhook_deliveries_due_task() == 1
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == ("pending", 2, 503)
    assert timedelta(seconds=50) < delivery.next_attempt_at - timezone.now() <= timedelta(minutes=1)

    time_passes(delivery)
    webhook_deliveries_due_task()
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == ("delivered", 3, 200)

    requests = receiver.wait_for(3)
    assert len(requests) == 3
    assert {r.headers["X-Rental-Delivery"] for r in requests} == {str(delivery.pk)}
    assert len({r.body for r in requests}) == 1
    for request in requests:
        assert signature_valid(
            secret=endpoint["secret"],
            body=request.body,
            header=request.headers["X-Rental-Signature"],
        )
    time_passes(delivery)
    assert webhook_deliveries_due_task() == 0


def test_an_attempt_lost_with_its_worker_is_sent_after_the_lease(endpoint, receiver, place):
    receiver.statuses = [500]
    place()
    delivery = WebhookDelivery.objects.get()
    time_passes(delivery)
    now = timezone.now()
    # A worker claims the attempt, then dies before sending anything.
    WebhookDelivery.objects.filter(pk=delivery.pk).update(next_attempt_at=now + timedelta(60))
    assert webhook_delivery_attempt(delivery_id=delivery.pk) == "skipped"
    assert webhook_delivery_attempt(delivery_id=delivery.pk, now=now + timedelta(61)) == "delivered"
    assert len(receiver.wait_for(2)) == 2


def test_the_back_off_is_10s_1min_10min_then_hourly_for_24_hours(
    endpoint, receiver, place, settings
):
    # Not paused after a few failures, to see the whole schedule (see test_webhook_pausing).
    settings.API_WEBHOOK_PAUSE_AFTER_FAILURES = 1000
    receiver.statuses = [500] * 100
    place()
    delivery = WebhookDelivery.objects.get()
    start = delivery.created_at
    gaps, now = [], timezone.now()
    while True:
        delivery.refresh_from_db()
        if delivery.status != "pending":
            break
        gaps.append(delivery.next_attempt_at - now)
        now = delivery.next_attempt_at
        webhook_delivery_attempt(delivery_id=delivery.pk, now=now)
    assert [round(gap.total_seconds()) for gap in gaps[:6]] == [10, 60, 600, 3600, 3600, 3600]
    assert delivery.status == "failed"
    assert now - start <= RETRY_WINDOW
    assert delivery.attempts == len(receiver.requests) == 1 + len(gaps)


def test_a_slow_receiver_times_out_and_is_retried(endpoint, receiver, place, settings):
    settings.API_WEBHOOK_TIMEOUT_SECONDS = 0.3
    receiver.delay_seconds = 1
    place()
    delivery = WebhookDelivery.objects.get()
    assert delivery.status == "pending" and "Timeout" in delivery.last_error


def test_a_redirect_is_not_followed(endpoint, receiver, place):
    receiver.statuses = [302]
    place()
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.last_status_code) == ("pending", 302)
    assert len(receiver.requests) == 1


class TestTargetsInProduction:
    @pytest.mark.parametrize(
        "url",
        [
            "http://93.184.216.34/hooks",
            "https://127.0.0.1/hooks",
            "https://localhost:8443/hooks",
            "https://[::1]/hooks",
            "https://10.0.0.5/hooks",
            "https://192.168.1.20/hooks",
            "https://172.16.0.1/hooks",
            "https://169.254.169.254/latest/meta-data/",
            "https://[fe80::1]/hooks",
            "https://0.0.0.0/hooks",
            "https://user:secret@93.184.216.34/hooks",
            "ftp://93.184.216.34/hooks",
        ],
    )
    def test_a_private_target_is_refused(self, api, settings, url):
        settings.API_WEBHOOK_ALLOW_LOCAL_TARGETS = False
        response = api.post("/api/v1/webhooks/", {"url": url}, format="json")
        assert response.status_code == 400
        assert list(response.json()["error"]["fields"]) == ["url"]
        assert not WebhookEndpoint.objects.exists()

    def test_a_public_https_target_is_accepted(self, api, settings):
        settings.API_WEBHOOK_ALLOW_LOCAL_TARGETS = False
        response = api.post("/api/v1/webhooks/", {"url": "https://93.184.216.34/h"}, format="json")
        assert response.status_code == 201
        assert response.json()["secret"].startswith("whsec_")

    def test_a_target_that_became_local_is_refused_at_send_time(
        self, endpoint, receiver, place, settings
    ):
        settings.API_WEBHOOK_ALLOW_LOCAL_TARGETS = False
        place()
        delivery = WebhookDelivery.objects.get()
        assert delivery.status == "pending"
        assert delivery.last_error.startswith("Refused target")
        assert receiver.requests == []


class TestWebhooksApi:
    def test_the_secret_is_shown_once(self, api, endpoint):
        listed = api.get("/api/v1/webhooks/").json()
        assert listed == [{k: v for k, v in endpoint.items() if k != "secret"}]
        assert "secret" not in api.get(f"/api/v1/webhooks/{endpoint['id']}/").json()

    def test_deliveries_are_listed_and_can_be_sent_again(self, api, endpoint, receiver, place):
        place()
        page = api.get(f"/api/v1/webhooks/{endpoint['id']}/deliveries/").json()
        assert page["count"] == 1
        delivery = page["results"][0]
        assert (delivery["type"], delivery["status"]) == ("order.created", "delivered")
        assert delivery["event_id"] == delivery["payload"]["id"]

        url = f"/api/v1/webhooks/{endpoint['id']}/deliveries/{delivery['id']}/redeliver/"
        response = api.post(url)
        assert response.status_code == 202
        assert response.json()["status"] == "pending"
        webhook_delivery_attempt(delivery_id=delivery["id"])
        requests = receiver.wait_for(2)
        assert requests[0].body == requests[1].body

    def test_delete_stops_deliveries(self, api, endpoint, receiver, place):
        assert api.delete(f"/api/v1/webhooks/{endpoint['id']}/").status_code == 204
        place()
        assert receiver.requests == [] and not WebhookDelivery.objects.exists()

    def test_another_accounts_endpoints_are_404(self, outsider_api, endpoint, place):
        place()
        delivery = WebhookDelivery.objects.get()
        base = f"/api/v1/webhooks/{endpoint['id']}"
        assert outsider_api.get(f"{base}/").status_code == 404
        assert outsider_api.get(f"{base}/deliveries/").status_code == 404
        assert outsider_api.post(f"{base}/deliveries/{delivery.pk}/redeliver/").status_code == 404
        assert outsider_api.delete(f"{base}/").status_code == 404
        assert outsider_api.get("/api/v1/webhooks/").json() == []

    def test_a_read_only_key_cannot_add_endpoints(self, read_only_api, receiver):
        response = read_only_api.post("/api/v1/webhooks/", {"url": receiver.url}, format="json")
        assert response.status_code == 403

    def test_unknown_event_types_are_a_400(self, api, receiver):
        body = {"url": receiver.url, "events": ["order.exploded"]}
        response = api.post("/api/v1/webhooks/", body, format="json")
        assert list(response.json()["error"]["fields"]) == ["events"]


def test_staff_see_deliveries_in_admin_and_send_them_again(client, staff, endpoint, place):
    place()
    delivery = WebhookDelivery.objects.get()
    client.force_login(staff)
    assert client.get("/admin/api/webhookdelivery/").status_code == 200
    assert client.get(f"/admin/api/webhookdelivery/{delivery.pk}/change/").status_code == 200
    page = client.get(f"/admin/api/webhookendpoint/{endpoint['id']}/change/").content.decode()
    assert endpoint["secret"] not in page
    client.post(
        "/admin/api/webhookdelivery/",
        {"action": "redeliver", "_selected_action": [delivery.pk]},
    )
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("pending", 0)


def test_a_delivery_connects_to_the_address_it_checked_not_to_a_second_lookup(
    api, receiver, place, monkeypatch
):
    """DNS rebinding: the name answers a safe address at the check, another one later."""
    import socket

    from api.webhooks import targets

    port = receiver.url.split(":")[2].split("/")[0]
    hostname = "hooks.customer.test"
    lookups = []

    real_getaddrinfo = socket.getaddrinfo

    def resolve(host, *args, **kwargs):
        if host != hostname:
            return real_getaddrinfo(host, *args, **kwargs)  # the checked address itself
        lookups.append(host)
        # The first answer is the receiver (loopback is allowed in tests); any later lookup
        # would land on a private address.
        address = "127.0.0.1" if len(lookups) == 1 else "10.0.0.5"
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, int(port)))]

    monkeypatch.setattr(targets.socket, "getaddrinfo", resolve)
    url = f"http://{hostname}:{port}/hooks"
    assert api.post("/api/v1/webhooks/", {"url": url}, format="json").status_code == 201
    lookups.clear()
    place()
    [request] = receiver.wait_for(1)
    assert request.headers["Host"] == f"{hostname}:{port}"
    assert lookups == [hostname]  # the send-time check, and no lookup after it
    assert WebhookDelivery.objects.get().status == "delivered"

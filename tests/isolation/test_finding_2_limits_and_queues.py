"""Issue 10, finding 2: one customer could stall the chain watcher for everyone.

Webhook deliveries shared the Celery queue with chain scans, and the limits were per API key
while an account could create any number of keys.
"""

import json
from uuid import uuid4

import pytest
import redis
from django.conf import settings

from accounts.services import api_key_create
from payments.models import Chain
from payments.tasks import chain_scan_task, chains_scan_task
from rental.celery import app
from tests.api.conftest import key_client
from tests.drills.processes import RedisServer, broker_of_this_process
from tests.factories import OrderFactory

pytestmark = pytest.mark.django_db


def queue_of(task_name: str) -> str:
    return app.amqp.router.route({}, task_name)["queue"].name


def test_webhook_deliveries_chain_work_and_e_mails_run_on_separate_queues():
    chain = {
        queue_of("payments.tasks.chains_scan_task"),
        queue_of("payments.tasks.chain_scan_task"),
        queue_of("payments.tasks.invoice_check_task"),
    }
    assert chain == {"chain"}
    assert queue_of("api.tasks.webhook_delivery_attempt_task") == "webhooks"
    assert queue_of("orders.tasks.order_event_dispatch_task") == "default"


def test_an_eleventh_api_key_is_refused_on_the_page(client, customer):
    client.force_login(customer)
    for n in range(10):
        response = client.post("/en/account/api-keys/", {"name": f"k{n}", "scope": "full"})
        assert response.status_code == 200 and response.context["new_key"]
    response = client.post("/en/account/api-keys/", {"name": "one too many", "scope": "full"})
    assert response.status_code == 400
    assert response.context["new_key"] is None
    assert "at most 10 API keys" in response.content.decode()
    assert customer.api_keys.count() == 10


def test_a_sixth_webhook_endpoint_is_refused(customer, receiver):
    api = key_client(api_key_create(user=customer, name="Backend")[1])
    for n in range(5):
        response = api.post("/api/v1/webhooks/", {"url": f"{receiver.url}/{n}"}, format="json")
        assert response.status_code == 201
    response = api.post("/api/v1/webhooks/", {"url": receiver.url}, format="json")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "too_many_webhooks"
    assert customer.webhook_endpoints.count() == 5


def test_ive_paid_is_limited_per_order_across_api_keys_and_the_browser(client, customer, settings):
    settings.PAYMENTS_CLAIM_ORDER_RATE_LIMIT = {"limit": 3, "period": 60}
    order = OrderFactory(user=customer)
    keys = [key_client(api_key_create(user=customer, name=f"k{n}")[1]) for n in range(2)]
    client.force_login(customer)
    codes = [keys[0].post(f"/api/v1/orders/{order.number}/paid/").status_code]
    codes.append(keys[1].post(f"/api/v1/orders/{order.number}/paid/").status_code)
    codes.append(client.post(f"/en/account/orders/{order.number}/payment/claim/", {}).status_code)
    assert 429 not in codes
    assert keys[1].post(f"/api/v1/orders/{order.number}/paid/").status_code == 429
    browser = client.post(f"/en/account/orders/{order.number}/payment/claim/", {})
    assert browser.status_code == 429


@pytest.fixture
def chain_queue():
    """The `chain` queue on a broker of this test's own (a throwaway Redis): what it holds is
    only what the test queued, and the machine's broker, which other runs share, is never
    emptied."""
    server = RedisServer()
    server.start()
    try:
        with broker_of_this_process(server.url):
            yield server.client()
    finally:
        server.stop()


@pytest.fixture
def another_runs_scan(settings):
    """A scan another run on this machine queued on the broker: it outlives this test."""
    shared = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    message = f"another run's scan {uuid4().hex}"
    shared.rpush("chain", message)
    yield
    try:
        assert message.encode() in shared.lrange("chain", 0, -1)
    finally:
        shared.lrem("chain", 0, message)


def test_counting_the_queued_scans_leaves_another_runs_scans_queued(
    another_runs_scan, usdc, chain_queue
):
    assert chains_scan_task() == 1
    assert chain_queue.llen("chain") == 1


def test_beats_keep_at_most_one_scan_per_chain_waiting_and_none_expires(usdc, chain_queue):
    chain = usdc.chain
    # The worker is busy: three beats come and go, one scan waits.
    assert [chains_scan_task() for _beat in range(3)] == [1, 0, 0]
    [message] = chain_queue.lrange("chain", 0, -1)
    message = json.loads(message)
    assert message["headers"]["task"] == "payments.tasks.chain_scan_task"
    assert message["headers"]["expires"] is None
    assert "expires" not in settings.CELERY_BEAT_SCHEDULE["payments-scan-chains"].get("options", {})

    # The worker takes the scan: the next beat queues the following one.
    Chain.objects.filter(pk=chain.pk).update(is_active=False)  # the scan itself returns at once
    chain_scan_task(chain.pk)
    Chain.objects.filter(pk=chain.pk).update(is_active=True)
    assert chains_scan_task() == 1
    assert chain_queue.llen("chain") == 2

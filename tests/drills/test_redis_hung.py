"""A Redis that hangs (SIGSTOP: connections accepted, nothing answered) as cache, broker and
rate-limit store at once: 50 page and API requests during the hang each answer in under 2 s
and none with a 500 (a 503 or a page without the cache); once Redis runs again, everything
answers normally within 5 s. Only the drill's own throwaway redis-server is stopped."""

import os
import signal
import time

import pytest
from django.conf import settings as django_settings
from django.test import Client

from accounts.services import api_key_create
from orders.models import OrderStatus
from tests.drills.processes import wait_until
from tests.factories import OrderFactory

pytestmark = pytest.mark.django_db(transaction=True)

TOKEN = "a-long-monitoring-token-0123456789"
# The acceptance's bounds: no request of the hang takes longer, recovery comes within.
SLOWEST_ANSWER = 2.0
RECOVERY = 5.0


def _timed(client: Client, method: str, url: str, **extra):
    started = time.monotonic()
    response = getattr(client, method)(url, **extra)
    return response, time.monotonic() - started


def test_a_hung_redis_never_hangs_a_page_and_the_store_recovers(
    shared_redis, settings, customer, gpu
):
    settings.HEALTHZ_TOKEN = TOKEN
    _, raw_key = api_key_create(user=customer, name="partner")
    api = {"HTTP_AUTHORIZATION": f"Api-Key {raw_key}"}
    orders = [OrderFactory(user=customer, gpu=gpu) for _ in range(5)]
    visitor, owner = Client(raise_request_exception=False), Client(raise_request_exception=False)
    owner.force_login(customer)
    requests = [
        (visitor, "get", "/fr/", {}),
        (visitor, "get", f"/fr/gpus/{gpu.slug}/", {}),
        (visitor, "get", "/healthz/ready", {}),
        (visitor, "get", "/api/v1/gpus/", api),
        (owner, "get", "/en/account/orders/", {}),
        (visitor, "post", "/fr/accounts/login/", {"data": {"login": customer.email}}),
    ]
    requests += [
        (owner, "post", f"/en/account/orders/{order.number}/cancel/", {}) for order in orders
    ]

    during = [requests[n % len(requests)] for n in range(50)]
    os.kill(shared_redis.process.pid, signal.SIGSTOP)
    answers = [
        (url, *_timed(client, method, url, **extra)) for client, method, url, extra in during
    ]

    slow = [(url, round(took, 2)) for url, _, took in answers if took >= SLOWEST_ANSWER]
    errors = [(url, answer.status_code) for url, answer, _ in answers if answer.status_code == 500]
    assert not slow, slow
    assert not errors, errors
    # The customer's cancellations were made, the queue left to its sweep.
    assert {
        order.status for order in type(orders[0]).objects.filter(pk__in=[o.pk for o in orders])
    } == {OrderStatus.CANCELLED}

    os.kill(shared_redis.process.pid, signal.SIGCONT)
    resumed = time.monotonic()

    def all_answer() -> bool:
        ready = visitor.get("/healthz/ready", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").json()
        return (
            ready["cache"]["ok"]
            and ready["broker"]["ok"]
            and visitor.get("/api/v1/gpus/", **api).status_code == 200
            and visitor.get("/fr/").status_code == 200
        )

    wait_until(all_answer, timeout=RECOVERY, what="the store answering normally again")
    assert time.monotonic() - resumed < RECOVERY
    assert django_settings.REDIS_CACHE_OPTIONS["socket_timeout"] < 1

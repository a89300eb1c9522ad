"""Redis stops answering, refusing connections or hanging: the store keeps showing its catalog
and taking orders (the catalog's per-view cache only makes it faster), and what needs a rate
limit to be safe
(logging in, signing up, the API's throttle) is refused with a 503 that says to retry, never a
500 nor a hung worker."""

import socket
import threading
import time

import pytest
from django.test import Client

from accounts.services import api_key_create
from orders.models import Order
from tests.cache import cache_pointed_at, cache_unreachable
from tests.factories import TERMS_TICKED

pytestmark = pytest.mark.django_db


@pytest.fixture
def redis_down(settings):
    cache_unreachable(settings)


def _client() -> Client:
    return Client(raise_request_exception=False)


def test_visitors_still_browse_the_catalog(redis_down, gpu):
    client = _client()
    for url in ["/fr/", f"/fr/gpus/{gpu.slug}/", f"/en/gpus/{gpu.slug}/configure/"]:
        assert client.get(url).status_code == 200, url


def test_a_customer_still_orders_and_sees_the_order(redis_down, customer, gpu):
    client = _client()
    client.force_login(customer)
    form = {"environment": "pytorch", "quantity": "1", "term": "7", **TERMS_TICKED}
    response = client.post(f"/en/gpus/{gpu.slug}/configure/", form)
    order = Order.objects.get(user=customer)
    assert response.status_code == 302 and order.number in response["Location"]
    assert client.get(response["Location"]).status_code == 200


@pytest.mark.parametrize(
    "url", ["/fr/accounts/login/", "/fr/accounts/signup/", "/fr/accounts/password/reset/"]
)
def test_account_forms_answer_503_with_a_page_saying_to_retry(redis_down, customer, password, url):
    form = {"login": customer.email, "password": password, "email": "new@example.com"}
    response = _client().post(url, form)
    assert response.status_code == 503 and response["Retry-After"] == "30"
    page = response.content.decode()
    assert "Réessayez dans 30 secondes" in page and "vos commandes" in page


def test_the_api_answers_503_in_its_error_shape_and_writes_nothing(redis_down, customer, gpu):
    api_key, raw_key = api_key_create(user=customer, name="partner")
    response = _client().get("/api/v1/gpus/", headers={"Authorization": f"Api-Key {raw_key}"})
    assert response.status_code == 503 and response["Retry-After"] == "30"
    assert response.json()["error"]["code"] == "unavailable"
    api_key.refresh_from_db()
    assert api_key.last_used_at is None  # a refused request did not use the key
    # A made-up key is refused as ever: one indexed lookup, no cache needed.
    unknown = _client().get("/api/v1/gpus/", headers={"Authorization": "Api-Key lg_0_nope"})
    assert unknown.status_code == 401


@pytest.fixture
def redis_hangs(settings):
    """A Redis that accepts connections and never answers (production's socket timeouts)."""
    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    port = listener.getsockname()[1]
    cache_pointed_at(settings, f"redis://127.0.0.1:{port}/0", settings.REDIS_CACHE_OPTIONS)
    yield
    stop.set()
    thread.join()
    for connection in held:
        connection.close()
    listener.close()


def test_a_redis_that_hangs_costs_seconds_not_a_hung_worker(redis_hangs, customer, password, gpu):
    client = _client()
    started = time.monotonic()
    assert client.get("/fr/").status_code == 200
    form = {"login": customer.email, "password": password}
    assert client.post("/fr/accounts/login/", form).status_code == 503
    assert time.monotonic() - started < 20

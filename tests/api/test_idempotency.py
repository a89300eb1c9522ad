import threading

import pytest
from django.db import connection

from accounts.services import api_key_create
from api.models import IdempotencyRecord
from orders.models import Order
from tests.api.conftest import key_client


@pytest.mark.django_db
class TestIdempotencyKey:
    def test_a_replay_returns_the_same_order_with_200(self, api, order_body):
        first = api.post("/api/v1/orders/", order_body, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
        again = api.post("/api/v1/orders/", order_body, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
        assert (first.status_code, again.status_code) == (201, 200)
        assert again.json()["number"] == first.json()["number"]
        assert again.json()["payment"]["address"] == first.json()["payment"]["address"]
        assert Order.objects.count() == 1

    def test_the_same_key_with_another_body_is_a_409(self, api, order_body):
        api.post("/api/v1/orders/", order_body, format="json", HTTP_IDEMPOTENCY_KEY="k-2")
        other = {**order_body, "quantity": 3}
        response = api.post("/api/v1/orders/", other, format="json", HTTP_IDEMPOTENCY_KEY="k-2")
        assert response.status_code == 409
        assert response.json()["error"]["code"] == "idempotency_key_reused"
        assert Order.objects.count() == 1

    def test_another_key_makes_another_order(self, api, order_body):
        for key in ("k-3", "k-4"):
            api.post("/api/v1/orders/", order_body, format="json", HTTP_IDEMPOTENCY_KEY=key)
        assert Order.objects.count() == 2

    def test_another_account_s_same_key_is_its_own(self, api, outsider_api, order_body):
        api.post("/api/v1/orders/", order_body, format="json", HTTP_IDEMPOTENCY_KEY="shared")
        response = outsider_api.post(
            "/api/v1/orders/", order_body, format="json", HTTP_IDEMPOTENCY_KEY="shared"
        )
        assert response.status_code == 201
        assert Order.objects.values("user").distinct().count() == 2

    def test_a_retry_from_another_key_of_the_account_returns_the_same_order(
        self, api, customer, order_body
    ):
        """The README's partner block run twice mints a key each time: the retry is the
        account's, whichever key sends it."""
        first = api.post("/api/v1/orders/", order_body, format="json", HTTP_IDEMPOTENCY_KEY="run")
        second_key = key_client(api_key_create(user=customer, name="second run")[1])
        again = second_key.post(
            "/api/v1/orders/", order_body, format="json", HTTP_IDEMPOTENCY_KEY="run"
        )
        assert (first.status_code, again.status_code) == (201, 200)
        assert again.json()["number"] == first.json()["number"]
        assert Order.objects.count() == 1

    def test_a_refused_order_does_not_burn_the_key(self, api, order_body):
        too_many = {**order_body, "quantity": 9}
        response = api.post("/api/v1/orders/", too_many, format="json", HTTP_IDEMPOTENCY_KEY="k-5")
        assert response.status_code == 409
        assert not IdempotencyRecord.objects.exists()
        response = api.post(
            "/api/v1/orders/", order_body, format="json", HTTP_IDEMPOTENCY_KEY="k-5"
        )
        assert response.status_code == 201


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_requests_with_one_key_create_one_order(customer_key, order_body):
    raw_key = customer_key[1]
    barrier = threading.Barrier(4)
    answers: list[tuple[int, str]] = []

    def place():
        try:
            client = key_client(raw_key)
            barrier.wait(timeout=10)
            response = client.post(
                "/api/v1/orders/", order_body, format="json", HTTP_IDEMPOTENCY_KEY="race"
            )
            answers.append((response.status_code, response.json()["number"]))
        finally:
            connection.close()

    threads = [threading.Thread(target=place) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    assert sorted(status for status, _number in answers) == [200, 200, 200, 201]
    assert len({number for _status, number in answers}) == 1
    assert Order.objects.count() == 1

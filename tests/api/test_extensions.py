"""POST /api/v1/orders/{number}/extensions/: an extension of a rental, paid like an order."""

from datetime import timedelta

import pytest
from django.utils import timezone

from orders.models import Order, OrderStatus
from tests.factories import OrderFactory

S = OrderStatus
pytestmark = pytest.mark.django_db


@pytest.fixture
def rental(customer, gpu):
    now = timezone.now()
    return OrderFactory(
        user=customer,
        gpu=gpu,
        quantity=2,
        status=S.ACTIVE,
        activated_at=now - timedelta(days=1),
        ends_at=now + timedelta(days=2),
        access_host="gpu-12.example.net",
    )


def _extend(api, rental, body, **headers):
    return api.post(f"/api/v1/orders/{rental.number}/extensions/", body, format="json", **headers)


BODY = {"term_days": 7, "asset": "usdc-devnet", "accept_terms": True}


@pytest.mark.parametrize("accept_terms", [None, False])
def test_an_extension_without_the_terms_accepted_is_a_400_naming_accept_terms(
    api, rental, usdc, accept_terms
):
    body = {**BODY, "accept_terms": accept_terms}
    if accept_terms is None:
        del body["accept_terms"]
    response = _extend(api, rental, body)
    assert response.status_code == 400
    assert "accept_terms" in response.json()["error"]["fields"]
    assert not rental.extensions.exists()


def test_an_extension_is_created_with_its_payment_instructions(api, rental, usdc):
    response = _extend(api, rental, BODY)
    assert response.status_code == 201, response.json()
    body = response.json()
    extension = Order.objects.get(number=body["number"])
    assert extension.extends == rental
    assert body["extends"] == rental.number and body["extensions"] == []
    assert body["status"] == "awaiting_payment" and body["term_days"] == 7
    assert body["total"] == "1008.00"  # 72 EUR a day x 7 days x 2 GPUs
    assert body["payment"]["asset"] == "usdc-devnet" and body["payment"]["address"]
    assert body["slots"] == [] and body["ssh_keys"] == []
    assert body["payment_deadline"] is not None

    shown = api.get(f"/api/v1/orders/{rental.number}/").json()
    assert shown["extends"] is None and shown["extensions"] == [extension.number]


def test_a_replay_returns_the_same_extension_and_another_body_is_a_conflict(api, rental, usdc):
    first = _extend(api, rental, BODY, HTTP_IDEMPOTENCY_KEY="ext-1")
    again = _extend(api, rental, BODY, HTTP_IDEMPOTENCY_KEY="ext-1")
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["number"] == first.json()["number"]
    assert again.json()["payment"]["address"] == first.json()["payment"]["address"]

    other = _extend(api, rental, {**BODY, "term_days": 3}, HTTP_IDEMPOTENCY_KEY="ext-1")
    assert other.status_code == 409
    assert other.json()["error"]["code"] == "idempotency_key_reused"
    assert rental.extensions.count() == 1


def test_a_second_extension_while_one_awaits_payment_is_a_conflict(api, rental, usdc):
    first = _extend(api, rental, BODY).json()
    response = _extend(api, rental, {**BODY, "term_days": 3})
    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "extension_pending" and first["number"] in error["message"]


def test_a_bad_term_is_a_400_naming_term_days(api, rental, usdc):
    response = _extend(api, rental, {**BODY, "term_days": 5})
    assert response.status_code == 400
    assert "term_days" in response.json()["error"]["fields"]
    assert not rental.extensions.exists()


def test_an_unpaid_order_or_an_extension_is_not_extended(api, customer, gpu, rental, usdc):
    unpaid = OrderFactory(user=customer, gpu=gpu)
    response = _extend(api, unpaid, BODY)
    assert (response.status_code, response.json()["error"]["code"]) == (409, "not_extendable")
    extension = Order.objects.get(number=_extend(api, rental, BODY).json()["number"])
    response = _extend(api, extension, BODY)
    assert (response.status_code, response.json()["error"]["code"]) == (409, "is_extension")


def test_someone_elses_rental_is_a_404(outsider_api, rental, usdc):
    response = _extend(outsider_api, rental, BODY)
    assert response.status_code == 404
    assert not rental.extensions.exists()

"""One account cannot hold the stock unpaid: past its ceiling of unpaid orders and GPUs an order
is a 409 saying the limit, nothing more is held, and other customers still order."""

import threading

import pytest
from django.db import connection

from accounts.services import api_key_create
from orders.models import Order, OrderStatus
from orders.services import OrderError
from orders.stock import gpus_with_availability
from tests.api.conftest import key_client
from tests.factories import TERMS_TICKED, GpuModelFactory, OrderFactory, order_placed

pytestmark = pytest.mark.django_db

NEW_ACCOUNT_LIMIT = (
    "An account may hold at most 3 unpaid orders and 16 GPUs at once: pay or cancel an "
    "unpaid order, then order again."
)


@pytest.fixture
def models(gpu):
    """Four models of 8 GPUs each: 32 free, twice what a new account may hold."""
    return [gpu, *(GpuModelFactory(slug=f"model-{n}", name=f"Model {n}") for n in range(3))]


def _free(gpu) -> int:
    return gpus_with_availability().get(pk=gpu.pk).available_units


def _order_everything(api, gpu) -> dict:
    body = {
        "gpu": gpu.slug,
        "environment": "pytorch",
        "quantity": _free(gpu),
        "term_days": 7,
        "asset": "usdc-devnet",
        "accept_terms": True,
    }
    response = api.post("/api/v1/orders/", body, format="json")
    return {**response.json(), "http": response.status_code}


def _api(user):
    return key_client(api_key_create(user=user, name="Partner backend")[1])


def test_an_account_ordering_every_free_unit_is_stopped_at_its_ceiling(
    customer, models, outsider, usdc
):
    api = _api(customer)
    answers = [_order_everything(api, gpu) for gpu in models]

    assert [answer["http"] for answer in answers] == [201, 201, 409, 409]
    for refused in answers[2:]:
        assert refused["error"]["code"] == "unpaid_limit"
        assert refused["error"]["message"] == NEW_ACCOUNT_LIMIT
    # The refused attempts held nothing: the catalog still offers those models in full.
    assert [_free(gpu) for gpu in models] == [0, 0, 8, 8]
    assert _order_everything(_api(outsider), models[2])["http"] == 201


def test_the_number_of_unpaid_orders_is_limited_too(customer, gpu, pytorch):
    for _ in range(3):
        order_placed(customer, gpu, pytorch)
    with pytest.raises(OrderError) as refused:
        order_placed(customer, gpu, pytorch)
    assert refused.value.code == "unpaid_limit"
    assert Order.objects.filter(user=customer).count() == 3


def test_an_order_paid_or_cancelled_frees_room_under_the_ceiling(customer, gpu, pytorch):
    orders = [order_placed(customer, gpu, pytorch) for _ in range(3)]
    Order.objects.filter(pk=orders[0].pk).update(status=OrderStatus.CONFIRMING)
    order_placed(customer, gpu, pytorch)  # money on its way for the first: not counted
    with pytest.raises(OrderError):
        order_placed(customer, gpu, pytorch)


def test_an_account_that_has_paid_before_gets_the_higher_ceiling(
    customer, models, pytorch, settings
):
    OrderFactory(user=customer, gpu=models[0], status=OrderStatus.COMPLETED)
    for gpu in models:
        order_placed(customer, gpu, pytorch, quantity=8)  # 32 GPUs, under the 64 allowed
    assert settings.ORDERS_UNPAID_CEILING == {"orders": 5, "units": 64}


def test_the_configurator_says_the_same_sentence(client, customer, models, pytorch):
    for gpu in models[:2]:
        order_placed(customer, gpu, pytorch, quantity=8)
    client.force_login(customer)
    page = client.post(
        f"/en/gpus/{models[2].slug}/configure/",
        {"environment": "pytorch", "quantity": 1, "term": 7, **TERMS_TICKED},
    )
    assert page.status_code == 200
    assert NEW_ACCOUNT_LIMIT in page.content.decode()
    assert _free(models[2]) == 8


@pytest.mark.django_db(transaction=True)
def test_two_orders_sent_at_once_for_two_models_are_counted_one_after_the_other(
    customer, models, pytorch
):
    # 8 + 8 are under the 16 allowed; a third model's 8 at the same time as a fourth's: one.
    for gpu in models[:1]:
        order_placed(customer, gpu, pytorch, quantity=8)
    start = threading.Barrier(2)
    outcomes: list[str] = []

    def buy(gpu):
        try:
            start.wait()
            order_placed(customer, gpu, pytorch, quantity=8)
            outcomes.append("ordered")
        except OrderError as error:
            outcomes.append(error.code)
        finally:
            connection.close()

    threads = [threading.Thread(target=buy, args=(gpu,)) for gpu in models[2:]]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["ordered", "unpaid_limit"]

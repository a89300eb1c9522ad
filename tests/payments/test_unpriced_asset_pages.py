"""A stale feed, as the customer meets it: on the order page, and through the API."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils import timezone, translation

from accounts.services import api_key_create
from orders.models import Order
from payments.models import Invoice
from payments.rates import chain_rates_refresh, rate_set_manually
from tests.api.conftest import key_client
from tests.factories import EnvironmentFactory, GpuModelFactory, OrderFactory
from tests.payments.feeds import FeedsOnChain

pytestmark = [pytest.mark.chain]
SENTENCE = {
    "en": "ETH on Anvil devnet: this payment method is temporarily unavailable",
    "fr": "ETH sur Anvil devnet : ce moyen de paiement est momentanément indisponible",
}


@pytest.fixture
def eth_feed_stale(devnet):
    feeds = FeedsOnChain(devnet)
    feeds.set("ETH/USD", 3510, updated_at=timezone.now() - timedelta(hours=3))
    chain_rates_refresh(chain=devnet.chain)
    return feeds


def payment_url(name, order, lang):
    with translation.override(lang):
        return reverse(f"payments:{name}", args=[order.number])


@pytest.mark.parametrize("lang", ["fr", "en"])
def test_the_order_page_shows_the_asset_disabled_and_refuses_it(
    devnet, eth_feed_stale, client, customer, lang
):
    client.force_login(customer)
    order = OrderFactory(user=customer)
    page = client.get(payment_url("page", order, lang)).content.decode()
    # The label names the reason; the radio cannot be picked, the other asset can.
    assert SENTENCE[lang] in page
    eth_radio = next(line for line in page.split("<input")[1:] if 'value="eth-devnet"' in line)
    usdc_radio = next(line for line in page.split("<input")[1:] if 'value="usdc-devnet"' in line)
    assert " disabled" in eth_radio.split(">")[0]
    assert " disabled" not in usdc_radio.split(">")[0]

    response = client.post(payment_url("issue", order, lang), {"asset": "eth-devnet"})
    assert response.status_code == 400
    assert SENTENCE[lang] in response.content.decode()
    assert not Invoice.objects.exists()


def test_the_api_refuses_an_order_in_that_asset_and_keeps_nothing(devnet, eth_feed_stale, customer):
    gpu = GpuModelFactory(slug="h100-sxm", units_total=8)
    EnvironmentFactory(slug="pytorch")
    api = key_client(api_key_create(user=customer, name="Partner")[1])
    listed = {each["id"]: each["available"] for each in api.get("/api/v1/payment-assets/").json()}
    assert listed == {"eth-devnet": False, "usdc-devnet": True}
    body = {
        "gpu": gpu.slug,
        "environment": "pytorch",
        "quantity": 1,
        "term_days": 3,
        "accept_terms": True,
    }
    # The API answers in English whatever the language asked (api/views/base.py).
    response = api.post(
        "/api/v1/orders/", {**body, "asset": "eth-devnet"}, format="json", HTTP_ACCEPT_LANGUAGE="fr"
    )
    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "stale_rate" and list(error["fields"]) == ["asset"]
    assert SENTENCE["en"] in error["message"]
    assert not Order.objects.exists() and not Invoice.objects.exists()

    response = api.post("/api/v1/orders/", {**body, "asset": "usdc-devnet"}, format="json")
    assert response.status_code == 201
    assert Invoice.objects.get().locked_rate == Decimal("0.85470085")


def test_a_manual_rate_offers_the_asset_again_until_its_expiry(
    devnet, eth_feed_stale, client, customer, staff
):
    from payments.selectors import assets_unpriced

    until = timezone.now() + timedelta(hours=1)
    rate_set_manually(
        asset=devnet.eth,
        rate=Decimal("2900"),
        currency="EUR",
        reason="Feed stale",
        expires_at=until,
        staff_user=staff,
    )
    client.force_login(customer)
    order = OrderFactory(user=customer)
    page = client.get(payment_url("page", order, "en")).content.decode()
    assert SENTENCE["en"] not in page
    assert assets_unpriced(currency="EUR") == set()
    assert devnet.eth.pk in assets_unpriced(currency="EUR", now=until + timedelta(seconds=1))

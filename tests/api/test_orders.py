from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from eth_utils import to_checksum_address

from orders.journal import journal_data, order_journal
from orders.models import Order, OrderEvent, OrderStatus
from payments.models import PaymentClaim
from tests.factories import OrderFactory

pytestmark = pytest.mark.django_db


def test_a_quote_prices_the_configuration_against_live_stock(api, gpu, pytorch):
    body = {"gpu": "h100-sxm", "environment": "pytorch", "quantity": 2, "term_days": 7}
    response = api.post("/api/v1/quotes/", body, format="json")
    assert response.status_code == 200
    assert response.json() == {
        "gpu": "h100-sxm",
        "environment": "pytorch",
        "term_days": 7,
        "daily_rate": "72.00",
        "days": 7,
        "quantity": 2,
        "total": "1008.00",
        "total_incl_vat": "1008.00",
        "total_excl_vat": "840.00",
        "vat_rate": "20.00",
        "vat_amount": "168.00",
        "vat_mode": "standard",
        "currency": "EUR",
        "available_units": 8,
    }


@pytest.mark.parametrize(
    ("vat_number", "split"),
    [
        # A French business pays the same TTC, 20 % of which is VAT it deducts.
        ("FR40303265045", ("1008.00", "840.00", "20.00", "168.00", "standard")),
        # An EU business outside France: reverse charge, the total is the net amount.
        ("DE136695976", ("1008.00", "1008.00", "0.00", "0.00", "reverse_charge")),
    ],
)
def test_a_quote_and_the_order_split_the_total_as_the_business_facture_will(
    api, customer, order_body, vat_number, split
):
    customer.company_name, customer.vat_number = "Calculs SARL", vat_number
    customer.billing_address = "5 place Bellecour\n69002 Lyon"
    customer.save()
    fields = ("total_incl_vat", "total_excl_vat", "vat_rate", "vat_amount", "vat_mode")

    quote = api.post("/api/v1/quotes/", order_body, format="json").json()
    order = api.post("/api/v1/orders/", order_body, format="json").json()

    assert tuple(quote[field] for field in fields) == split
    assert tuple(order[field] for field in fields) == split
    assert quote["total"] == order["total"] == "1008.00"


def test_a_business_order_without_a_billing_address_is_a_400_naming_the_field(
    api, customer, order_body
):
    customer.company_name, customer.vat_number = "Calculs SARL", "FR40303265045"
    customer.save()

    response = api.post("/api/v1/orders/", order_body, format="json")

    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "billing_address_required"
    assert list(error["fields"]) == ["billing_address"]
    assert "billing address" in error["message"]
    assert not Order.objects.filter(user=customer).exists()


def test_a_quote_for_more_units_than_available_is_a_409(api, gpu, pytorch):
    body = {"gpu": "h100-sxm", "environment": "pytorch", "quantity": 9, "term_days": 7}
    response = api.post("/api/v1/quotes/", body, format="json")
    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "not_enough_units"
    assert error["fields"] == {"quantity": ["Not enough units: 8 available right now."]}


def test_placing_an_order_issues_payment_instructions(api, order_body, customer):
    response = api.post("/api/v1/orders/", order_body, format="json")
    assert response.status_code == 201
    order = response.json()
    assert order["status"] == "awaiting_payment"
    assert (order["gpu"], order["environment"], order["quantity"]) == ("h100-sxm", "pytorch", 2)
    assert (order["total"], order["currency"], order["access"]) == ("1008.00", "EUR", None)
    assert [(e["status"], e["actor"]) for e in order["events"]] == [("awaiting_payment", "partner")]
    payment = order["payment"]
    assert payment["asset"] == "usdc-devnet"
    assert (payment["chain_id"], payment["decimals"]) == (31337, 6)
    assert payment["token_address"] == "0x5fbdb2315678afecb367f032d93f642f64180aa3"
    assert payment["amount"] == "1095652174"  # 1008 EUR / 0.92, rounded up
    assert payment["amount_display"] == "1095.652174"
    assert payment["received"] == "0" and payment["flags"] == [] and payment["transfers"] == []
    assert payment["confirmations_required"] == 3
    assert payment["address"].startswith("0x") and len(payment["address"]) == 42
    assert payment["uri"] == (
        f"ethereum:{to_checksum_address(payment['token_address'])}@31337/transfer"
        f"?address={to_checksum_address(payment['address'])}&uint256=1095652174"
    )
    assert Order.objects.get(number=order["number"]).user == customer


def test_payment_in_the_native_coin_has_no_token_address(api, order_body):
    response = api.post("/api/v1/orders/", {**order_body, "asset": "eth-devnet"}, format="json")
    payment = response.json()["payment"]
    assert payment["token_address"] is None
    assert payment["amount"] == str(336 * 10**15)  # 1008 EUR at 3000 EUR/ETH
    address = to_checksum_address(payment["address"])
    assert payment["uri"] == f"ethereum:{address}@31337?value={336 * 10**15}"


def test_payment_assets(api, usdc):
    response = api.get("/api/v1/payment-assets/")
    assert sorted(response.json(), key=lambda asset: asset["id"]) == [
        {
            "id": "eth-devnet",
            "symbol": "ETH",
            "kind": "native",
            "chain_id": 31337,
            "network": "Anvil devnet",
            "token_address": None,
            "decimals": 18,
            "available": True,
        },
        {
            "id": "usdc-devnet",
            "symbol": "USDC",
            "kind": "erc20",
            "chain_id": 31337,
            "network": "Anvil devnet",
            "token_address": "0x5fbdb2315678afecb367f032d93f642f64180aa3",
            "decimals": 6,
            "available": True,
        },
    ]


def test_the_list_shows_own_orders_only_with_a_status_filter(api, customer, outsider, gpu):
    mine = OrderFactory(user=customer, gpu=gpu)
    OrderFactory(user=customer, gpu=gpu, status=OrderStatus.CANCELLED)
    OrderFactory(user=outsider, gpu=gpu)
    response = api.get("/api/v1/orders/")
    assert response.json()["count"] == 2
    response = api.get("/api/v1/orders/?status=awaiting_payment")
    assert [o["number"] for o in response.json()["results"]] == [mine.number]
    assert response.json()["results"][0]["payment"] is None


def test_an_unknown_status_filter_is_a_400(api, db):
    response = api.get("/api/v1/orders/?status=lost")
    assert response.status_code == 400
    assert list(response.json()["error"]["fields"]) == ["status"]


def test_the_order_list_takes_a_fixed_number_of_queries(
    api, order_body, django_assert_max_num_queries
):
    for _ in range(3):
        api.post("/api/v1/orders/", {**order_body, "quantity": 1}, format="json")
    with django_assert_max_num_queries(10):
        assert api.get("/api/v1/orders/").json()["count"] == 3


def test_access_details_appear_once_active(api, customer, gpu):
    order = OrderFactory(
        user=customer,
        gpu=gpu,
        status=OrderStatus.ACTIVE,
        access_host="gpu-12.example.net",
        access_port=2222,
        access_user="ubuntu",
        access_notes="Key-based SSH only.",
    )
    response = api.get(f"/api/v1/orders/{order.number}/")
    assert response.json()["access"] == {
        "host": "gpu-12.example.net",
        "port": 2222,
        "user": "ubuntu",
        "notes": "Key-based SSH only.",
    }


def test_ive_paid_records_a_claim_and_answers_202(api, order_body, customer):
    number = api.post("/api/v1/orders/", order_body, format="json").json()["number"]
    tx_hash = "0x" + "ab" * 32
    response = api.post(f"/api/v1/orders/{number}/paid/", {"tx_hash": tx_hash}, format="json")
    assert response.status_code == 202
    assert response.json()["events"][-1]["kind"] == "payment_claimed"
    claim = PaymentClaim.objects.get(order__number=number)
    assert (claim.tx_hash, claim.user) == (tx_hash, customer)
    assert response.json()["status"] == "awaiting_payment"


def test_ive_paid_without_a_body_is_fine(api, order_body):
    number = api.post("/api/v1/orders/", order_body, format="json").json()["number"]
    assert api.post(f"/api/v1/orders/{number}/paid/").status_code == 202


def test_a_malformed_tx_hash_is_a_400(api, order_body):
    number = api.post("/api/v1/orders/", order_body, format="json").json()["number"]
    response = api.post(f"/api/v1/orders/{number}/paid/", {"tx_hash": "0x12"}, format="json")
    assert response.status_code == 400
    assert list(response.json()["error"]["fields"]) == ["tx_hash"]


def test_ive_paid_has_a_tighter_rate_with_retry_after(api, order_body, settings):
    number = api.post("/api/v1/orders/", order_body, format="json").json()["number"]
    settings.PAYMENTS_CLAIM_ORDER_RATE_LIMIT = {"limit": 2, "period": 60}
    statuses = [api.post(f"/api/v1/orders/{number}/paid/").status_code for _ in range(3)]
    assert statuses == [202, 202, 429]
    response = api.post(f"/api/v1/orders/{number}/paid/")
    assert response.json()["error"]["code"] == "throttled"
    assert 0 < int(response["Retry-After"]) <= 60
    assert api.get(f"/api/v1/orders/{number}/").status_code == 200


def test_the_general_rate_is_per_key(api, outsider_api, gpu, settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"api": "3/min"},
    }
    assert [api.get("/api/v1/gpus/").status_code for _ in range(4)] == [200, 200, 200, 429]
    assert outsider_api.get("/api/v1/gpus/").status_code == 200


def test_cancel_an_unpaid_order(api, order_body):
    number = api.post("/api/v1/orders/", order_body, format="json").json()["number"]
    response = api.post(f"/api/v1/orders/{number}/cancel/", {"reason": "Mistake"}, format="json")
    assert response.status_code == 200
    assert response.json()["status"] == "cancelled"
    event = OrderEvent.objects.filter(order__number=number).last()
    assert (event.new_status, event.actor, event.reason) == ("cancelled", "partner", "Mistake")


def test_cancelling_a_paid_order_is_a_409(api, customer, gpu):
    order = OrderFactory(user=customer, gpu=gpu, status=OrderStatus.PAID)
    response = api.post(f"/api/v1/orders/{order.number}/cancel/")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "not_cancellable"


class TestAnotherAccountsOrder:
    """An outsider's key never learns that someone else's order exists."""

    @pytest.fixture
    def number(self, api, order_body):
        return api.post("/api/v1/orders/", order_body, format="json").json()["number"]

    def test_reading_it_is_a_404(self, outsider_api, number):
        response = outsider_api.get(f"/api/v1/orders/{number}/")
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "not_found"

    def test_claiming_its_payment_is_a_404(self, outsider_api, number):
        assert outsider_api.post(f"/api/v1/orders/{number}/paid/").status_code == 404
        assert not PaymentClaim.objects.exists()

    def test_cancelling_it_is_a_404(self, outsider_api, number):
        assert outsider_api.post(f"/api/v1/orders/{number}/cancel/").status_code == 404
        assert Order.objects.get(number=number).status == OrderStatus.AWAITING_PAYMENT

    def test_it_is_not_in_their_list(self, outsider_api, number):
        assert outsider_api.get("/api/v1/orders/").json()["count"] == 0


class TestReadOnlyKey:
    def test_cannot_order_claim_or_cancel(self, read_only_api, api, order_body):
        number = api.post("/api/v1/orders/", order_body, format="json").json()["number"]
        assert read_only_api.post("/api/v1/orders/", order_body, format="json").status_code == 403
        assert read_only_api.post(f"/api/v1/orders/{number}/paid/").status_code == 403
        assert read_only_api.post(f"/api/v1/orders/{number}/cancel/").status_code == 403
        assert read_only_api.get(f"/api/v1/orders/{number}/").status_code == 200
        assert Order.objects.count() == 1


def test_a_stale_rate_refuses_the_order_and_keeps_nothing(api, order_body, usdc):
    usdc.rates.update(expires_at="2000-01-01T00:00Z")
    response = api.post("/api/v1/orders/", order_body, format="json")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "stale_rate"
    assert list(response.json()["error"]["fields"]) == ["asset"]
    assert not Order.objects.exists()


def test_the_order_total_is_decimal_exact(api, order_body):
    order = api.post("/api/v1/orders/", {**order_body, "term_days": 30}, format="json").json()
    assert Decimal(order["total"]) == Decimal("60.00") * 30 * 2


def test_the_order_gives_its_end_and_its_journal_card(api, customer, gpu):
    started = timezone.now().replace(microsecond=0) - timedelta(days=1)
    order = OrderFactory(
        user=customer,
        gpu=gpu,
        status=OrderStatus.ACTIVE,
        activated_at=started,
        ends_at=started + timedelta(days=7),
        access_host="gpu-12.example.net",
    )
    body = api.get(f"/api/v1/orders/{order.number}/").json()
    assert parse_datetime(body["ends_at"]) == order.ends_at
    assert body["journal"] == journal_data(order_journal(order=order))
    (hold,) = order.slot_holds.all()
    assert body["journal"]["host_and_slots"] == f"{hold.host.name}: GPU {hold.index}"
    assert body["slots"] == [{"host": hold.host.name, "gpus": [hold.index]}]


def test_an_unpaid_order_has_no_journal_and_no_end_yet(api, customer, gpu):
    order = OrderFactory(user=customer, gpu=gpu)
    body = api.get(f"/api/v1/orders/{order.number}/").json()
    assert (body["ends_at"], body["journal"]) == (None, None)

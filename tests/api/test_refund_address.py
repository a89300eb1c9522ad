"""`POST /api/v1/orders/{number}/refund-address/` and the order's `refund`."""

import pytest

from payments.refunds.models import RefundStatus
from tests.payments.helpers import order_with_invoice
from tests.payments.refund_helpers import CUSTOMER_WALLET, overpaid_refund, reload

pytestmark = pytest.mark.django_db


def _give(api, number: str, body: dict):
    return api.post(f"/api/v1/orders/{number}/refund-address/", body, format="json")


@pytest.fixture
def owed(usdc, customer):
    return overpaid_refund(usdc, user=customer)


def test_the_owner_gives_the_address_and_reads_it_back(api, owed):
    response = _give(api, owed.order.number, {"address": CUSTOMER_WALLET})
    assert response.status_code == 200
    refund = response.json()["refund"]
    assert (refund["status"], refund["address"]) == ("address_given", CUSTOMER_WALLET)
    assert owed.order.events.get(kind="refund_address_given").actor == "partner"


def test_a_lower_case_address_needs_its_confirmation(api, owed):
    lower = CUSTOMER_WALLET.lower()
    refused = _give(api, owed.order.number, {"address": lower})
    assert refused.status_code == 400
    error = refused.json()["error"]
    assert error["code"] == "address" and "second time" in error["fields"]["address"][0]
    taken = _give(api, owed.order.number, {"address": lower, "address_confirm": lower})
    assert taken.status_code == 200


@pytest.mark.parametrize("body", [{}, {"address": "0xnope"}, {"address": 42}, {"address": None}])
def test_a_bad_body_is_a_400_naming_the_address(api, owed, body):
    response = _give(api, owed.order.number, body)
    assert response.status_code == 400
    assert "address" in response.json()["error"]["fields"]
    assert reload(owed).status == RefundStatus.OWED


def test_no_refund_owed_is_a_409(api, usdc, customer):
    invoice = order_with_invoice(usdc, user=customer)
    response = _give(api, invoice.order.number, {"address": CUSTOMER_WALLET})
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "no_refund"
    assert api.get(f"/api/v1/orders/{invoice.order.number}/").json()["refund"] is None


def test_once_sent_the_address_can_no_longer_change_409(api, owed):
    type(owed).objects.filter(pk=owed.pk).update(
        status=RefundStatus.SENT, address=CUSTOMER_WALLET.lower(), tx_hash="0x" + "12" * 32
    )
    response = _give(api, owed.order.number, {"address": CUSTOMER_WALLET})
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "refund_sent"


def test_another_accounts_order_is_a_404(outsider_api, owed):
    assert _give(outsider_api, owed.order.number, {"address": CUSTOMER_WALLET}).status_code == 404


def test_a_read_only_key_cannot_give_it(read_only_api, owed):
    assert _give(read_only_api, owed.order.number, {"address": CUSTOMER_WALLET}).status_code == 403

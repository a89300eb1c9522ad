"""The API gives the rate an invoice locked, where it came from, until when it holds, and the
total in the store currency it converts."""

from datetime import datetime
from decimal import Decimal

import pytest

from tests.payments.helpers import order_with_invoice, rate_fresh

pytestmark = [pytest.mark.chain, pytest.mark.django_db]


def test_the_api_gives_the_locked_rate_its_source_its_expiry_and_the_euro_total(
    devnet, customer, api
):
    rate_fresh(devnet.usdc, "0.9203", source="Chainlink")
    invoice = order_with_invoice(devnet.usdc, user=customer, total=Decimal("1008.00"))
    payment = api.get(f"/api/v1/orders/{invoice.order.number}/").json()["payment"]
    assert Decimal(payment["rate"]) == Decimal("0.9203")
    assert payment["rate_source"] == "Chainlink"
    assert datetime.fromisoformat(payment["rate_expires_at"]) == invoice.expires_at
    assert payment["rate_expires_at"] == payment["expires_at"]
    assert payment["fiat_amount"] == "1008.00" and payment["fiat_currency"] == "EUR"

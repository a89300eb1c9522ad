"""One reader of payment progress: the page, its poll, the API and the webhook body agree."""

import json
import re

import pytest

from payments.selectors import in_asset_units
from tests.payments.helpers import order_with_invoice

pytestmark = [pytest.mark.chain, pytest.mark.django_db]


def test_a_payment_shows_the_same_confirmations_and_amounts_everywhere(
    devnet, customer, client, api, receiver, django_capture_on_commit_callbacks
):
    response = api.post("/api/v1/webhooks/", {"url": receiver.url}, format="json")
    assert response.status_code == 201, response.content
    invoice = order_with_invoice(devnet.usdc, user=customer)
    number, asset = invoice.order.number, devnet.usdc
    # Part of the amount, buried well past the 3 confirmations the chain asks for.
    devnet.pay_token(invoice.deposit_address, int(invoice.amount_due) // 2)
    devnet.mine(6)
    with django_capture_on_commit_callbacks(execute=True):
        devnet.scan()

    payment = api.get(f"/api/v1/orders/{number}/").json()["payment"]
    webhook = json.loads(receiver.wait_for(3)[-1].body)["order"]["payment"]
    client.force_login(customer)
    page = client.get(f"/en/account/orders/{number}/").content.decode()
    poll = client.get(f"/en/account/orders/{number}/payment/status/").content.decode()

    # Capped at the number required, the same in the API and the webhook body...
    assert payment["confirmations"] == payment["confirmations_required"] == 3
    assert [t["confirmations"] for t in payment["transfers"]] == [3]
    for field in ("confirmations", "received", "pending", "left", "transfers"):
        assert webhook[field] == payment[field], field
    # ... and on the page and its poll.
    for html in (page, poll):
        assert re.findall(r"(\d+) of (\d+) confirmations", html) == [("3", "3")]
    received = in_asset_units(int(payment["received"]), asset=asset)
    due = in_asset_units(int(payment["amount"]), asset=asset)
    left = in_asset_units(int(payment["left"]), asset=asset)
    assert f"{received} USDC / {due}" in page
    assert f"send {left} USDC more" in page and f"send {left} USDC more" in poll

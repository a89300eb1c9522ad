"""A partner does everything through the API, pays on a real (anvil) chain, and follows the
order to `paid` by polling, while its webhook receiver gets every event, signed."""

import json

import pytest
from django.core.management import call_command

from api.webhooks.signing import signature_valid
from tests.api.conftest import key_client
from tests.factories import EnvironmentFactory, GpuModelFactory

pytestmark = pytest.mark.chain


def test_an_api_only_journey_from_key_to_paid_order(
    devnet, customer, receiver, capsys, django_capture_on_commit_callbacks
):
    GpuModelFactory(slug="h100-sxm", units_total=4)
    EnvironmentFactory(slug="pytorch")

    # The account's owner creates a key from the command line.
    call_command("create_api_key", customer.email, "--name", "Partner backend")
    api = key_client(capsys.readouterr().out.strip().splitlines()[-1])

    hook = api.post("/api/v1/webhooks/", {"url": receiver.url}, format="json").json()

    gpus = {gpu["slug"]: gpu for gpu in api.get("/api/v1/gpus/").json()}
    assert gpus["h100-sxm"]["available_units"] == 4
    assert "pytorch" in {env["slug"] for env in api.get("/api/v1/environments/").json()}
    assets = {asset["id"]: asset for asset in api.get("/api/v1/payment-assets/").json()}
    assert assets["usdc-devnet"]["token_address"] == devnet.node.usdc.lower()

    configuration = {"gpu": "h100-sxm", "environment": "pytorch", "quantity": 2, "term_days": 7}
    quote = api.post("/api/v1/quotes/", configuration, format="json").json()
    assert (quote["total"], quote["available_units"]) == ("1008.00", 4)

    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(
            "/api/v1/orders/",
            {**configuration, "asset": "usdc-devnet", "accept_terms": True},
            format="json",
            HTTP_IDEMPOTENCY_KEY="journey-1",
        )
    assert response.status_code == 201
    order = response.json()
    number, payment = order["number"], order["payment"]
    assert order["total"] == quote["total"]
    assert payment["confirmations_required"] == 3

    tx_hash = devnet.pay_token(payment["address"], int(payment["amount"]))
    devnet.receipt(tx_hash)
    with django_capture_on_commit_callbacks(execute=True):
        claimed = api.post(f"/api/v1/orders/{number}/paid/", {"tx_hash": tx_hash}, format="json")
    assert claimed.status_code == 202

    # Poll as a partner would, while blocks come and the watcher scans.
    statuses = []
    for _ in range(10):
        order = api.get(f"/api/v1/orders/{number}/").json()
        statuses.append(order["status"])
        if order["status"] == "paid":
            break
        devnet.mine(1)
        with django_capture_on_commit_callbacks(execute=True):
            devnet.scan()
    assert statuses[0] == "confirming" and statuses[-1] == "paid"
    payment = order["payment"]
    assert payment["received"] == payment["amount"] and payment["flags"] == []
    assert [t["tx_hash"] for t in payment["transfers"]] == [tx_hash.lower()]
    assert payment["transfers"][0]["status"] == "confirmed"
    assert payment["confirmations"] >= 3

    events = [event["kind"] + ":" + event["status"] for event in order["events"]]
    received = receiver.wait_for(len(events))
    bodies = [json.loads(request.body) for request in received]
    assert [b["event"]["kind"] + ":" + b["event"]["new_status"] for b in bodies] == events
    assert bodies[0]["type"] == "order.created" and bodies[-1]["type"] == "order.status_changed"
    assert bodies[-1]["order"]["status"] == "paid"
    for request in received:
        assert signature_valid(
            secret=hook["secret"], body=request.body, header=request.headers["X-Rental-Signature"]
        )

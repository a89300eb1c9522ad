"""Refunds proven on chain (anvil): owed -> address -> staff's transaction hash -> checked
on chain -> refunded, each wrong transaction refused with its reason, and the customer told
once by e-mail and once by webhook."""

import html
import json
from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone
from django.utils.translation import gettext, override
from web3 import Web3

from accounts.services import api_key_create
from api.webhooks.services import webhook_endpoint_create
from orders.models import OrderStatus
from orders.tasks import orders_dispatch_pending_task
from payments.refunds.models import Refund, RefundStatus
from payments.refunds.services import refund_address_set
from payments.refunds.verify import refund_verify
from payments.tasks import refunds_verify_pending_task
from tests.api.conftest import key_client
from tests.payments.helpers import order_with_invoice, timeline
from tests.payments.refund_helpers import (
    CUSTOMER_WALLET,
    EXTRA,
    OTHER_WALLET,
    overpaid_refund,
    refund_to_send,
    reload,
    staff_pastes,
)

pytestmark = pytest.mark.chain

REFUND_EVENTS = [
    "order.refund_owed",
    "order.refund_address_given",
    "order.refund_sent",
    "order.refund_confirmed",
    "order.refund_rejected",
]


def test_an_overpayment_is_refunded_end_to_end_and_the_customer_is_told_once(
    devnet, customer, staff, client, receiver, worker_runs
):
    webhook_endpoint_create(user=customer, url=receiver.url, events=REFUND_EVENTS)
    api = key_client(api_key_create(user=customer, name="Partner")[1])
    invoice = order_with_invoice(devnet.usdc, user=customer)
    number = invoice.order.number

    # Given a customer who sent 12.50 USDC too many, confirmed on chain.
    with worker_runs():
        devnet.pay_token(invoice.deposit_address, int(invoice.amount_due) + EXTRA)
        devnet.mine(3)
        devnet.scan()
    refund = Refund.objects.get(order__number=number)
    assert (refund.status, refund.amount, refund.asset) == ("owed", EXTRA, devnet.usdc)
    owed = api.get(f"/api/v1/orders/{number}/").json()["refund"]
    assert owed == {
        "amount": str(EXTRA),
        "amount_display": "12.5",
        "asset": "usdc-devnet",
        "decimals": 6,
        "chain_id": 31337,
        "network": devnet.chain.name,
        "address": "",
        "tx_hash": "",
        "status": "owed",
        "rejection": "",
    }

    # When they give their address through the API...
    with worker_runs():
        answer = api.post(
            f"/api/v1/orders/{number}/refund-address/",
            {"address": CUSTOMER_WALLET},
            format="json",
        )
    assert answer.status_code == 200, answer.content
    assert answer.json()["refund"]["address"] == CUSTOMER_WALLET
    client.force_login(staff)
    listing = client.get("/admin/payments/refund/").content.decode()
    assert f"à rembourser : 12,50 USDC sur {devnet.chain.name} (adresse donnée" in listing
    # Opened to be paid, it shows the address, pinned.
    opened = client.post(
        "/admin/payments/refund/",
        {"action": "record_transaction", "_selected_action": [refund.pk]},
    ).content.decode()
    assert f"à rembourser : 12,50 USDC vers {CUSTOMER_WALLET} sur {devnet.chain.name}" in opened

    # ...and staff pay it from their wallet and paste the hash.
    devnet.mint(EXTRA)
    tx_hash = devnet.pay_token(CUSTOMER_WALLET, EXTRA, mint=False)
    devnet.receipt(tx_hash)
    with worker_runs():
        assert staff_pastes(client, refund, tx_hash).status_code == 302
    assert reload(refund).status == RefundStatus.SENT  # 1 confirmation of 3: checking

    # Then, once the transaction is final, the refund is done.
    devnet.mine(2)
    with worker_runs():
        assert refunds_verify_pending_task() == 1
    refund = reload(refund)
    assert (refund.status, refund.amount_sent, refund.tx_hash) == ("confirmed", EXTRA, tx_hash)
    assert refund.staff_user == staff
    done = api.get(f"/api/v1/orders/{number}/").json()
    assert done["status"] == OrderStatus.PAID
    assert (done["refund"]["status"], done["refund"]["tx_hash"]) == ("confirmed", tx_hash)
    assert timeline(refund.order)[-4:] == [
        "refund_owed",
        "refund_address_given",
        "refund_sent",
        "refund_confirmed",
    ]
    page = client_page(client, customer, number)
    assert "Refunded" in page and tx_hash in page

    # One e-mail asking for the address, one saying it is done; one webhook per step.
    subjects = [message.subject for message in mail.outbox]
    assert subjects == [
        f"Paiement reçu pour la commande {number}",
        f"Un remboursement vous est dû pour la commande {number}",
        f"Remboursement envoyé pour la commande {number}",
    ]
    assert "12.5 USDC" in mail.outbox[2].body and tx_hash in mail.outbox[2].body
    received = [json.loads(request.body)["type"] for request in receiver.wait_for(4)]
    assert received == REFUND_EVENTS[:4]
    # A second check, or the sweep of undispatched events, sends nothing more.
    with worker_runs():
        assert refund_verify(refund_id=refund.pk) == "done"
        assert orders_dispatch_pending_task(0) == 0
    assert len(mail.outbox) == 3 and len(receiver.requests) == 4


def client_page(client, user, number: str) -> str:
    client.force_login(user)
    return client.get(f"/en/account/orders/{number}/").content.decode()


@pytest.fixture
def to_send(devnet, customer):
    return refund_to_send(devnet.usdc, user=customer)


@pytest.fixture
def send_and_check(devnet, staff, client, worker_runs):
    """Staff paste `tx_hash` for `refund` once it is final; the check runs as a worker would."""

    def send(refund: Refund, tx_hash: str) -> Refund:
        devnet.mine(3)
        client.force_login(staff)
        with worker_runs():
            response = staff_pastes(client, refund, tx_hash)
        assert response.status_code == 302, response.content.decode()
        return reload(refund)

    return send


def _wrong_asset(devnet):
    return devnet.pay_token(CUSTOMER_WALLET, EXTRA, token=devnet.node.lookalike)


def _ether_instead(devnet):
    return devnet.pay_native(CUSTOMER_WALLET, 10**16)


def _wrong_address(devnet):
    return devnet.pay_token(OTHER_WALLET, EXTRA)


def _too_little(devnet):
    return devnet.pay_token(CUSTOMER_WALLET, EXTRA - 1)


def _reverted(devnet):
    # More than the sender holds: mined, and reverted.
    balance = 10**30
    return devnet.pay_token(CUSTOMER_WALLET, balance, mint=False, gas=100_000)


@pytest.mark.parametrize(
    ("send", "reason"),
    [
        (_wrong_asset, "wrong_asset"),
        (_ether_instead, "wrong_asset"),
        (_wrong_address, "wrong_address"),
        (_too_little, "amount_too_small"),
        (_reverted, "reverted"),
    ],
)
def test_a_transaction_that_does_not_prove_the_refund_is_refused_with_its_reason(
    devnet, to_send, staff, client, send_and_check, send, reason
):
    refund = send_and_check(to_send, send(devnet))
    assert (refund.status, refund.rejection) == ("rejected", reason)
    rejected = refund.order.events.get(kind="refund_rejected")
    assert rejected.reason and rejected.data["rejection"] == reason
    client.force_login(staff)
    page = client.get(f"/admin/payments/refund/{refund.pk}/change/").content.decode()
    assert refund.get_rejection_display() in page

    # Staff send the right transaction and paste it: that one proves the refund.
    refund = send_and_check(refund, devnet.pay_token(CUSTOMER_WALLET, EXTRA))
    assert refund.status == RefundStatus.CONFIRMED
    assert len(mail.outbox) == 1 and "Remboursement envoyé" in mail.outbox[0].subject


def test_a_hash_the_chain_does_not_know_is_checked_again_then_refused(
    to_send, send_and_check, worker_runs
):
    refund = send_and_check(to_send, "0x" + "5a" * 32)
    assert refund.status == RefundStatus.SENT  # it may still be on its way to the node
    Refund.objects.filter(pk=refund.pk).update(sent_at=timezone.now() - timedelta(minutes=3))
    with worker_runs():
        assert refund_verify(refund_id=refund.pk) == "not_found"
    assert (reload(refund).status, reload(refund).rejection) == ("rejected", "not_found")


def test_a_malformed_hash_is_refused_at_once_and_changes_nothing(to_send, staff, client):
    client.force_login(staff)
    response = staff_pastes(client, to_send, "0x1234")
    assert response.status_code == 200
    with override("fr"):
        reason = gettext(
            "A transaction hash is 0x followed by 64 hexadecimal characters (0-9, a-f)."
        )
    assert html.escape(reason) in response.content.decode()
    assert reload(to_send).status == RefundStatus.ADDRESS_GIVEN


def test_a_transaction_proves_one_refund_only(devnet, to_send, customer, client, send_and_check):
    tx_hash = devnet.pay_token(CUSTOMER_WALLET, EXTRA)
    assert send_and_check(to_send, tx_hash).status == RefundStatus.CONFIRMED

    other = overpaid_refund(devnet.usdc, user=customer)
    refund_address_set(order=other.order, address=CUSTOMER_WALLET, user=customer, actor="customer")
    response = staff_pastes(client, other, tx_hash)
    assert response.status_code == 200
    with override("fr"):
        reason = gettext("This transaction already proves another refund.")
    assert html.escape(reason) in response.content.decode()
    assert reload(other).status == RefundStatus.ADDRESS_GIVEN


def test_finality_waits_for_the_confirmations_and_a_canonical_block(
    devnet, to_send, staff, client, worker_runs
):
    tx_hash = devnet.pay_token(CUSTOMER_WALLET, EXTRA)
    devnet.receipt(tx_hash)
    client.force_login(staff)
    with worker_runs():
        staff_pastes(client, to_send, tx_hash)
    assert refund_verify(refund_id=to_send.pk) == "checking"
    devnet.mine(1)
    assert refund_verify(refund_id=to_send.pk) == "checking"  # 2 of 3
    devnet.mine(1)
    assert refund_verify(refund_id=to_send.pk) == "confirmed"


def test_an_ether_refund_is_proven_by_the_value_sent_to_the_address(
    devnet, customer, send_and_check
):
    refund = overpaid_refund(devnet.eth, user=customer, extra=10**15)
    refund_address_set(order=refund.order, address=CUSTOMER_WALLET, user=customer, actor="customer")
    tx_hash = devnet.pay_native(Web3.to_checksum_address(CUSTOMER_WALLET), 10**15)
    refund = send_and_check(reload(refund), tx_hash)
    assert (refund.status, refund.amount_sent) == ("confirmed", 10**15)

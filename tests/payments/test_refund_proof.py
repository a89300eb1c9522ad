"""A refund is proven only by the store's own transfer (from a refund wallet, of the owed asset
and amount, to the address pinned when staff opened it, mined after it was owed), and the
address staff pay never moves under them."""

import html

import pytest
from django.utils.translation import gettext, override

from accounts.services import api_key_create
from orders.models import Order, OrderStatus
from orders.services import order_refund
from payments.devnet import token_transfer
from payments.refunds.models import Refund, RefundStatus
from payments.refunds.services import refund_address_set
from payments.refunds.verify import refund_verify
from tests.api.conftest import key_client
from tests.payments.helpers import order_with_invoice
from tests.payments.refund_helpers import (
    CUSTOMER_WALLET,
    EXTRA,
    OTHER_WALLET,
    refund_to_send,
    reload,
    staff_pastes,
)

pytestmark = pytest.mark.chain


@pytest.fixture
def to_send(devnet, customer):
    return refund_to_send(devnet.usdc, user=customer)


def _customer_pays_themselves(devnet) -> str:
    """The owed amount sent to the refund address from a wallet that is not the store's."""
    outsider = devnet.w3.eth.accounts[2]
    devnet.mint(EXTRA, to=outsider)
    return token_transfer(
        devnet.w3,
        token_address=devnet.node.usdc,
        sender=outsider,
        to=CUSTOMER_WALLET,
        amount=EXTRA,
    )


def test_a_transfer_from_a_wallet_not_the_stores_never_proves_the_refund(
    devnet, to_send, staff, client, worker_runs
):
    tx_hash = _customer_pays_themselves(devnet)
    devnet.mine(3)
    client.force_login(staff)
    with worker_runs():
        assert staff_pastes(client, to_send, tx_hash).status_code == 302
    refund_verify(refund_id=to_send.pk)
    refund = reload(to_send)
    assert (refund.status, refund.rejection) == ("rejected", "wrong_sender")


def test_a_transfer_mined_before_the_refund_was_owed_never_proves_it(
    devnet, customer, staff, client, worker_runs
):
    # The store paid this address before (another matter): that transfer proves nothing now.
    earlier = devnet.pay_token(CUSTOMER_WALLET, EXTRA)
    invoice = order_with_invoice(devnet.usdc, user=customer)
    devnet.pay_token(invoice.deposit_address, int(invoice.amount_due) + EXTRA)
    devnet.mine(3)
    devnet.scan()
    refund = Refund.objects.get(invoice=invoice)
    refund_address_set(order=refund.order, address=CUSTOMER_WALLET, user=customer, actor="customer")
    client.force_login(staff)
    with worker_runs():
        assert staff_pastes(client, refund, earlier).status_code == 302
    refund_verify(refund_id=refund.pk)
    assert (reload(refund).status, reload(refund).rejection) == ("rejected", "too_early")


def test_the_address_staff_were_shown_cannot_change_under_them(
    devnet, to_send, customer, staff, client, worker_runs
):
    api = key_client(api_key_create(user=customer, name="Partner")[1])
    number = to_send.order.number
    # Staff open the refund: the address is pinned, shown with its time.
    client.force_login(staff)
    shown = client.post(
        "/admin/payments/refund/",
        {"action": "record_transaction", "_selected_action": [to_send.pk]},
    ).content.decode()
    assert CUSTOMER_WALLET in shown
    assert reload(to_send).pinned_at is not None

    # The customer tries to change it through the API: refused, it stays.
    changed = api.post(
        f"/api/v1/orders/{number}/refund-address/", {"address": OTHER_WALLET}, format="json"
    )
    assert changed.status_code == 409, changed.content
    assert changed.json()["error"]["code"] == "refund_pinned"
    assert reload(to_send).address == CUSTOMER_WALLET.lower()

    # A form posting another address than the pinned one is refused, never re-targeted.
    Refund.objects.filter(pk=to_send.pk).update(address=OTHER_WALLET.lower())
    tx_hash = devnet.pay_token(CUSTOMER_WALLET, EXTRA)
    devnet.mine(3)
    with worker_runs():
        refused = staff_pastes(client, to_send, tx_hash, address=CUSTOMER_WALLET)
    assert refused.status_code == 200
    with override("fr"):
        reason = gettext(
            "The refund address is not the one this page showed: reload the refund and check "
            "it before sending anything."
        )
    assert html.escape(reason) in refused.content.decode()
    assert reload(to_send).status == RefundStatus.ADDRESS_GIVEN


def test_a_store_transfer_mined_before_staff_refunded_the_order_never_proves_it(
    devnet, customer, staff, client, worker_runs
):
    # Review: the refund of a paid order is owed when staff refund it, not when it was paid.
    invoice = order_with_invoice(devnet.usdc, user=customer)
    devnet.pay_token(invoice.deposit_address, int(invoice.amount_due))
    devnet.mine(3)
    devnet.scan()
    order = Order.objects.get(pk=invoice.order_id)
    assert order.status == OrderStatus.PAID
    # The store pays this address for another matter, after the payment; scanned since.
    earlier = devnet.pay_token(CUSTOMER_WALLET, int(invoice.amount_due))
    devnet.mine(3)
    devnet.scan()
    with worker_runs():
        assert order_refund(order=order, actor_user=staff, reason="GPU failure")
    refund = Refund.objects.get(invoice=invoice)
    refund_address_set(order=order, address=CUSTOMER_WALLET, user=customer, actor="customer")
    client.force_login(staff)
    with worker_runs():
        assert staff_pastes(client, refund, earlier).status_code == 302
    refund_verify(refund_id=refund.pk)
    assert (reload(refund).status, reload(refund).rejection) == ("rejected", "too_early")


def test_staff_pages_name_the_address_to_pay_only_once_it_is_pinned(to_send, staff, client):
    # Review: an address shown before staff open the refund may change before they pay it.
    client.force_login(staff)
    listing = client.get("/admin/payments/refund/").content.decode()
    order_page = client.get(f"/admin/orders/order/{to_send.order_id}/change/").content.decode()
    for page in (listing, order_page):
        assert "à rembourser : 12,50 USDC" in page
        assert CUSTOMER_WALLET not in page and CUSTOMER_WALLET.lower() not in page

    client.post(
        "/admin/payments/refund/",
        {"action": "record_transaction", "_selected_action": [to_send.pk]},
    )
    assert CUSTOMER_WALLET in client.get("/admin/payments/refund/").content.decode()

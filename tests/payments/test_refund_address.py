"""The customer's side of a refund owed: a section of the order page, shown only then, where
they give the address (EIP-55 checked, or typed twice), and where a refund is owed from."""

import pytest
from django.utils.translation import gettext, override

from orders.models import Order, OrderEvent, OrderStatus
from payments.models import Transfer
from payments.refunds.models import Refund, RefundStatus
from payments.watcher.settlement import invoice_settle
from tests.payments.helpers import order_with_invoice, transfer_recorded
from tests.payments.refund_helpers import CUSTOMER_WALLET, EXTRA, overpaid_refund, reload

pytestmark = pytest.mark.django_db

LOWER = CUSTOMER_WALLET.lower()
# One letter's case flipped: what a typo in a checksummed address looks like.
TYPO = CUSTOMER_WALLET[:3] + CUSTOMER_WALLET[3].swapcase() + CUSTOMER_WALLET[4:]


def _page(client, number: str) -> str:
    return client.get(f"/en/account/orders/{number}/").content.decode()


def _give(client, refund: Refund, address: str, confirmation: str = ""):
    return client.post(
        f"/en/account/orders/{refund.order.number}/payment/refund-address/",
        {"address": address, "confirmation": confirmation},
    )


@pytest.fixture
def owed(usdc, customer, client):
    client.force_login(customer)
    return overpaid_refund(usdc, user=customer)


def test_the_section_shows_only_when_a_refund_is_owed(usdc, customer, client):
    client.force_login(customer)
    invoice = order_with_invoice(usdc, user=customer)
    assert 'data-testid="refund-section"' not in _page(client, invoice.order.number)

    owed = overpaid_refund(usdc, user=customer)
    page = _page(client, owed.order.number)
    assert 'data-testid="refund-section"' in page
    assert "12.50 USDC" in page
    # Never prefilled with the address the payment came from.
    assert "0x" + "11" * 20 not in page.lower()


def test_a_checksummed_address_is_taken_and_shown_checksummed(owed, client, customer):
    response = _give(client, owed, CUSTOMER_WALLET)
    assert response.status_code == 302
    refund = reload(owed)
    assert (refund.status, refund.address) == (RefundStatus.ADDRESS_GIVEN, LOWER)
    event = refund.order.events.get(kind=OrderEvent.Kind.REFUND_ADDRESS_GIVEN)
    assert (event.actor, event.actor_user, event.data["address"]) == (
        "customer",
        customer,
        CUSTOMER_WALLET,
    )
    assert CUSTOMER_WALLET in _page(client, owed.order.number)


def test_an_address_without_checksum_is_taken_when_typed_twice(owed, client):
    assert _give(client, owed, LOWER, LOWER.upper().replace("0X", "0x")).status_code == 302
    assert reload(owed).address == LOWER


@pytest.mark.parametrize(
    ("address", "confirmation", "reason"),
    [
        ("0x1234", "", "An address is 0x followed by 40 hexadecimal characters (0-9, a-f)."),
        (
            TYPO,
            "",
            "This address fails its checksum (the mix of capitals): it holds a typo. "
            "Copy it again from your wallet.",
        ),
        (LOWER, "", "This address has no checksum capitals: type it a second time to confirm it."),
        (LOWER, LOWER[:-1] + "0", "The two addresses differ."),
        ("0x" + "0" * 40, "0x" + "0" * 40, "Funds sent to the zero address are lost."),
    ],
    ids=["malformed", "checksum-typo", "not-confirmed", "confirmation-differs", "zero"],
)
def test_a_wrong_address_is_refused_with_its_reason(owed, client, address, confirmation, reason):
    response = _give(client, owed, address, confirmation)
    assert response.status_code == 400
    with override("en"):
        assert gettext(reason).replace("'", "&#x27;") in response.content.decode()
    assert 'data-testid="refund-error"' in response.content.decode()
    refund = reload(owed)
    assert (refund.status, refund.address) == (RefundStatus.OWED, "")


def test_one_of_our_deposit_addresses_is_refused(owed, client):
    deposit = owed.invoice.deposit_address
    response = _give(client, owed, deposit, deposit)
    assert response.status_code == 400
    assert "one of our deposit addresses" in response.content.decode()


def test_an_outsider_cannot_give_the_address(owed, client, outsider):
    client.force_login(outsider)
    assert _give(client, owed, CUSTOMER_WALLET).status_code == 404
    assert reload(owed).status == RefundStatus.OWED


def test_staff_refunding_a_paid_order_owes_everything_it_received(usdc, staff, client):
    invoice = order_with_invoice(usdc)
    transfer_recorded(invoice, status=Transfer.Status.CONFIRMED)
    invoice_settle(invoice_id=invoice.pk)
    assert not Refund.objects.exists()  # paid the exact amount: nothing owed

    client.force_login(staff)
    client.post(f"/admin/orders/order/{invoice.order_id}/action/refund/", {"reason": "GPU failure"})
    refund = Refund.objects.get(order_id=invoice.order_id)
    assert refund.order.status == OrderStatus.REFUNDED
    assert (refund.status, refund.amount) == (RefundStatus.OWED, invoice.amount_due)
    assert refund.order.events.filter(kind=OrderEvent.Kind.REFUND_OWED).count() == 1


def test_money_sent_to_a_cancelled_order_is_owed_back(usdc):
    invoice = order_with_invoice(usdc)
    Order.objects.filter(pk=invoice.order_id).update(status=OrderStatus.CANCELLED)
    transfer_recorded(invoice, amount=EXTRA, status=Transfer.Status.CONFIRMED)
    invoice_settle(invoice_id=invoice.pk)
    assert Refund.objects.get(invoice=invoice).amount == EXTRA


def test_a_further_overpayment_raises_the_refund_not_yet_sent(owed):
    Transfer.objects.filter(invoice=owed.invoice).update(amount=owed.invoice.amount_due + 2 * EXTRA)
    invoice_settle(invoice_id=owed.invoice_id)
    assert reload(owed).amount == 2 * EXTRA
    assert Refund.objects.filter(order=owed.order).count() == 1
    assert owed.order.events.filter(kind=OrderEvent.Kind.REFUND_OWED).count() == 1


def test_an_expired_order_that_may_still_be_revived_owes_nothing_yet(usdc):
    invoice = order_with_invoice(usdc)
    Order.objects.filter(pk=invoice.order_id).update(status=OrderStatus.EXPIRED)
    transfer_recorded(invoice, amount=EXTRA, status=Transfer.Status.CONFIRMED)
    invoice_settle(invoice_id=invoice.pk)
    assert not Refund.objects.exists()

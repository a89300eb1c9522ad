"""A transaction proves one refund at most, even pasted for two orders' refunds at once (their
order locks differ, so only the constraint can tell)."""

import pytest

from payments.refunds.models import Refund, RefundStatus
from payments.refunds.services import refund_address_set, refund_open, refund_tx_submit
from payments.services import PaymentError
from tests.payments.refund_helpers import CUSTOMER_WALLET, OTHER_WALLET, overpaid_refund
from tests.payments.test_lock_order import race

pytestmark = pytest.mark.django_db(transaction=True)


def test_one_hash_pasted_for_two_refunds_at_once_proves_one(usdc, customer, staff):
    refunds = [overpaid_refund(usdc, user=customer) for _ in range(2)]
    for refund in refunds:
        refund_address_set(
            order=refund.order, address=CUSTOMER_WALLET, user=customer, actor="customer"
        )
    tx_hash = "0x" + "7e" * 32

    # Both check that no refund uses the hash yet, then both write it.
    outcome = race(
        pause_after={name: '"payments_refund"."tx_hash" = ' for name in ("first", "second")},
        first=lambda: refund_tx_submit(
            refund=refunds[0], tx_hash=tx_hash, address=CUSTOMER_WALLET, staff_user=staff
        ),
        second=lambda: refund_tx_submit(
            refund=refunds[1], tx_hash=tx_hash, address=CUSTOMER_WALLET, staff_user=staff
        ),
    )

    refused = [error for error in outcome.values() if isinstance(error, PaymentError)]
    assert [error.code for error in refused] == ["already_used"], outcome
    assert Refund.objects.filter(tx_hash=tx_hash, status=RefundStatus.SENT).count() == 1
    assert Refund.objects.filter(status=RefundStatus.ADDRESS_GIVEN).count() == 1


def test_staff_opening_a_refund_while_the_customer_changes_its_address_pay_what_is_pinned(
    usdc, customer, staff
):
    # Review: the pin and a change take the same order lock: staff are shown the address
    # pinned, and a change that comes second is refused, never applied under them.
    refund = overpaid_refund(usdc, user=customer)
    refund_address_set(order=refund.order, address=CUSTOMER_WALLET, user=customer, actor="customer")

    outcome = race(
        staff=lambda: refund_open(refund=refund),
        customer=lambda: refund_address_set(
            order=refund.order, address=OTHER_WALLET, user=customer, actor="customer"
        ),
    )

    shown = outcome["staff"]
    assert isinstance(shown, Refund), outcome
    stored = Refund.objects.get(pk=refund.pk)
    assert stored.pinned_at is not None and stored.address == shown.address
    if isinstance(outcome["customer"], PaymentError):
        assert outcome["customer"].code == "refund_pinned"
        assert stored.address == CUSTOMER_WALLET.lower()
    else:
        assert stored.address == OTHER_WALLET.lower()
    # Whatever the order, staff's form posts the address shown: it is the one accepted.
    refund_tx_submit(
        refund=stored, tx_hash="0x" + "5c" * 32, address=shown.address, staff_user=staff
    )

"""A transaction proves one refund at most, even pasted for two orders' refunds at once (their
order locks differ, so only the constraint can tell)."""

import pytest

from payments.refunds.models import Refund, RefundStatus
from payments.refunds.services import refund_address_set, refund_tx_submit
from payments.services import PaymentError
from tests.payments.refund_helpers import CUSTOMER_WALLET, overpaid_refund
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

"""A customer pays: the order goes through confirming to paid, and the timeline says so."""

from decimal import Decimal

import pytest

from orders.models import OrderStatus
from tests.payments.helpers import order_with_invoice, reload, timeline

pytestmark = pytest.mark.chain


def test_exact_usdc_payment_confirms_then_pays_after_n_confirmations(
    devnet, django_capture_on_commit_callbacks, mailoutbox
):
    invoice = order_with_invoice(devnet.usdc)
    assert invoice.amount_due == Decimal(547_826_087)  # 504 EUR / 0.92, rounded up, 6 decimals

    with django_capture_on_commit_callbacks(execute=True):
        devnet.pay_token(invoice.deposit_address, int(invoice.amount_due))
        devnet.scan()
    invoice, order = reload(invoice)
    assert order.status == OrderStatus.CONFIRMING
    assert invoice.amount_pending == invoice.amount_due

    devnet.mine(1)  # 2 confirmations of 3
    devnet.scan()
    assert reload(invoice)[1].status == OrderStatus.CONFIRMING

    with django_capture_on_commit_callbacks(execute=True):
        devnet.mine(1)
        devnet.scan()
    invoice, order = reload(invoice)
    assert order.status == OrderStatus.PAID
    assert invoice.status == invoice.Status.PAID
    assert invoice.amount_received == invoice.amount_due and not invoice.flags
    assert timeline(order) == ["transfer_seen", "confirming", "transfer_confirmed", "paid"]
    assert len(mailoutbox) == 1


def test_exact_eth_payment_confirms_then_pays(devnet, django_capture_on_commit_callbacks):
    invoice = order_with_invoice(devnet.eth, total=Decimal("300.00"))
    assert invoice.amount_due == Decimal(10**17)  # 300 EUR at 3000 EUR/ETH

    devnet.pay_native(invoice.deposit_address, int(invoice.amount_due))
    devnet.scan()
    assert reload(invoice)[1].status == OrderStatus.CONFIRMING
    devnet.mine(2)
    devnet.scan()
    invoice, order = reload(invoice)
    assert order.status == OrderStatus.PAID
    assert timeline(order) == ["transfer_seen", "confirming", "transfer_confirmed", "paid"]

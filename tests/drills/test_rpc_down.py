"""Drill 3: the chain's RPC is down for 20 blocks that hold two payments.

tests/payments/test_watcher.py::test_rpc_down_fails_cleanly_and_the_payment_is_credited_after_recovery
proves one failed scan over 3 blocks. Here the outage lasts 20 blocks, the beat keeps
scanning through it (one scan per block), the node is either unreachable or answering 429,
and the catch-up after recovery spans several block ranges.
"""

from collections import Counter

import pytest

from orders.models import OrderEvent, OrderStatus
from payments.models import ScanCursor, Transfer
from tests.anvil import free_port
from tests.payments.helpers import order_with_invoice, reload
from tests.payments.proxy import FlakyRpcProxy

pytestmark = pytest.mark.chain

OUTAGE_BLOCKS = 20


@pytest.mark.parametrize("outage", ["unreachable", "throttled"])
def test_rpc_down_for_20_blocks_holding_two_payments_credits_each_once_after(
    devnet, settings, outage
):
    settings.PAYMENTS_RPC_RETRIES = 0
    ScanCursor.objects.filter(chain=devnet.chain).update(block_range=4)
    invoices = [order_with_invoice(devnet.usdc) for _ in range(2)]
    with FlakyRpcProxy(devnet.node.url) as proxy:
        if outage == "unreachable":
            devnet.rpc_url_use(f"http://127.0.0.1:{free_port()}")
        else:
            devnet.rpc_url_use(proxy.url)
            proxy.throttle = 10**6
        before = ScanCursor.objects.get(chain=devnet.chain)
        payments_at = {4: invoices[0], 12: invoices[1]}
        down_from = devnet.head()
        while devnet.head() - down_from < OUTAGE_BLOCKS:
            invoice = payments_at.pop(devnet.head() - down_from, None)
            if invoice is not None:
                devnet.pay_token(invoice.deposit_address, int(invoice.amount_due))
            else:
                devnet.mine()
            report = devnet.scan()  # the beat goes on during the outage
            assert report.error
            cursor = ScanCursor.objects.get(chain=devnet.chain)
            assert (cursor.block_number, cursor.block_hash) == (
                before.block_number,
                before.block_hash,
            )
            assert cursor.last_error
        assert not payments_at, "both payments landed inside the outage"
        assert not Transfer.objects.exists()

        devnet.rpc_url_use(proxy.url)
        proxy.throttle = 0
        report = devnet.scan()

    assert not report.error
    cursor = ScanCursor.objects.get(chain=devnet.chain)
    assert cursor.block_number == devnet.head() and cursor.last_error == ""
    assert report.blocks >= OUTAGE_BLOCKS
    for invoice in invoices:
        invoice, order = reload(invoice)
        assert order.status == OrderStatus.PAID
        assert Transfer.objects.filter(invoice=invoice).count() == 1
        kinds = Counter(order.events.values_list("kind", flat=True))
        assert kinds[OrderEvent.Kind.TRANSFER_SEEN] == 1
        assert kinds[OrderEvent.Kind.TRANSFER_CONFIRMED] == 1
    # A second scan after the catch-up finds nothing new to credit.
    devnet.scan()
    assert Transfer.objects.count() == 2

"""The watcher's cost follows the store's invoices, not the chain's traffic."""

from decimal import Decimal

import pytest

from orders.models import OrderStatus
from payments.models import NATIVE_LOG_INDEX, ScanCursor
from payments.watcher.scanner import chain_scan
from tests.payments.helpers import order_with_invoice, reload
from tests.payments.proxy import FlakyRpcProxy

pytestmark = pytest.mark.chain


def _stranger(n: int) -> str:
    return f"0x{0xBEEF:04x}{n:036x}"


def _strangers_trade(devnet, *, token_transfers: int, eth_transfers: int) -> None:
    """One block full of transfers between strangers, like any block of a busy chain."""
    devnet.mint(token_transfers)
    devnet.automine(False)
    try:
        for n in range(token_transfers):
            devnet.pay_token(_stranger(n), 1, mint=False, gas=100_000)
        for n in range(eth_transfers):
            devnet.pay_native(_stranger(n), 1, gas=21_000)
        devnet.mine()
    finally:
        devnet.automine(True)


def _scan_through_proxy(devnet) -> FlakyRpcProxy:
    """A scan of what the chain holds past the cursor, its calls counted by a proxy."""
    with FlakyRpcProxy(devnet.node.url) as proxy:
        devnet.rpc_url_use(proxy.url)
        chain_scan(chain=devnet.chain)
    devnet.rpc_url_use(devnet.node.url)
    assert ScanCursor.objects.get(chain=devnet.chain).block_number == devnet.head()
    return proxy


def _paid_range(devnet, invoice, *, busy: bool) -> FlakyRpcProxy:
    """Ten blocks, one paying `invoice`, and (if busy) one full of strangers' transfers."""
    devnet.scan()
    if busy:
        _strangers_trade(devnet, token_transfers=60, eth_transfers=20)
    devnet.pay_token(invoice.deposit_address, int(invoice.amount_due))  # mint + pay
    devnet.mine(10 - 2 - busy)
    return _scan_through_proxy(devnet)


def test_strangers_token_and_ether_traffic_does_not_grow_what_the_scan_downloads(devnet):
    quiet = _paid_range(devnet, order_with_invoice(devnet.usdc), busy=False)
    busy = _paid_range(devnet, order_with_invoice(devnet.usdc), busy=True)

    # Before: every Transfer log of the token and every block in full came down (5x here).
    assert busy.bytes_answered <= 1.2 * quiet.bytes_answered, (quiet.calls, busy.calls)
    assert busy.calls == quiet.calls


def test_no_block_is_fetched_in_full_while_no_eth_invoice_is_watched(devnet):
    invoice = order_with_invoice(devnet.usdc)
    proxy = _paid_range(devnet, invoice, busy=True)

    assert proxy.full_blocks == 0 and proxy.calls["eth_getBalance"] == 0
    assert reload(invoice)[1].status == OrderStatus.PAID


def test_an_eth_payment_is_found_by_its_balance_and_only_its_block_is_fetched_in_full(devnet):
    invoice = order_with_invoice(devnet.eth, total=Decimal("300.00"))
    other = order_with_invoice(devnet.eth, total=Decimal("300.00"))
    devnet.scan()
    devnet.mine(7)
    tx = devnet.pay_native(invoice.deposit_address, int(invoice.amount_due))
    devnet.mine(12)

    proxy = _scan_through_proxy(devnet)

    invoice, order = reload(invoice)
    assert order.status == OrderStatus.PAID
    transfer = invoice.transfers.get()
    assert (transfer.tx_hash, transfer.log_index) == (tx, NATIVE_LOG_INDEX)
    assert transfer.block_number == devnet.receipt(tx)["blockNumber"]
    assert not other.transfers.exists()
    # Before: all 20 blocks came with their transactions.
    assert proxy.full_blocks == 1


def test_a_reverted_eth_payment_in_a_busy_block_is_not_credited(devnet):
    invoice = order_with_invoice(devnet.eth, total=Decimal("300.00"))
    devnet.scan()
    devnet.node.rpc("anvil_setCode", [invoice.deposit_address, "0x60006000fd"])
    devnet.pay_native(invoice.deposit_address, int(invoice.amount_due), gas=100_000)
    _strangers_trade(devnet, token_transfers=5, eth_transfers=5)
    devnet.mine(3)
    devnet.scan()
    devnet.node.rpc("anvil_setCode", [invoice.deposit_address, "0x"])

    invoice, order = reload(invoice)
    assert not invoice.transfers.exists() and order.status == OrderStatus.AWAITING_PAYMENT

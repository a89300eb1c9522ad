"""A customer pays: the order goes through confirming to paid, and the timeline says so."""

from decimal import Decimal

import pytest

from orders.models import OrderStatus
from payments.ledger import invoice_ledger
from payments.watcher.internal_transfers import native_balances_check
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


def test_underpayment_then_top_up_pays_the_order(devnet):
    invoice = order_with_invoice(devnet.usdc)
    due = int(invoice.amount_due)

    devnet.pay_token(invoice.deposit_address, due - 100_000_000)
    devnet.mine(3)
    devnet.scan()
    invoice, order = reload(invoice)
    assert order.status == OrderStatus.AWAITING_PAYMENT
    assert invoice.underpaid
    assert invoice.amount_left == Decimal(100_000_000)
    assert timeline(order) == ["transfer_seen", "payment_flagged", "transfer_confirmed"]

    devnet.pay_token(invoice.deposit_address, 100_000_000)
    devnet.mine(3)
    devnet.scan()
    invoice, order = reload(invoice)
    assert order.status == OrderStatus.PAID
    assert invoice.amount_received == due and invoice.amount_left == 0
    assert not invoice.underpaid and invoice.multiple


def test_overpayment_pays_and_shows_the_refund_owed(devnet):
    invoice = order_with_invoice(devnet.usdc)
    devnet.pay_token(invoice.deposit_address, int(invoice.amount_due) + 5_000_000)
    devnet.mine(3)
    devnet.scan()
    invoice, order = reload(invoice)
    assert order.status == OrderStatus.PAID
    assert invoice.overpaid
    assert invoice_ledger(invoice=invoice).owed(invoice=invoice, order=order) == 5_000_000
    flagged = order.events.get(kind="payment_flagged")
    assert flagged.data["flag"] == "overpaid" and flagged.data["refund_owed"] == "5000000"


def test_two_transfers_in_one_block_are_both_counted(devnet):
    invoice = order_with_invoice(devnet.usdc)
    half = int(invoice.amount_due) // 2
    devnet.mint(int(invoice.amount_due))
    devnet.automine(False)
    try:
        devnet.pay_token(invoice.deposit_address, half, mint=False)
        devnet.pay_token(invoice.deposit_address, int(invoice.amount_due) - half, mint=False)
        devnet.mine(1)
    finally:
        devnet.automine(True)
    devnet.mine(2)
    devnet.scan()
    invoice, order = reload(invoice)
    transfers = list(invoice.transfers.all())
    assert len(transfers) == 2 and transfers[0].block_number == transfers[1].block_number
    assert order.status == OrderStatus.PAID and invoice.multiple


def test_two_transfers_in_one_transaction_are_both_counted(devnet):
    from payments.devnet import token

    invoice = order_with_invoice(devnet.usdc)
    due = int(invoice.amount_due)
    devnet.mint(due)
    address = devnet.w3.to_checksum_address(invoice.deposit_address)
    tx = (
        token(devnet.w3, devnet.node.usdc)
        .functions.transferMany([address, address], [due - 1, 1])
        .transact({"from": devnet.payer})
    )
    devnet.receipt(tx)
    devnet.mine(2)
    devnet.scan()
    invoice, order = reload(invoice)
    assert {t.log_index for t in invoice.transfers.all()} == {0, 1}
    assert order.status == OrderStatus.PAID


def test_a_lookalike_token_with_the_same_symbol_is_ignored(devnet):
    invoice = order_with_invoice(devnet.usdc)
    devnet.pay_token(invoice.deposit_address, int(invoice.amount_due), token=devnet.node.lookalike)
    devnet.mine(3)
    devnet.scan()
    invoice, order = reload(invoice)
    assert not invoice.transfers.exists()
    assert order.status == OrderStatus.AWAITING_PAYMENT and not order.events.exists()


def test_a_reverted_transaction_is_not_credited(devnet):
    invoice = order_with_invoice(devnet.eth, total=Decimal("300.00"))
    # Code that always reverts at the deposit address: the value transfer is undone.
    devnet.node.rpc("anvil_setCode", [invoice.deposit_address, "0x60006000fd"])
    tx = devnet.pay_native(invoice.deposit_address, int(invoice.amount_due), gas=100_000)
    assert devnet.receipt(tx)["status"] == 0
    # An ERC-20 transfer beyond the payer's balance reverts too (and emits no log).
    usdc_tx = devnet.pay_token(invoice.deposit_address, 10**15, mint=False, gas=100_000)
    devnet.mine(3)
    devnet.scan()
    devnet.node.rpc("anvil_setCode", [invoice.deposit_address, "0x"])
    assert devnet.receipt(usdc_tx)["status"] == 0
    invoice, order = reload(invoice)
    assert not invoice.transfers.exists() and order.status == OrderStatus.AWAITING_PAYMENT


def test_another_known_asset_to_the_address_is_flagged_wrong_asset(devnet):
    invoice = order_with_invoice(devnet.usdc)
    devnet.pay_native(invoice.deposit_address, 10**16)
    devnet.mine(3)
    devnet.scan()
    # The scan reads the balances of ETH invoices only; the periodic balance check covers
    # every watched address.
    native_balances_check(chain=devnet.chain)
    invoice, order = reload(invoice)
    assert invoice.wrong_asset and invoice.amount_received == 0
    assert order.status == OrderStatus.AWAITING_PAYMENT
    assert invoice.transfers.get().disposition == "wrong_asset"

"""ETH sent by a contract (an internal transaction: Safe wallets, batched payouts) is credited,
or flagged for staff with its amount: never ignored."""

from decimal import Decimal
from importlib import import_module

import pytest
from django.utils import translation

from orders.models import OrderEvent, OrderStatus
from payments.devnet import ETH_SLUG
from payments.models import NATIVE_LOG_INDEX, Asset, Chain, ScanCursor, Transfer
from payments.services import payment_claim_record
from payments.watcher.internal_transfers import native_balances_check
from payments.watcher.rpc import RpcClient
from tests.payments.helpers import order_with_invoice, reload, timeline
from tests.payments.proxy import FlakyRpcProxy

pytestmark = pytest.mark.chain


def beat(settings) -> None:
    """One round of the payment watcher's periodic tasks, in the order beat lists them."""
    for entry in settings.CELERY_BEAT_SCHEDULE.values():
        module, name = entry["task"].rsplit(".", 1)
        if module == "payments.tasks":
            getattr(import_module(module), name).apply()


def eth_invoice(**fields):
    return order_with_invoice(Asset.objects.get(slug=ETH_SLUG), total=Decimal("300.00"), **fields)


def test_eth_forwarded_by_a_contract_pays_the_order_through_the_periodic_balance_check(
    devnet, settings
):
    invoice = eth_invoice()
    tx = devnet.pay_through_contract({invoice.deposit_address: int(invoice.amount_due)})
    assert devnet.receipt(tx)["status"] == 1

    beat(settings)
    assert reload(invoice)[1].status == OrderStatus.CONFIRMING
    devnet.mine(2)
    beat(settings)

    invoice, order = reload(invoice)
    assert order.status == OrderStatus.PAID
    transfer = invoice.transfers.get()
    assert (transfer.tx_hash, transfer.amount) == (tx, invoice.amount_due)
    assert transfer.from_address == devnet.node.forwarder
    assert transfer.log_index < NATIVE_LOG_INDEX and transfer.status == Transfer.Status.CONFIRMED
    assert transfer.block_hash == devnet.receipt(tx)["blockHash"].to_0x_hex()
    assert timeline(order) == ["transfer_seen", "confirming", "transfer_confirmed", "paid"]
    assert not invoice.flags


def test_eth_forwarded_by_a_contract_is_credited_at_once_on_ive_paid_with_its_hash(
    devnet, customer, django_capture_on_commit_callbacks
):
    devnet.scan()
    invoice = eth_invoice(user=customer)
    tx = devnet.pay_through_contract({invoice.deposit_address: int(invoice.amount_due)})
    devnet.receipt(tx)
    cursor_before = ScanCursor.objects.get(chain=devnet.chain).block_number

    with django_capture_on_commit_callbacks(execute=True):
        payment_claim_record(order=invoice.order, user=customer, tx_hash=tx)

    # Credited from the transaction's trace, without waiting for a scan.
    assert ScanCursor.objects.get(chain=devnet.chain).block_number == cursor_before
    assert reload(invoice)[1].status == OrderStatus.CONFIRMING
    devnet.mine(2)
    devnet.scan()
    invoice, order = reload(invoice)
    assert order.status == OrderStatus.PAID
    assert list(invoice.transfers.values_list("tx_hash", "amount")) == [(tx, invoice.amount_due)]


def test_a_batched_payout_is_recorded_once_per_recipient_when_both_paths_see_it(
    devnet, customer, settings, django_capture_on_commit_callbacks
):
    first, second = eth_invoice(user=customer), eth_invoice()
    tx = devnet.pay_through_contract(
        {invoice.deposit_address: int(invoice.amount_due) for invoice in (first, second)}
    )
    devnet.receipt(tx)

    with django_capture_on_commit_callbacks(execute=True):
        payment_claim_record(order=first.order, user=customer, tx_hash=tx)
        beat(settings)
        beat(settings)
        devnet.mine(2)
        beat(settings)

    for invoice in (first, second):
        invoice, order = reload(invoice)
        assert order.status == OrderStatus.PAID
        assert list(invoice.transfers.values_list("tx_hash", "amount")) == [
            (tx, invoice.amount_due)
        ]
        assert timeline(order).count("transfer_seen") == 1
    assert Transfer.objects.filter(tx_hash=tx).count() == 2


def test_a_direct_eth_payment_is_not_counted_again_by_the_balance_check(devnet, settings):
    invoice = eth_invoice()
    devnet.pay_native(invoice.deposit_address, int(invoice.amount_due))
    beat(settings)
    devnet.mine(2)
    beat(settings)

    invoice, order = reload(invoice)
    assert order.status == OrderStatus.PAID
    assert invoice.transfers.get().log_index == NATIVE_LOG_INDEX
    assert invoice.amount_received == invoice.amount_due and not invoice.flags


def test_a_node_without_traces_flags_the_surplus_for_staff_with_its_amount(devnet, settings):
    invoice = eth_invoice()
    with FlakyRpcProxy(devnet.node.url, tracing=False) as proxy:
        Chain.objects.filter(pk=devnet.chain.pk).update(default_rpc_url=proxy.url)
        tx = devnet.pay_through_contract({invoice.deposit_address: int(invoice.amount_due)})
        devnet.receipt(tx)
        beat(settings)
        beat(settings)
    assert proxy.refused_methods

    invoice, order = reload(invoice)
    assert order.status == OrderStatus.AWAITING_PAYMENT
    assert invoice.review and not invoice.transfers.exists()
    flagged = order.events.get(kind=OrderEvent.Kind.PAYMENT_FLAGGED)  # once, not every round
    assert flagged.reason == "funds received without a visible transaction"
    assert flagged.data["flag"] == "review"
    assert flagged.data["amount"] == str(invoice.amount_due)
    with translation.override("fr"):
        assert translation.gettext(flagged.reason) == "fonds reçus sans transaction visible"


def test_a_reorg_removing_the_forwarded_payment_sends_the_order_back_to_awaiting_payment(
    devnet, settings
):
    invoice = eth_invoice()
    before = devnet.snapshot()
    devnet.receipt(devnet.pay_through_contract({invoice.deposit_address: int(invoice.amount_due)}))
    beat(settings)
    assert reload(invoice)[1].status == OrderStatus.CONFIRMING

    devnet.revert(before)  # the block with the contract's payment is gone
    devnet.mine(5)
    beat(settings)

    invoice, order = reload(invoice)
    assert invoice.transfers.get().status == Transfer.Status.ORPHANED
    assert order.status == OrderStatus.AWAITING_PAYMENT and not invoice.flags


def test_explained_balances_cost_one_batched_request_and_no_trace(devnet):
    invoices = [eth_invoice() for _ in range(3)]
    devnet.pay_native(invoices[0].deposit_address, int(invoices[0].amount_due))
    devnet.scan()
    client = RpcClient(devnet.node.url)

    report = native_balances_check(chain=devnet.chain, client=client)

    assert report.checked == 3 and not report.traced_blocks and not report.unexplained
    assert client.calls == {"eth_getBalance": 3} and client.http_requests == 1

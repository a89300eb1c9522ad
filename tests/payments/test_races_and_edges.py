"""Edge cases found in review: a currency switch racing a scan, a node that lags, checksum-case
token addresses, a chain not watched yet, staff marking an expired order paid."""

import threading
from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.utils import timezone

from orders.models import Order, OrderStatus
from payments.models import Asset, Invoice, ScanCursor, Transfer
from payments.services import PaymentError, invoice_issue, invoice_mark_paid
from payments.watcher import settlement
from payments.watcher.rpc import RpcClient
from tests.factories import OrderFactory
from tests.payments.helpers import order_with_invoice, reload

pytestmark = pytest.mark.chain


@pytest.mark.django_db(transaction=True)
def test_a_currency_switch_during_a_scan_waits_and_the_paid_address_stays(devnet, monkeypatch):
    invoice = order_with_invoice(devnet.usdc)
    devnet.pay_token(invoice.deposit_address, int(invoice.amount_due))
    devnet.mine(5)
    decided, release = threading.Event(), threading.Event()
    decide = settlement._disposition

    def decide_then_pause(**kwargs):
        result = decide(**kwargs)
        decided.set()
        release.wait(10)
        return result

    monkeypatch.setattr(settlement, "_disposition", decide_then_pause)
    outcome: dict[str, object] = {}

    def run(name, work):
        try:
            outcome[name] = work()
        except PaymentError as error:
            outcome[name] = error.code
        finally:
            connection.close()

    scan = threading.Thread(target=run, args=("scan", devnet.scan))
    scan.start()
    assert decided.wait(10)
    switch = threading.Thread(
        target=run, args=("switch", lambda: invoice_issue(order=invoice.order, asset=devnet.eth))
    )
    switch.start()
    switch.join(0.5)
    assert switch.is_alive(), "the switch waits for the scan holding the order"
    release.set()
    scan.join(20)
    switch.join(20)

    # Re-checked under the lock: the order the switch waited for is paid by now.
    assert outcome["switch"] == "not_payable"
    invoice, order = reload(invoice)
    assert invoice.transfers.get().disposition == Transfer.Disposition.CREDIT
    assert Invoice.objects.filter(order=order).count() == 1
    assert order.status == OrderStatus.PAID


class NodeMissingOneBlock(RpcClient):
    """A node behind its peers (or a load balancer's other node): one block answers null."""

    missing: int | None = None

    def batch(self, method, params_list):
        answers = super().batch(method, params_list)
        if method != "eth_getBlockByNumber":
            return answers
        return [
            None if int(params[0], 16) == self.missing else answer
            for params, answer in zip(params_list, answers, strict=True)
        ]


@pytest.mark.django_db
def test_a_block_the_node_does_not_return_leaves_the_transfer_waiting(devnet):
    invoice = order_with_invoice(devnet.usdc)
    devnet.pay_token(invoice.deposit_address, int(invoice.amount_due))
    devnet.scan()
    block = invoice.transfers.get().block_number
    devnet.mine(5)
    lagging = NodeMissingOneBlock(devnet.chain.rpc_url)
    lagging.missing = block
    devnet.scan(client=lagging)
    invoice, order = reload(invoice)
    assert invoice.transfers.get().status == Transfer.Status.SEEN
    devnet.scan()
    invoice, order = reload(invoice)
    assert invoice.transfers.get().status == Transfer.Status.CONFIRMED
    assert order.status == OrderStatus.PAID


@pytest.mark.django_db
def test_a_token_address_pasted_in_checksum_case_is_stored_in_lower_case(devnet):
    asset = Asset(
        slug="usdc-pasted",
        chain=devnet.chain,
        kind=Asset.Kind.ERC20,
        symbol="USDC",
        name="USD Coin",
        contract_address=devnet.w3.to_checksum_address(devnet.node.lookalike),
        decimals=6,
    )
    asset.full_clean()
    assert asset.contract_address == devnet.node.lookalike.lower()
    asset.contract_address = "0x1234"
    with pytest.raises(ValidationError):
        asset.full_clean()


@pytest.mark.django_db
def test_no_address_is_handed_out_on_a_chain_not_watched_yet(devnet):
    ScanCursor.objects.filter(chain=devnet.chain).delete()
    with pytest.raises(PaymentError) as refusal:
        order_with_invoice(devnet.usdc)
    assert refusal.value.code == "asset"
    assert not Invoice.objects.exists()


@pytest.mark.django_db
def test_a_chain_without_tokens_asks_the_node_for_no_logs(devnet):
    Asset.objects.filter(chain=devnet.chain, kind=Asset.Kind.ERC20).delete()
    client = RpcClient(devnet.chain.rpc_url)
    devnet.mine(3)
    devnet.scan(client=client)
    assert client.calls["eth_getLogs"] == 0


@pytest.mark.django_db
def test_staff_cannot_mark_paid_an_expired_order_whose_units_went_elsewhere(devnet, staff):
    invoice = order_with_invoice(devnet.usdc)
    order = invoice.order
    Order.objects.filter(pk=order.pk).update(
        status=OrderStatus.EXPIRED, payment_deadline=timezone.now() - timedelta(minutes=1)
    )
    OrderFactory(gpu=order.gpu, quantity=order.gpu.units_total, status=OrderStatus.PAID)
    with pytest.raises(PaymentError) as refusal:
        invoice_mark_paid(invoice=invoice, staff_user=staff, reason="paid by bank transfer")
    assert refusal.value.code == "no_units"
    order.refresh_from_db()
    assert order.status == OrderStatus.EXPIRED

"""Reorganisations, late payments and replaced invoices."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from orders.models import Order, OrderStatus
from orders.services import OrderError, order_provisioning_start
from payments.models import Invoice, Transfer
from payments.services import invoice_issue
from payments.watcher.invoice_check import invoice_check
from tests.factories import OrderFactory
from tests.payments.helpers import order_with_invoice, reload, timeline

pytestmark = pytest.mark.chain


def test_a_reorg_removing_the_transfer_sends_the_order_back_to_awaiting_payment(devnet):
    invoice = order_with_invoice(devnet.usdc)
    devnet.mint(int(invoice.amount_due))
    before = devnet.snapshot()
    devnet.pay_token(invoice.deposit_address, int(invoice.amount_due), mint=False)
    devnet.mine(1)  # 2 confirmations of the 3 required
    devnet.scan()
    assert reload(invoice)[1].status == OrderStatus.CONFIRMING

    devnet.revert(before)  # the block with the transfer is gone
    devnet.mine(5)
    report = devnet.scan()
    assert report.reorg_to is not None
    invoice, order = reload(invoice)
    assert invoice.transfers.get().status == Transfer.Status.ORPHANED
    assert order.status == OrderStatus.AWAITING_PAYMENT
    assert invoice.amount_pending == 0 and invoice.amount_received == 0
    assert timeline(order) == [
        "transfer_seen",
        "confirming",
        "transfer_orphaned",
        "awaiting_payment",
    ]

    devnet.mine(5)
    devnet.scan()
    assert reload(invoice)[1].status == OrderStatus.AWAITING_PAYMENT


def test_after_a_reorg_the_rescan_finds_transfers_of_the_new_chain(devnet):
    invoice = order_with_invoice(devnet.usdc)
    devnet.mint(int(invoice.amount_due))
    before = devnet.snapshot()
    devnet.pay_token(invoice.deposit_address, int(invoice.amount_due) // 2, mint=False)
    devnet.scan()
    devnet.revert(before)
    devnet.mine(1)
    devnet.pay_token(invoice.deposit_address, int(invoice.amount_due), mint=False)
    devnet.mine(3)
    devnet.scan()
    invoice, order = reload(invoice)
    statuses = sorted(invoice.transfers.values_list("status", flat=True))
    assert statuses == ["confirmed", "orphaned"]
    assert order.status == OrderStatus.PAID and not invoice.underpaid


def _expire(invoice: Invoice, *, monitor_ended: bool = False) -> None:
    past = timezone.now() - timedelta(minutes=5)
    Order.objects.filter(pk=invoice.order_id).update(
        status=OrderStatus.EXPIRED, payment_deadline=past
    )
    Invoice.objects.filter(pk=invoice.pk).update(
        expires_at=past, monitor_until=past if monitor_ended else past + timedelta(hours=24)
    )


def test_a_late_payment_revives_the_expired_order_while_units_are_free(devnet):
    invoice = order_with_invoice(devnet.usdc)
    _expire(invoice)
    devnet.pay_token(invoice.deposit_address, int(invoice.amount_due))
    devnet.mine(3)
    devnet.scan()
    invoice, order = reload(invoice)
    assert order.status == OrderStatus.PAID
    assert invoice.paid_late
    assert timeline(order)[-3:] == ["confirming", "transfer_confirmed", "paid"]


def test_a_late_payment_when_units_are_gone_is_flagged_for_staff(devnet):
    invoice = order_with_invoice(devnet.usdc)
    gpu = invoice.order.gpu
    _expire(invoice)
    OrderFactory(gpu=gpu, quantity=gpu.units_total)  # someone took every unit since
    devnet.pay_token(invoice.deposit_address, int(invoice.amount_due))
    devnet.mine(3)
    devnet.scan()
    invoice, order = reload(invoice)
    assert order.status == OrderStatus.EXPIRED
    assert invoice.paid_late and invoice.review
    assert invoice.amount_received == invoice.amount_due


def test_a_payment_after_the_watch_period_is_recorded_and_flagged_not_credited(devnet):
    invoice = order_with_invoice(devnet.usdc)
    _expire(invoice, monitor_ended=True)
    tx = devnet.pay_token(invoice.deposit_address, int(invoice.amount_due))
    devnet.mine(3)
    # The scan asks for watched addresses only (its cost follows the store's invoices): a
    # payment after the watch period reaches the store when the customer names it.
    devnet.scan()
    assert not invoice.transfers.exists()
    invoice_check(invoice_id=invoice.pk, tx_hash=tx)
    invoice, order = reload(invoice)
    transfer = invoice.transfers.get()
    assert transfer.disposition == Transfer.Disposition.UNMONITORED
    assert invoice.review and invoice.amount_received == 0
    assert order.status == OrderStatus.EXPIRED


def test_reissuing_in_another_asset_closes_the_first_invoice_and_its_address(devnet):
    first = order_with_invoice(devnet.usdc)
    second = invoice_issue(order=first.order, asset=devnet.eth)
    first.refresh_from_db()
    assert first.status == Invoice.Status.CLOSED and second.status == Invoice.Status.OPEN
    assert second.deposit_address != first.deposit_address

    devnet.pay_token(first.deposit_address, int(first.amount_due))
    devnet.mine(3)
    devnet.scan()
    first.refresh_from_db()
    second, order = reload(second)
    assert first.review and first.transfers.get().disposition == "closed_invoice"
    assert second.amount_received == 0 and order.status == OrderStatus.AWAITING_PAYMENT


def test_an_invoice_cannot_change_asset_once_money_arrived(devnet):
    from payments.services import PaymentError

    invoice = order_with_invoice(devnet.usdc)
    devnet.pay_token(invoice.deposit_address, 1_000_000)
    devnet.scan()
    with pytest.raises(PaymentError):
        invoice_issue(order=invoice.order, asset=devnet.eth)


def test_the_amount_is_rounded_up_to_the_asset_decimals():
    from payments.services import amount_in_base_units

    assert amount_in_base_units(total=Decimal("1.00"), rate=Decimal("3"), decimals=6) == 333_334
    assert amount_in_base_units(total=Decimal("300"), rate=Decimal("3000"), decimals=18) == 10**17


def test_a_reorg_after_paid_flags_the_lost_funds_and_holds_provisioning(devnet, staff):
    invoice = order_with_invoice(devnet.usdc)
    devnet.mint(int(invoice.amount_due))
    before = devnet.snapshot()
    devnet.pay_token(invoice.deposit_address, int(invoice.amount_due), mint=False)
    devnet.mine(3)
    devnet.scan()
    assert reload(invoice)[1].status == OrderStatus.PAID

    devnet.revert(before)  # the paid transfer is gone
    devnet.mine(5)
    devnet.scan()
    invoice, order = reload(invoice)
    assert order.status == OrderStatus.PAID and invoice.amount_received == 0
    assert "funds_lost" in invoice.flags
    flagged = order.events.get(kind="payment_flagged", data__flag="funds_lost")
    assert flagged.reason
    with pytest.raises(OrderError) as refusal:
        order_provisioning_start(order=order, actor_user=staff)
    assert refusal.value.code == "on_hold"
    assert reload(invoice)[1].status == OrderStatus.PAID

    # The money comes back on chain: the settlement lifts the flag and provisioning may start.
    devnet.pay_token(invoice.deposit_address, int(invoice.amount_due))
    devnet.mine(3)
    devnet.scan()
    invoice, order = reload(invoice)
    assert "funds_lost" not in invoice.flags and invoice.amount_received == invoice.amount_due
    assert order_provisioning_start(order=order, actor_user=staff)

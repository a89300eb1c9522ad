"""The money ledger of an invoice (received, refunded, owed): an order whose money went back is
never revived by a later transfer, and what reaches it afterwards is flagged and owed back."""

from datetime import timedelta

import pytest
from django.utils import timezone

from billing.models import BillingDocument, DocumentKind
from orders.models import OrderStatus
from orders.services import order_cancel, order_create, orders_expire
from payments.models import Invoice, Transfer
from payments.refunds.models import Refund, RefundStatus
from payments.refunds.services import refund_address_set, refund_open, refund_tx_submit
from payments.refunds.verify import refund_verify
from payments.services import invoice_issue
from payments.watcher.settlement import invoice_settle
from tests.factories import EnvironmentFactory, GpuModelFactory, UserFactory, accepted_terms
from tests.payments.helpers import (
    deadline_at,
    order_with_invoice,
    reload,
    transfer_observed_and_settled,
)
from tests.payments.refund_helpers import CUSTOMER_WALLET

pytestmark = pytest.mark.chain

S = OrderStatus
MARGIN = timedelta(seconds=10)


@pytest.fixture(autouse=True)
def _margin(settings):
    settings.PAYMENTS_EXPIRY_SCAN_MARGIN = MARGIN


def refund_paid_by_store(devnet, refund: Refund, staff) -> Refund:
    """Staff open the refund, pay it from the store's refund wallet, paste the hash; final."""
    refund = refund_open(refund=refund)
    tx_hash = devnet.pay_token(CUSTOMER_WALLET, int(refund.amount))
    devnet.mine(3)
    refund_tx_submit(refund=refund, tx_hash=tx_hash, address=refund.address, staff_user=staff)
    assert refund_verify(refund_id=refund.pk, now=timezone.now()) == "confirmed"
    return Refund.objects.get(pk=refund.pk)


def _paid_late_for_units_sold(devnet):
    """A's order expired, B took its 8 slots, then A paid in full: flagged, all owed back.
    Returns A's invoice and order, A, B's order and B."""
    gpu = GpuModelFactory(units_total=8)
    pytorch = EnvironmentFactory()
    alice, bob = UserFactory(), UserFactory()
    first = order_create(
        terms=accepted_terms(), user=alice, gpu=gpu, environment=pytorch, quantity=8, term_days=7
    )
    invoice = invoice_issue(order=first, asset=devnet.usdc)
    devnet.scan()
    deadline = devnet.block_time()
    deadline_at(invoice, deadline)
    devnet.mine_later(int(MARGIN.total_seconds()) + 2)
    devnet.scan()
    assert orders_expire(now=deadline + 2 * MARGIN) == 1
    second = order_create(
        terms=accepted_terms(), user=bob, gpu=gpu, environment=pytorch, quantity=8, term_days=7
    )
    devnet.pay_token(invoice.deposit_address, int(invoice.amount_due))
    devnet.mine(3)
    devnet.scan()
    invoice, first = reload(invoice)
    assert first.status == S.EXPIRED and invoice.review
    return invoice, first, alice, second, bob


def _dust_sent_order_stays_expired(devnet, invoice: Invoice):
    """A sends 1 base unit to the old address (still watched): the order stays expired,
    without its slots. Returns the invoice and its order, read again."""
    devnet.pay_token(invoice.deposit_address, 1)
    devnet.mine(3)
    devnet.scan()
    invoice, order = reload(invoice)
    assert order.status == S.EXPIRED
    assert not order.slot_holds.filter(released_at__isnull=True).exists()
    return invoice, order


def test_a_dust_transfer_after_a_confirmed_refund_never_revives_the_order(devnet, staff):
    # Given B took the 8 slots, and A paid late in full: flagged, all of it owed back...
    invoice, first, alice, second, bob = _paid_late_for_units_sold(devnet)
    refund = Refund.objects.get(invoice=invoice)
    assert refund.amount == invoice.amount_due
    # ...and refunded in full, confirmed on chain; then B's hold lapses.
    refund_address_set(order=first, address=CUSTOMER_WALLET, user=alice, actor="customer")
    refund = refund_paid_by_store(devnet, Refund.objects.get(pk=refund.pk), staff)
    assert refund.status == RefundStatus.CONFIRMED
    order_cancel(order=second, actor="customer", actor_user=bob)

    # When A sends 1 base unit to the old address (still watched)...
    # Then the order stays expired, without the slots, flagged, and the dust is owed back.
    invoice, first = _dust_sent_order_stays_expired(devnet, invoice)
    flagged = first.events.filter(kind="payment_flagged", data__flag="review")
    assert flagged.filter(data__amount="1").exists()
    owed = Refund.objects.exclude(status=RefundStatus.CONFIRMED).get(invoice=invoice)
    assert owed.amount == 1
    assert not BillingDocument.objects.filter(order=first, kind=DocumentKind.INVOICE).exists()


def test_money_sent_to_a_replaced_invoices_address_is_flagged_and_owed_back_in_full(devnet):
    replaced = order_with_invoice(devnet.usdc)
    invoice_issue(order=replaced.order, asset=devnet.eth)  # the customer switched currency
    transfer_observed_and_settled(replaced, 7_000_000)
    replaced.transfers.update(status=Transfer.Status.CONFIRMED)
    invoice_settle(invoice_id=replaced.pk)

    replaced, order = reload(replaced)
    assert replaced.status == Invoice.Status.CLOSED and replaced.review
    assert order.status == S.AWAITING_PAYMENT
    assert Refund.objects.get(invoice=replaced).amount == 7_000_000


def test_a_refund_staff_opened_keeps_a_late_paid_order_from_being_revived(devnet, staff):
    # Review: a pinned refund cannot follow the money any more, so an order revived under it
    # would be paid (and invoiced) while staff send all its money back.
    invoice, first, alice, second, bob = _paid_late_for_units_sold(devnet)
    # Given staff opened the full refund to pay it (pinned), and B's hold lapsed...
    refund_address_set(order=first, address=CUSTOMER_WALLET, user=alice, actor="customer")
    refund = refund_open(refund=Refund.objects.get(invoice=invoice))
    assert refund.pinned_at is not None and refund.amount == invoice.amount_due
    order_cancel(order=second, actor="customer", actor_user=bob)

    # When A sends 1 base unit to the old address before staff paste the refund's hash,
    # then the order stays expired without the slots: its money is on its way back.
    invoice, first = _dust_sent_order_stays_expired(devnet, invoice)
    assert not BillingDocument.objects.filter(order=first, kind=DocumentKind.INVOICE).exists()
    staff_paid = refund_paid_by_store(devnet, Refund.objects.get(pk=refund.pk), staff)
    assert staff_paid.status == RefundStatus.CONFIRMED
    assert reload(invoice)[1].status == S.EXPIRED

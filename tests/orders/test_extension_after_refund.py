"""A rental refunded (or cancelled) takes its pending extensions with it: money that reaches a
cancelled or expired extension afterwards is owed back in full."""

import pytest

from orders.extensions import extension_create
from orders.models import Order, OrderStatus
from orders.services import order_refund
from payments.models import Transfer
from payments.refunds.models import Refund
from payments.services import invoice_issue
from payments.watcher.settlement import invoice_settle
from tests.factories import OrderFactory, accepted_terms
from tests.payments.helpers import reload, transfer_observed_and_settled

pytestmark = pytest.mark.chain

S = OrderStatus


def _paid_rental_with_pending_extension(customer, gpu, devnet):
    rental = OrderFactory(user=customer, gpu=gpu, quantity=2, status=S.PAID)
    extension = extension_create(rental=rental, user=customer, term_days=7, terms=accepted_terms())
    return rental, invoice_issue(order=extension, asset=devnet.usdc)


def test_refunding_a_rental_cancels_its_pending_extension_and_its_late_money_is_owed_back(
    devnet, customer, gpu, staff, worker_runs
):
    rental, invoice = _paid_rental_with_pending_extension(customer, gpu, devnet)
    with worker_runs():
        assert order_refund(order=rental, actor_user=staff, reason="GPU failure")
    invoice, extension = reload(invoice)
    assert extension.status == S.CANCELLED

    # The customer pays the extension all the same.
    devnet.pay_token(invoice.deposit_address, int(invoice.amount_due))
    devnet.mine(3)
    devnet.scan()
    invoice, extension = reload(invoice)
    assert extension.status == S.CANCELLED and invoice.review
    assert Refund.objects.get(invoice=invoice).amount == invoice.amount_due


def test_money_an_extension_received_after_its_rental_ended_is_owed_once_it_expires(
    devnet, customer, gpu, staff
):
    # An extension left awaiting payment by its refunded rental (before this rule existed).
    rental, invoice = _paid_rental_with_pending_extension(customer, gpu, devnet)
    Order.objects.filter(pk=rental.pk).update(status=S.REFUNDED)
    transfer_observed_and_settled(invoice, int(invoice.amount_due))
    invoice.transfers.update(status=Transfer.Status.CONFIRMED)
    invoice_settle(invoice_id=invoice.pk)
    invoice, extension = reload(invoice)
    assert invoice.review and extension.status == S.AWAITING_PAYMENT
    # Owed at once: the money can buy nothing, now or after the deadline.
    assert Refund.objects.get(invoice=invoice).amount == invoice.amount_due

    # Still owed once it expired, whenever its invoice settles again.
    Order.objects.filter(pk=extension.pk).update(status=S.EXPIRED)
    invoice_settle(invoice_id=invoice.pk)
    assert Refund.objects.get(invoice=invoice).amount == invoice.amount_due


def test_an_extension_confirming_when_its_rental_is_refunded_owes_its_money_back(
    devnet, customer, gpu, staff, worker_runs
):
    # Review: money seen (not final) when staff refund the rental: not cancellable, so the
    # settlement must find the rental gone and owe it all back once it confirms.
    rental, invoice = _paid_rental_with_pending_extension(customer, gpu, devnet)
    transfer_observed_and_settled(invoice, int(invoice.amount_due))
    assert reload(invoice)[1].status == S.CONFIRMING
    with worker_runs():
        assert order_refund(order=rental, actor_user=staff, reason="GPU failure")
    invoice.transfers.update(status=Transfer.Status.CONFIRMED)
    invoice_settle(invoice_id=invoice.pk)
    invoice, extension = reload(invoice)
    assert extension.status != S.PAID and invoice.review
    assert Refund.objects.get(invoice=invoice).amount == invoice.amount_due

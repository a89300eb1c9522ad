"""A cancelled order's open invoice closes with it, in the same transaction; an expired
order's stays open, so a late payment still revives the order while its units are free; staff
read it as expired and still watched."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from orders.models import OrderEvent, OrderStatus
from orders.services import OrderError, order_cancel
from orders.transitions import order_transition
from payments.models import Invoice, Transfer
from payments.refunds.models import Refund
from payments.watcher.settlement import invoice_settle, transfer_confirm
from tests.payments.helpers import deadline_at, order_with_invoice, transfer_observed_and_settled

pytestmark = pytest.mark.django_db


def _cancel(invoice: Invoice) -> None:
    order_cancel(order=invoice.order, actor=OrderEvent.Actor.CUSTOMER)


def test_cancelling_an_order_closes_its_open_invoice(usdc):
    invoice = order_with_invoice(usdc)
    _cancel(invoice)
    invoice.refresh_from_db()
    assert invoice.order.status == OrderStatus.CANCELLED
    assert invoice.status == Invoice.Status.CLOSED
    assert invoice.closed_at is not None


def test_a_refused_cancel_leaves_the_invoice_open(usdc):
    invoice = order_with_invoice(usdc)
    transfer_observed_and_settled(invoice, int(invoice.amount_due) // 2)
    with pytest.raises(OrderError) as refused:
        _cancel(invoice)
    assert refused.value.code == "not_cancellable"
    invoice.refresh_from_db()
    assert (invoice.status, invoice.closed_at) == (Invoice.Status.OPEN, None)


def test_money_reaching_a_cancelled_orders_closed_invoice_is_flagged_and_owed_back(usdc):
    invoice = order_with_invoice(usdc)
    _cancel(invoice)

    transfer_observed_and_settled(invoice, int(invoice.amount_due))
    transfer = Transfer.objects.get(invoice=invoice)
    assert transfer.disposition == Transfer.Disposition.CREDIT
    transfer_confirm(transfer=transfer)
    invoice_settle(invoice_id=invoice.pk)

    invoice.refresh_from_db()
    assert invoice.review and invoice.status == Invoice.Status.CLOSED
    assert invoice.order.status == OrderStatus.CANCELLED
    assert Refund.objects.get(invoice=invoice).amount == invoice.amount_due


def test_an_expired_orders_invoice_stays_open_and_a_late_payment_revives_it(usdc):
    invoice = order_with_invoice(usdc)
    deadline_at(invoice, timezone.now() - timedelta(minutes=1))
    # What orders_expire does once the watcher read past the deadline.
    order_transition(order=invoice.order, to=OrderStatus.EXPIRED, actor=OrderEvent.Actor.SYSTEM)
    invoice.refresh_from_db()
    assert (invoice.order.status, invoice.status) == (OrderStatus.EXPIRED, Invoice.Status.OPEN)

    transfer_observed_and_settled(invoice, int(invoice.amount_due))
    invoice.refresh_from_db()
    assert invoice.order.status == OrderStatus.CONFIRMING
    assert invoice.paid_late
    assert Transfer.objects.get(invoice=invoice).disposition == Transfer.Disposition.CREDIT


def test_staff_read_an_expired_orders_invoice_as_expired_and_still_watched(client, staff, usdc):
    invoice = order_with_invoice(usdc)
    deadline_at(invoice, timezone.now() - timedelta(minutes=1))
    order_transition(order=invoice.order, to=OrderStatus.EXPIRED, actor=OrderEvent.Actor.SYSTEM)
    client.force_login(staff)
    pages = [
        reverse("admin:payments_invoice_changelist"),
        reverse("admin:orders_order_change", args=[invoice.order.pk]),
    ]
    for url in pages:
        page = client.get(url, HTTP_ACCEPT_LANGUAGE="fr").content.decode()
        assert "Expirée, surveillée pour un paiement tardif jusqu" in page, url

"""Invoices are issued by the event that marks an order paid, numbered from one gap-free
sequence per year even when payments settle at once; a refund issues a credit note; an
issued document never changes."""

import threading
from datetime import timedelta

import pytest
from django.core import mail
from django.db import connection
from django.utils import timezone

from billing.models import BillingDocument, BillingSequence, DocumentImmutable
from billing.services import billing_on_event
from orders.extensions import extension_create
from orders.models import OrderEventDelivery, OrderStatus
from orders.services import order_activate, order_provisioning_start, order_refund
from orders.tasks import orders_dispatch_pending_task
from payments.models import Transfer
from payments.services import invoice_issue
from payments.watcher.settlement import invoice_settle
from tests.billing.helpers import order_paid
from tests.factories import OrderFactory, accepted_terms
from tests.payments.helpers import order_with_invoice, transfer_recorded


@pytest.mark.django_db(transaction=True)
def test_twenty_payments_settling_at_once_get_twenty_invoices_without_gap(usdc, celery_eager):
    invoices = []
    for n in range(20):
        invoice = order_with_invoice(usdc)
        transfer = transfer_recorded(invoice, status=Transfer.Status.CONFIRMED)
        Transfer.objects.filter(pk=transfer.pk).update(tx_hash=f"0x{n:064x}")
        invoices.append(invoice)
    start = threading.Barrier(len(invoices))
    errors = []

    def settle(invoice):
        try:
            start.wait()
            # Commits, then dispatches the "paid" event inline (eager): the invoice is issued
            # in the transaction that claims it, on this thread's own connection.
            invoice_settle(invoice_id=invoice.pk)
        except Exception as error:
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=settle, args=(each,)) for each in invoices]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    # On a loaded machine a facture may wait on the sequence's lock past the statement
    # timeout: its billing delivery failed and is retried by the sweep, as in production.
    for _ in range(5):
        failed = OrderEventDelivery.objects.filter(done_at__isnull=True)
        if not failed.exists():
            break
        failed.update(retry_at=timezone.now())
        orders_dispatch_pending_task(grace_seconds=0)
    year = timezone.localdate().year
    documents = BillingDocument.objects.filter(kind="invoice")
    assert sorted(documents.values_list("number", flat=True)) == [
        f"F-{year}-{n:06d}" for n in range(1, 21)
    ]
    assert {d.order.status for d in documents} == {OrderStatus.PAID}
    assert documents.values("order").distinct().count() == 20
    assert BillingSequence.objects.get(kind="invoice", year=year).last_number == 20
    # Each invoice names the transaction that paid its own order.
    for document in documents:
        invoice = document.order.invoices.get()
        assert document.payment["tx_hashes"] == [invoice.transfers.get().tx_hash]


def test_a_refund_issues_a_credit_note_that_names_the_invoice(usdc, customer, staff, worker_runs):
    with worker_runs():
        order = order_paid(usdc, user=customer)
    invoice = BillingDocument.objects.get(order=order)

    with worker_runs():
        assert order_refund(order=order, actor_user=staff, reason="GPU failed")

    credit_note = BillingDocument.objects.get(order=order, kind="credit_note")
    year = timezone.localdate().year
    assert credit_note.number == f"AV-{year}-000001"
    assert credit_note.credited_invoice == invoice
    assert (credit_note.total, credit_note.vat_amount) == (invoice.total, invoice.vat_amount)
    # The invoice itself is as it was issued.
    assert BillingDocument.objects.get(pk=invoice.pk).number == invoice.number


def test_an_invoice_is_issued_once_even_if_the_paid_event_is_handled_again(usdc, worker_runs):
    with worker_runs():
        order = order_paid(usdc)
    paid_event = order.events.get(new_status=OrderStatus.PAID, kind="status")
    billing_on_event(event=paid_event)
    assert BillingDocument.objects.filter(order=order).count() == 1


def test_an_unpaid_order_has_no_invoice(usdc, worker_runs):
    with worker_runs():
        invoice = order_with_invoice(usdc)
    assert not BillingDocument.objects.filter(order=invoice.order).exists()


def test_an_issued_document_cannot_be_changed_or_deleted(usdc, worker_runs):
    with worker_runs():
        order = order_paid(usdc)
    document = BillingDocument.objects.get(order=order)

    document.total = 1
    with pytest.raises(DocumentImmutable):
        document.save()
    with pytest.raises(DocumentImmutable):
        document.delete()
    with pytest.raises(DocumentImmutable):
        BillingDocument.objects.filter(pk=document.pk).update(total=1)
    with pytest.raises(DocumentImmutable):
        BillingDocument.objects.filter(pk=document.pk).delete()
    assert BillingDocument.objects.get(pk=document.pk).total == order.total


def test_a_paid_extension_gets_its_own_invoice_for_the_days_it_adds(usdc, customer, worker_runs):
    now = timezone.now()
    rental = OrderFactory(
        user=customer,
        status=OrderStatus.ACTIVE,
        activated_at=now - timedelta(days=1),
        ends_at=now + timedelta(days=2),
    )
    extension = extension_create(rental=rental, user=customer, term_days=7, terms=accepted_terms())
    invoice = invoice_issue(order=extension, asset=usdc)
    transfer_recorded(invoice, status=Transfer.Status.CONFIRMED)
    mail.outbox.clear()

    with worker_runs():
        invoice_settle(invoice_id=invoice.pk)

    document = BillingDocument.objects.get(order=extension)
    assert document.kind == "invoice" and document.total == extension.total
    assert f"Prolongation de la location {rental.number}" in document.lines[0]["description"]
    assert document.service_start == timezone.localdate(rental.ends_at)
    assert document.service_end == timezone.localdate(rental.ends_at) + timedelta(days=7)
    # It travels with the "rental extended" e-mail (the extension's own "paid" sends none).
    (message,) = mail.outbox
    assert message.attachments[0][0] == document.filename


def _extension_paid(rental, asset, *, days: int):
    """An extension of `rental` bought and paid as the watcher settles it."""
    extension = extension_create(
        rental=rental, user=rental.user, term_days=days, terms=accepted_terms()
    )
    invoice = invoice_issue(order=extension, asset=asset)
    transfer_recorded(invoice, status=Transfer.Status.CONFIRMED)
    invoice_settle(invoice_id=invoice.pk)
    return extension, invoice


def test_refunding_a_rental_refunds_its_paid_extension_too(usdc, customer, staff, worker_runs):
    # Paid, extended and paid again before the machines were ready; then no machine came.
    with worker_runs():
        rental = order_paid(usdc, user=customer, tx_hash="0x" + "12" * 32)
        extension, invoice = _extension_paid(rental, usdc, days=3)
    extension.refresh_from_db()
    assert extension.status == OrderStatus.PAID

    with worker_runs():
        assert order_refund(order=rental, actor_user=staff, reason="No GPU available")

    # The extension's days would have run on the refunded rental: its money is owed back too.
    extension.refresh_from_db()
    assert extension.status == OrderStatus.REFUNDED
    assert extension.refunds.get().amount == invoice.amount_due
    credit_notes = BillingDocument.objects.filter(kind="credit_note")
    assert {note.order_id for note in credit_notes} == {rental.pk, extension.pk}


def test_each_facture_covers_its_real_days_fixed_when_the_rental_starts(
    usdc, customer, staff, worker_runs
):
    # Paid, then extended by 3 days and paid again, both before the machines were ready.
    with worker_runs():
        rental = order_paid(usdc, user=customer, tx_hash="0x" + "34" * 32)
        extension, _invoice = _extension_paid(rental, usdc, days=3)
    rental_document = BillingDocument.objects.get(order=rental)
    extension_document = BillingDocument.objects.get(order=extension)
    # Paid is not started: no period is written yet.
    assert rental_document.service_start is None and extension_document.service_start is None

    with worker_runs():
        order_provisioning_start(order=rental, actor_user=staff)
        assert order_activate(order=rental, actor_user=staff, host="gpu", port=22, user="u")
    rental.refresh_from_db()
    started = timezone.localdate(rental.activated_at)
    first_end = timezone.localdate(rental.activated_at + timedelta(days=rental.term_days))
    rental_document.refresh_from_db()
    extension_document.refresh_from_db()
    assert (rental_document.service_start, rental_document.service_end) == (started, first_end)
    # The extension runs from the rental's former end to its real end, without overlap.
    assert (extension_document.service_start, extension_document.service_end) == (
        first_end,
        timezone.localdate(rental.ends_at),
    )
    assert timezone.localdate(rental.ends_at) == first_end + timedelta(days=3)


def test_an_extension_billed_after_the_rental_started_gets_its_place_after_the_term(
    usdc, customer, staff, worker_runs
):
    with worker_runs():
        rental = order_paid(usdc, user=customer, tx_hash="0x" + "56" * 32)
    extension, _invoice = _extension_paid(rental, usdc, days=3)  # its event not handled yet
    with worker_runs():
        order_provisioning_start(order=rental, actor_user=staff)
        assert order_activate(order=rental, actor_user=staff, host="gpu", port=22, user="u")

    extended = rental.events.get(kind="extended")
    with worker_runs():
        billing_on_event(event=extended)  # the extension's invoice, issued after the start
    rental.refresh_from_db()
    document = BillingDocument.objects.get(order=extension)
    first_end = timezone.localdate(rental.activated_at + timedelta(days=rental.term_days))
    assert (document.service_start, document.service_end) == (
        first_end,
        timezone.localdate(rental.ends_at),
    )

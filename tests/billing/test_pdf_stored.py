"""A facture's PDF is rendered once, as it is issued, and stored: the account page, the API
and the e-mail hand out the stored bytes, so a customer downloading it again and again costs
a read, not a render (issue 32, finding 9). What counts the renders is WeasyPrint's own
write_pdf, wrapped: the real renderer still runs."""

import io
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import date

import facturx
import pytest
from django.core import mail
from django.db import connection
from django.test import Client
from weasyprint import HTML

from billing.models import BillingDocument
from orders.services import order_activate, order_provisioning_start
from tests.billing.helpers import order_paid


@pytest.fixture
def renders(monkeypatch) -> list[int]:
    """One entry per PDF WeasyPrint writes, from now on."""
    calls: list[int] = []
    write_pdf = HTML.write_pdf

    def counted(self, *args, **kwargs):
        calls.append(1)
        return write_pdf(self, *args, **kwargs)

    monkeypatch.setattr(HTML, "write_pdf", counted)
    return calls


def _stored(document: BillingDocument) -> bytes:
    return bytes(BillingDocument.objects.get(pk=document.pk).stored_pdf.content)


def test_a_facture_is_rendered_once_as_it_is_issued_and_every_download_is_that_file(
    client, api, customer, usdc, worker_runs, renders
):
    with worker_runs():
        order = order_paid(usdc, user=customer)
    invoice = BillingDocument.objects.get(order=order)
    assert len(renders) == 1  # issued: rendered, stored, attached to the "paid" e-mail
    [paid_email] = [m for m in mail.outbox if "Paiement reçu" in m.subject]
    [attachment] = paid_email.attachments
    client.force_login(customer)

    downloads = [
        client.get(f"/fr/account/invoices/{invoice.number}/pdf/"),
        api.get(f"/api/v1/invoices/{invoice.number}/pdf/"),
        client.get(f"/fr/account/invoices/{invoice.number}/pdf/"),
    ]

    assert len(renders) == 1, f"{len(renders) - 1} downloads rendered the PDF again"
    assert {download.status_code for download in downloads} == {200}
    assert {download["Content-Type"] for download in downloads} == {"application/pdf"}
    stored = _stored(invoice)
    assert stored.startswith(b"%PDF")
    assert all(download.getvalue() == stored for download in downloads)
    assert attachment[1] == stored


def test_a_facture_issued_before_pdfs_were_stored_is_rendered_at_its_first_download_only(
    client, customer, usdc, worker_runs, renders
):
    with worker_runs():
        order = order_paid(usdc, user=customer)
    invoice = BillingDocument.objects.get(order=order)
    invoice.stored_pdf.delete()  # as a facture issued before this release has none
    renders.clear()
    client.force_login(customer)

    first = client.get(f"/fr/account/invoices/{invoice.number}/pdf/")
    second = client.get(f"/fr/account/invoices/{invoice.number}/pdf/")

    assert len(renders) == 1
    assert first.getvalue() == second.getvalue() == _stored(invoice)


def test_the_stored_pdf_says_the_service_period_written_when_the_rental_starts(
    client, customer, staff, usdc, worker_runs
):
    with worker_runs():
        order = order_paid(usdc, user=customer)
    invoice = BillingDocument.objects.get(order=order)
    assert b"BillingSpecifiedPeriod" not in _xml(_stored(invoice))

    with worker_runs():
        order_provisioning_start(order=order, actor_user=staff)
        assert order_activate(order=order, actor_user=staff, host="gpu", port=22, user="u")
    invoice.refresh_from_db()
    client.force_login(customer)
    download = client.get(f"/fr/account/invoices/{invoice.number}/pdf/")

    pdf = download.getvalue()
    assert pdf == _stored(invoice)
    start = invoice.service_start
    assert isinstance(start, date) and start.strftime("%Y%m%d").encode() in _xml(pdf)


def _xml(pdf: bytes) -> bytes:
    _filename, xml = facturx.get_facturx_xml_from_pdf(io.BytesIO(pdf))
    return xml


@pytest.mark.django_db(transaction=True)
def test_eight_first_downloads_at_once_render_the_pdf_once(customer, usdc, worker_runs, renders):
    with worker_runs():
        order = order_paid(usdc, user=customer)
    invoice = BillingDocument.objects.get(order=order)
    invoice.stored_pdf.delete()
    renders.clear()
    url = f"/fr/account/invoices/{invoice.number}/pdf/"
    start = threading.Barrier(8)

    def download() -> bytes:
        client = Client()
        client.force_login(customer)
        start.wait(timeout=10)
        try:
            return client.get(url).getvalue()
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=8) as pool:
        pdfs = list(pool.map(lambda _: download(), range(8)))

    assert len(renders) == 1
    assert set(pdfs) == {_stored(invoice)}

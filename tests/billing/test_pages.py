"""Invoices in the account, the API and the admin: each customer sees only their own, nobody
edits or deletes one, staff export a period for the accountant."""

import csv
import io

import pytest
from django.urls import reverse
from django.utils import timezone

from billing.exports import csv_cell
from billing.models import BillingDocument
from orders.services import order_refund
from tests.billing.helpers import order_paid


@pytest.fixture
def invoice(customer, usdc, worker_runs):
    with worker_runs():
        order = order_paid(usdc, user=customer)
    return BillingDocument.objects.get(order=order)


def test_the_account_lists_shows_and_downloads_its_own_invoices(client, customer, invoice):
    client.force_login(customer)

    listing = client.get("/fr/account/invoices/")
    assert listing.status_code == 200 and invoice.number in listing.text
    page = client.get(f"/fr/account/invoices/{invoice.number}/")
    assert page.status_code == 200 and "Acquittée le" in page.text
    pdf = client.get(f"/fr/account/invoices/{invoice.number}/pdf/")
    assert pdf.status_code == 200 and pdf["Content-Type"] == "application/pdf"
    assert pdf.getvalue().startswith(b"%PDF")


def test_another_customers_invoice_is_not_found(client, outsider, invoice):
    client.force_login(outsider)

    assert invoice.number not in client.get("/fr/account/invoices/").text
    assert client.get(f"/fr/account/invoices/{invoice.number}/").status_code == 404
    assert client.get(f"/fr/account/invoices/{invoice.number}/pdf/").status_code == 404


def test_the_api_lists_invoices_and_serves_their_pdf(api, invoice):
    body = api.get("/api/v1/invoices/").json()

    [item] = body["results"]
    assert item["number"] == invoice.number and item["kind"] == "invoice"
    assert item["order"] == invoice.order.number
    assert (item["total_excl_vat"], item["vat"], item["total"]) == ("420.00", "84.00", "504.00")
    assert item["currency"] == "EUR" and item["issued_at"]
    pdf = api.get(item["pdf_url"], HTTP_ACCEPT="application/pdf")
    assert pdf.status_code == 200 and pdf["Content-Type"] == "application/pdf"


def test_the_api_never_reveals_nor_changes_an_invoice(api, outsider_api, invoice):
    assert outsider_api.get("/api/v1/invoices/").json()["results"] == []
    missing = outsider_api.get(f"/api/v1/invoices/{invoice.number}/pdf/")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    for method in (api.put, api.patch, api.delete, api.post):
        assert method(f"/api/v1/invoices/{invoice.number}/pdf/").status_code == 405
    assert api.post("/api/v1/invoices/", {}).status_code == 405


def test_the_admin_shows_invoices_read_only(client, staff, invoice):
    client.force_login(staff)
    change = reverse("admin:billing_billingdocument_change", args=[invoice.pk])
    delete = reverse("admin:billing_billingdocument_delete", args=[invoice.pk])

    assert client.get(reverse("admin:billing_billingdocument_changelist")).status_code == 200
    page = client.get(change)
    assert page.status_code == 200 and 'name="_save"' not in page.text
    assert client.post(change, {"total": "1"}).status_code == 403
    assert client.post(delete, {"post": "yes"}).status_code == 403
    assert client.get(reverse("admin:billing_billingdocument_add")).status_code == 403
    assert BillingDocument.objects.get(pk=invoice.pk).total == invoice.total


def test_staff_export_a_period_as_csv(client, staff, invoice, usdc, worker_runs):
    with worker_runs():
        order_refund(order=invoice.order, actor_user=staff, reason="GPU failed")
    client.force_login(staff)
    url = reverse("admin:billing_billingdocument_export")
    day = timezone.localdate(invoice.issued_at).isoformat()  # periods are in store time

    response = client.get(url, {"start": day, "end": day})
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode()), delimiter=";"))
    assert [(r["number"], r["total_incl_vat"]) for r in rows] == [
        (BillingDocument.objects.get(kind="credit_note").number, "-504.00"),
        (invoice.number, "504.00"),
    ]
    assert rows[1]["tx_hashes"] == invoice.payment["tx_hashes"][0]
    assert rows[1]["asset"] == "USDC" and rows[1]["total_excl_vat"] == "420.00"
    assert client.get(url, {"start": day, "end": "2000-01-01"}).status_code == 400
    assert client.get(url, {"start": "not a date", "end": day}).status_code == 400


def test_the_export_never_hands_the_spreadsheet_a_formula(
    client, staff, customer, usdc, worker_runs
):
    # OWASP's CSV injection advice: a text cell opening with one of these is read as a formula.
    formula = '=HYPERLINK("http://evil.example/x","Click")'
    type(customer).objects.filter(pk=customer.pk).update(company_name=formula)
    with worker_runs():
        order = order_paid(usdc, user=customer)
    invoice = BillingDocument.objects.get(order=order)
    with worker_runs():
        order_refund(order=invoice.order, actor_user=staff, reason="GPU failed")
    client.force_login(staff)
    day = timezone.localdate(invoice.issued_at).isoformat()

    response = client.get(
        reverse("admin:billing_billingdocument_export"), {"start": day, "end": day}
    )

    rows = list(csv.DictReader(io.StringIO(response.content.decode()), delimiter=";"))
    assert [row["buyer"] for row in rows] == ["'" + formula] * 2
    # The store's own numbers are not text a customer wrote: a credit note stays negative.
    assert [row["total_incl_vat"] for row in rows] == ["-504.00", "504.00"]


@pytest.mark.parametrize("prefix", ["=", "+", "-", "@", "\t", "\r"])
def test_every_formula_prefix_is_escaped(prefix):
    assert csv_cell(f"{prefix}1+1") == f"'{prefix}1+1"
    assert csv_cell(f"ACME {prefix}") == f"ACME {prefix}"


def test_the_account_page_checks_the_vat_number(client, customer):
    client.force_login(customer)
    form = {
        "first_name": customer.first_name,
        "last_name": customer.last_name,
        "language": "fr",
        "time_zone": "",
        "company_name": "Rechenzentrum Nord GmbH",
        "billing_address": "Hafenstraße 1\n20457 Hamburg",
        "country": "de",
    }

    refused = client.post("/fr/account/", {**form, "vat_number": "DE123"})
    assert refused.status_code == 200 and "pas un numéro de TVA européen" in refused.text
    client.post("/fr/account/", {**form, "vat_number": "de 136 695 976"})
    customer.refresh_from_db()
    assert (customer.vat_number, customer.country) == ("DE136695976", "DE")

"""The PDF an accountant accepts: every mention French law asks for, for a consumer, a French
business and an EU business; its Factur-X XML validates; it travels with the "paid" e-mail."""

import io
import re
from decimal import Decimal

import facturx
import pypdf
import pytest
from django.conf import settings
from django.core import mail
from django.utils import timezone
from lxml import etree

from billing.models import BillingDocument
from billing.rendering import document_pdf
from billing.services import credit_note_issue
from payments.models import Transfer
from tests.billing.conftest import BUYERS
from tests.billing.helpers import order_paid
from tests.factories import EnvironmentFactory, UserFactory

TX_HASH = "0x" + "5e" * 32
CII = {"ram": "urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100"}


@pytest.fixture
def invoice(buyer, usdc, worker_runs):
    with worker_runs():
        order = order_paid(usdc, user=buyer, tx_hash=TX_HASH)
    return BillingDocument.objects.get(order=order)


def pdf_reader(pdf: bytes) -> pypdf.PdfReader:
    return pypdf.PdfReader(io.BytesIO(pdf))


def pdf_text(pdf: bytes) -> str:
    reader = pdf_reader(pdf)
    return " ".join(" ".join(page.extract_text().split()) for page in reader.pages)


def test_the_pdf_carries_every_mention_the_law_asks_for(invoice, buyer):
    text = pdf_text(document_pdf(invoice))

    seller = settings.BILLING_SELLER
    for value in (
        seller["name"],
        seller["legal_form"],
        seller["street"],
        seller["city"],
        seller["siren"],
        seller["siret"],
        seller["rcs"],
        seller["vat_number"],
    ):
        assert value in text
    assert f"Facture {invoice.number}" in text
    assert "Date d\N{RIGHT SINGLE QUOTATION MARK}émission" in text
    assert "Période de la prestation" in text
    assert f"{buyer.first_name} {buyer.last_name}" in text and buyer.email in text
    assert "Location : 1 GPU" in text and "Prix unitaire HT" in text and "Quantité" in text
    excl_vat = f"{invoice.total_excl_vat:.2f}".replace(".", ",")
    assert f"{excl_vat} €" in text and "504,00 €" in text
    assert "USDC" in text and "Anvil devnet" in text and TX_HASH in text
    assert "1 USDC = 0,92 € (test)" in text

    business = "Indemnité forfaitaire pour frais de recouvrement" in text
    penalties = "Pénalités de retard" in text
    if not buyer.company_name:  # a consumer: French VAT, no B2B mentions
        assert (invoice.vat_mode, invoice.vat_rate) == ("standard", Decimal(20))
        assert "TVA 20 %" in text and "84,00 €" in text
        assert not business and not penalties
        return
    assert business and penalties and "40 €" in text
    assert buyer.company_name in text and buyer.vat_number in text
    assert "69002 Lyon" in text or "20457 Hamburg" in text
    if buyer.country == "FR":  # French business: VAT charged
        assert invoice.vat_mode == "standard" and "84,00 €" in text
        assert "Autoliquidation" not in text
    else:  # EU business with a VAT number: reverse charge
        assert (invoice.vat_mode, invoice.vat_amount) == ("reverse_charge", Decimal(0))
        assert "Autoliquidation" in text and "2006/112/CE" in text


def test_the_embedded_factur_x_xml_validates(invoice, buyer):
    filename, xml = facturx.get_facturx_xml_from_pdf(io.BytesIO(document_pdf(invoice)))

    assert filename == "factur-x.xml"
    assert facturx.xml_check_xsd(xml, flavor="factur-x", level="basic")
    tree = etree.fromstring(xml)
    assert tree.findtext(".//ram:GrandTotalAmount", namespaces=CII) == str(invoice.total)
    assert tree.findtext(".//ram:BuyerTradeParty/ram:Name", namespaces=CII) == (
        buyer.company_name or f"{buyer.first_name} {buyer.last_name}"
    )
    category = tree.findtext(".//ram:ApplicableTradeTax/ram:CategoryCode", namespaces=CII)
    assert category == ("AE" if invoice.vat_mode == "reverse_charge" else "S")


def test_under_the_franchise_no_vat_is_charged_and_the_invoice_says_why(
    customer, usdc, worker_runs, settings
):
    settings.BILLING_VAT_FRANCHISE = True
    with worker_runs():
        order = order_paid(usdc, user=customer)
    invoice = BillingDocument.objects.get(order=order)

    assert (invoice.vat_amount, invoice.total_excl_vat) == (Decimal(0), order.total)
    pdf = document_pdf(invoice)
    assert "TVA non applicable, art. 293 B du CGI" in pdf_text(pdf)
    _filename, xml = facturx.get_facturx_xml_from_pdf(io.BytesIO(pdf))
    assert b"VATEX-FR-FRANCHISE" in xml


def test_the_paid_email_carries_the_invoice_pdf(customer, usdc, worker_runs):
    with worker_runs():
        order = order_paid(usdc, user=customer)
    invoice = BillingDocument.objects.get(order=order)

    paid = [m for m in mail.outbox if order.number in m.subject and "Paiement reçu" in m.subject]
    assert len(paid) == 1
    [(filename, content, mimetype)] = paid[0].attachments
    assert (filename, mimetype) == (f"{invoice.number}.pdf", "application/pdf")
    assert invoice.number in pdf_text(content)


def test_later_account_changes_never_reach_an_issued_invoice(customer, usdc, worker_runs):
    with worker_runs():
        order = order_paid(usdc, user=customer)
    customer.company_name = "Renamed Ltd"
    customer.save()

    text = pdf_text(document_pdf(BillingDocument.objects.get(order=order)))
    assert "Renamed Ltd" not in text


def test_the_pdf_writes_french_numbers_whole_headers_and_the_environment_once(
    customer, usdc, worker_runs
):
    custom = EnvironmentFactory(
        slug="custom", name="Environnement personnalisé", requires_details=True
    )
    with worker_runs():
        order = order_paid(
            usdc,
            user=customer,
            quantity=2,
            total=Decimal("1008.00"),
            environment=custom,
            environment_details="my:image",
        )
    invoice = BillingDocument.objects.get(order=order)
    assert invoice.total == Decimal("1008.00")

    reader = pypdf.PdfReader(io.BytesIO(document_pdf(invoice)))
    raw = "\n".join(page.extract_text() for page in reader.pages)
    lines = [" ".join(line.replace("\xa0", " ").split()) for line in raw.splitlines()]
    text = " ".join(lines)
    # As the site writes them: grouped thousands, a decimal comma, the euro sign after.
    assert "1 008,00 €" in text and "840,00 €" in text and "168,00 €" in text
    assert "60,00 €" in text  # the unit price excl. VAT, 72 € a day with 20 % VAT
    assert "1 USDC = 0,92 €" in text
    assert "1 095,652174 USDC" in text
    for english in ("1008.00", "60.0000", "0.92000000", " EUR"):
        assert english not in text
    # A label never ends a line alone, apart from what it introduces.
    seller_vat = settings.BILLING_SELLER["vat_number"]
    assert any("N° de TVA intracommunautaire " + seller_vat in line for line in lines)
    # Paid, not started yet: the period starts with the rental (rental_periods_fix).
    period = "Période de la prestation : à compter du début de la location"
    assert any(line.startswith(period) for line in lines)
    assert "environnement Environnement" not in text
    assert text.count("Environnement personnalisé") == 1


def test_the_facture_and_its_credit_note_speak_french_typography_and_say_when_and_how_it_was_paid(
    usdc, worker_runs, password
):
    business = UserFactory(password=password, **BUYERS["french_business"])
    with worker_runs():
        order = order_paid(usdc, user=business, tx_hash=TX_HASH)
    invoice = BillingDocument.objects.get(order=order)
    credit_note = credit_note_issue(invoice=invoice)
    block_time = Transfer.objects.get(invoice__order=order).block_time
    paid_on = timezone.localdate(block_time).strftime("%d/%m/%Y")

    for document in (invoice, credit_note):
        text = "\n".join(page.extract_text() for page in pdf_reader(document_pdf(document)).pages)
        assert "Date d\N{RIGHT SINGLE QUOTATION MARK}émission\N{NO-BREAK SPACE}:" in text
        assert "Commande\N{NO-BREAK SPACE}:" in text and "Location\N{NO-BREAK SPACE}: 1 GPU" in text
        # Every colon has its no-break space; « ; ? ! » their narrow one.
        assert not re.findall(r"[^\N{NO-BREAK SPACE}]:", text)
        assert not re.findall(r"[^\N{NARROW NO-BREAK SPACE}][;?!]", text)
        means = r"[0-9 ,]+ USDC\s\(Anvil devnet,\stransaction\s0x5e5e…5e5e\)"
        said = rf"Acquittée le {paid_on} par {means}"
        assert re.search(said, text)
        # The buyer's address, which a business order cannot be placed without.
        assert "5 place Bellecour\n69002 Lyon" in text

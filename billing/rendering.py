"""An issued document as people read it (HTML, PDF) and as accounting software reads it
(Factur-X: the CII XML embedded in the PDF/A-3). Rendered from the document's snapshot
only, in French, so a document renders the same whenever it is downloaded."""

from datetime import datetime
from decimal import Decimal

import facturx
from django.template.loader import render_to_string
from django.utils import dateformat, timezone, translation
from django.utils.formats import number_format
from django.utils.translation import gettext, ngettext
from weasyprint import HTML

from billing.models import BillingDocument
from billing.services import DOCUMENT_LANGUAGE
from catalog.formatting import money
from catalog.vat import VatMode
from rental.text import xml_safe

# EN 16931 VAT category and exemption code (VATEX) per VAT mode.
CATEGORIES = {
    VatMode.STANDARD: ("S", ""),
    VatMode.FRANCHISE: ("E", "VATEX-FR-FRANCHISE"),
    VatMode.REVERSE_CHARGE: ("AE", "VATEX-EU-AE"),
}
INVOICE_TYPE, CREDIT_NOTE_TYPE = "380", "381"


def _vat_mention(document: BillingDocument) -> str:
    if document.vat_mode == VatMode.FRANCHISE:
        return gettext("VAT not applicable, art. 293 B of the French tax code (CGI)")
    if document.vat_mode == VatMode.REVERSE_CHARGE:
        return gettext(
            "Reverse charge: VAT due by the customer (art. 283-2 of the CGI, art. 196 of "
            "directive 2006/112/EC)"
        )
    return ""


def _business_mentions(document: BillingDocument) -> list[str]:
    if not document.is_business:
        return []
    return [
        gettext(
            "Late payment penalties: three times the French legal interest rate, due from "
            "the day after the due date without a reminder being needed."
        ),
        gettext(
            "Fixed indemnity for recovery costs in case of late payment: 40 € (art. L441-10 "
            "and D441-5 of the French commercial code). No discount for early payment."
        ),
    ]


def _places(value: Decimal) -> int:
    """The decimals `value` needs, two at least: 0.92000000 is written 0,92; 0.9936 keeps four."""
    exponent = value.normalize().as_tuple().exponent
    return max(2, -exponent if isinstance(exponent, int) else 0)


def _number(value: str) -> str:
    """A stored decimal as the document's language writes it, every significant place kept."""
    amount = Decimal(value)
    return number_format(amount, decimal_pos=_places(amount), use_l10n=True, force_grouping=True)


def _amount(value: Decimal | str, currency: str) -> str:
    amount = Decimal(value)
    return money(amount, currency, decimal_pos=_places(amount))


def _lines(document: BillingDocument) -> list[dict]:
    """The stored lines with their prices written for people (the XML keeps the raw ones)."""
    return [
        {
            **line,
            "unit_price_display": _amount(line["unit_price_excl_vat"], document.currency),
            "total_display": _amount(line["total_excl_vat"], document.currency),
        }
        for line in document.lines
    ]


def _abbreviated(tx_hash: str) -> str:
    """Enough of a hash to find it in an explorer; the list below the terms gives it whole."""
    return f"{tx_hash[:6]}…{tx_hash[-4:]}"


def _payment_terms(document: BillingDocument) -> str:
    """« Acquittée le 04/03/2026 par 1 095,65 USDC (Ethereum, transaction 0x5e5e…5e5e) »:
    when and by what means it was paid. A document issued before the payment date was
    stored, or one staff marked paid, says the day it was issued: the day it was paid."""
    payment = document.payment
    paid_at = payment.get("paid_at")
    paid = datetime.fromisoformat(paid_at) if paid_at else document.issued_at
    date = dateformat.format(timezone.localdate(paid), "d/m/Y")
    if not payment:
        return gettext("Paid on %(date)s.") % {"date": date}
    hashes = payment["tx_hashes"]
    where = payment["network"]
    if hashes:
        where = ngettext(
            "%(network)s, transaction %(hashes)s",
            "%(network)s, transactions %(hashes)s",
            len(hashes),
        ) % {"network": where, "hashes": ", ".join(map(_abbreviated, hashes))}
    return gettext(
        "Paid on %(date)s with %(amount)s %(symbol)s (%(where)s), at 1 %(symbol)s = %(rate)s "
        "(%(source)s)."
    ) % {
        "date": date,
        "amount": _number(payment["amount"]),
        "symbol": payment["symbol"],
        "where": where,
        "rate": _amount(payment["rate"], payment["rate_currency"]),
        "source": payment["rate_source"],
    }


def document_title(document: BillingDocument) -> str:
    if document.is_credit_note:
        return gettext("Credit note %(number)s") % {"number": document.number}
    return gettext("Invoice %(number)s") % {"number": document.number}


def document_context(document: BillingDocument) -> dict:
    """What the HTML page, the PDF and the XML say, in the active language."""
    buyer = document.buyer
    category, exemption_code = CATEGORIES[VatMode(document.vat_mode)]
    vat_mention = _vat_mention(document)
    business = _business_mentions(document)
    address_lines = [line.strip() for line in buyer.get("billing_address", "").splitlines()]
    notes = [{"content": vat_mention, "subject": "TXD"}] if vat_mention else []
    notes += [{"content": text, "subject": "PMD"} for text in business]
    credited = document.credited_invoice
    return {
        "document": document,
        "title": document_title(document),
        "seller": document.seller,
        "buyer": buyer,
        "buyer_name": buyer.get("company_name") or buyer["name"],
        "buyer_address_line": ", ".join(filter(None, address_lines)),
        "buyer_address_lines": [line for line in address_lines if line],
        "buyer_country": buyer.get("country") or document.seller["country"],
        "issued_on": timezone.localdate(document.issued_at),
        "credited_on": timezone.localdate(credited.issued_at) if credited else None,
        "type_code": CREDIT_NOTE_TYPE if document.is_credit_note else INVOICE_TYPE,
        "category": category,
        "exemption": vat_mention,
        "exemption_code": exemption_code,
        "vat_mention": vat_mention,
        "business_mentions": business,
        "payment_terms": _payment_terms(document),
        "lines": _lines(document),
        "notes": notes,
    }


def document_xml(document: BillingDocument) -> bytes:
    """The Factur-X (CII, profile BASIC) XML of the document."""
    with translation.override(DOCUMENT_LANGUAGE):
        xml = render_to_string("billing/factur-x.xml", document_context(document))
    # A buyer's detail taken before the forms refused control characters must not leave an
    # issued document that never renders.
    return xml_safe(xml).encode()


def document_pdf(document: BillingDocument) -> bytes:
    """The PDF/A-3 that people read, carrying the Factur-X XML; the XML is checked against
    the Factur-X schema on the way in (facturx raises if it does not validate)."""
    with translation.override(DOCUMENT_LANGUAGE):
        html = xml_safe(render_to_string("billing/document_pdf.html", document_context(document)))
        title = document_title(document)
    pdf = HTML(string=html).write_pdf(pdf_variant="pdf/a-3b")
    return facturx.generate_from_binary(
        pdf,
        document_xml(document),
        flavor="factur-x",
        level="basic",
        check_xsd=True,
        lang="fr-FR",
        pdf_metadata={
            "author": document.seller["name"],
            "keywords": "Factur-X",
            "title": title,
            "subject": title,
        },
    )

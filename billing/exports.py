"""The accountant's CSV: one line per invoice or credit note, credit notes negative."""

import csv
import io
from collections.abc import Iterable
from typing import Any

from django.utils import timezone

from billing.models import BillingDocument

HEADER = [
    "number",
    "kind",
    "date",
    "order",
    "buyer",
    "buyer_vat_number",
    "total_excl_vat",
    "vat",
    "total_incl_vat",
    "currency",
    "vat_mode",
    "asset",
    "network",
    "tx_hashes",
    "credited_invoice",
]


# A spreadsheet reads a text cell opening with one of these as a formula (OWASP, CSV injection).
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> Any:
    """Text opening with a formula prefix, behind a single quote, so that it reads as text.
    Numbers are the store's own and stay numbers: a credit note's total stays negative."""
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
        return "'" + value
    return value


def documents_csv(documents: Iterable[BillingDocument]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, delimiter=";")
    writer.writerow(HEADER)
    for document in documents:
        sign = -1 if document.is_credit_note else 1
        buyer = document.buyer
        payment = document.payment
        writer.writerow(
            map(
                csv_cell,
                [
                    document.number,
                    document.kind,
                    timezone.localdate(document.issued_at).isoformat(),
                    document.order.number,
                    buyer.get("company_name") or buyer["name"],
                    buyer.get("vat_number", ""),
                    sign * document.total_excl_vat,
                    sign * document.vat_amount,
                    sign * document.total,
                    document.currency,
                    document.vat_mode,
                    payment.get("symbol", ""),
                    payment.get("network", ""),
                    " ".join(payment.get("tx_hashes", [])),
                    document.credited_invoice.number if document.credited_invoice else "",
                ],
            )
        )
    return out.getvalue()

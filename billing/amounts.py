"""What VAT an invoice charges and how the amount paid splits into net and VAT.

Catalog prices are what the customer pays, VAT included (French B2C custom: prices shown
TTC), and the crypto amount paid is the invoice's total. Under the franchise (art. 293 B du
CGI) and in reverse charge (an EU business outside France with a VAT number) no VAT is
charged: the amount paid is the net amount.
"""

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from billing.models import VatMode

CENT = Decimal("0.01")
# Unit prices keep four decimals (EN 16931 allows more than the amounts' two).
UNIT_PRICE = Decimal("0.0001")


@dataclass(frozen=True)
class VatSplit:
    mode: str
    rate: Decimal
    total_excl_vat: Decimal
    vat_amount: Decimal
    total: Decimal

    def excl_vat(self, amount: Decimal, exponent: Decimal = CENT) -> Decimal:
        """`amount` (VAT included, as the catalog shows it) without its VAT."""
        if self.mode != VatMode.STANDARD:
            return amount.quantize(exponent, rounding=ROUND_HALF_UP)
        return (amount * 100 / (100 + self.rate)).quantize(exponent, rounding=ROUND_HALF_UP)


def vat_mode_for(*, buyer_vat_number: str, seller_country: str, franchise: bool) -> str:
    if franchise:
        return VatMode.FRANCHISE
    country = buyer_vat_number[:2].upper()
    # Greece's VAT numbers start with EL: any prefix other than the seller's is another state.
    if buyer_vat_number and country != seller_country:
        return VatMode.REVERSE_CHARGE
    return VatMode.STANDARD


def vat_split(*, total: Decimal, mode: str, rate: Decimal) -> VatSplit:
    rate = rate if mode == VatMode.STANDARD else Decimal(0)
    split = VatSplit(mode, rate, total, Decimal(0), total)
    excl = split.excl_vat(total)
    return VatSplit(mode, rate, excl, total - excl, total)

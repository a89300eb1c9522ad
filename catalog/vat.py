"""What VAT a price carries and how it splits into net and VAT: the one computation behind
every price shown (catalog, configurator, order page, API, e-mails) and the facture.

Catalog prices are what the customer pays, VAT included (French B2C custom: prices shown
TTC), and the crypto amount paid is the order's total. Under the franchise (art. 293 B du
CGI) and in reverse charge (an EU business outside France with a VAT number) no VAT is
charged: the amount paid is the net amount. Here rather than in billing: the catalog, the
lowest app that shows a price, needs the split before anything is billed.
"""

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

CENT = Decimal("0.01")
# Unit prices keep four decimals (EN 16931 allows more than the amounts' two).
UNIT_PRICE = Decimal("0.0001")


class VatMode(models.TextChoices):
    STANDARD = "standard", _("VAT charged")
    FRANCHISE = "franchise", _("VAT not applicable (franchise)")
    REVERSE_CHARGE = "reverse_charge", _("Reverse charge")


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


def price_split(*, total: Decimal, buyer_vat_number: str = "") -> VatSplit:
    """How `total` (a catalog price, VAT included) splits for this buyer under the store's
    VAT settings: what the facture of that price will say."""
    return vat_split(
        total=total,
        mode=vat_mode_for(
            buyer_vat_number=buyer_vat_number,
            seller_country=settings.BILLING_SELLER["country"],
            franchise=settings.BILLING_VAT_FRANCHISE,
        ),
        rate=settings.BILLING_VAT_RATE,
    )

from dataclasses import dataclass
from decimal import Decimal

from django.conf import settings
from django.utils.formats import number_format
from django.utils.translation import gettext, pgettext

from catalog.models import hourly_rate
from catalog.vat import VatMode, price_split

CURRENCY_SYMBOLS = {"EUR": "€", "USD": "$", "GBP": "£"}


def money(value: Decimal, currency: str | None = None, *, decimal_pos: int = 2) -> str:
    """An amount written the way the active language writes it: 1 008,00 € or €1,008.00.
    `decimal_pos`: more places for prices of a unit smaller than a cent matters in."""
    currency = currency or settings.STORE_CURRENCY
    return pgettext("money", "%(symbol)s%(amount)s") % {
        "symbol": CURRENCY_SYMBOLS.get(currency, f"{currency}\u00a0"),
        "amount": number_format(value, decimal_pos=decimal_pos, use_l10n=True, force_grouping=True),
    }


def per_hour(daily_rate: Decimal, currency: str | None = None) -> str:
    """The hourly equivalent of a daily rate, as written beside it: "i.e. €3.00/h"."""
    return gettext("i.e. %(rate)s/h") % {"rate": money(hourly_rate(daily_rate), currency)}


@dataclass(frozen=True)
class ShownPrice:
    """A price as a buyer reads it: `first` on their basis ("1 008,00 € TTC" for a consumer,
    "840,00 € HT" for a business), `second` the other basis and the VAT, a line below."""

    amount: Decimal  # the figure `first` writes
    first: str
    second: str


def _vat_said(mode: str, rate: Decimal) -> str:
    if mode == VatMode.FRANCHISE:
        return gettext("VAT not applicable")
    if mode == VatMode.REVERSE_CHARGE:
        return gettext("VAT reverse-charged")
    return gettext("VAT %(rate)s %%") % {"rate": number_format(rate.normalize(), use_l10n=True)}


def shown_price(amount: Decimal, currency: str | None = None, *, buyer=None) -> ShownPrice:
    """`amount` (a catalog price, VAT included) split as `buyer`'s facture will split it. A
    business account (a VAT number or a company: `is_business`) reads the price excluding
    VAT first; a consumer, an anonymous visitor or nobody named, the price VAT included."""
    business = getattr(buyer, "is_business", False)
    split = price_split(total=amount, buyer_vat_number=getattr(buyer, "vat_number", ""))
    incl = pgettext("price", "%(amount)s incl. VAT") % {"amount": money(split.total, currency)}
    excl = pgettext("price", "%(amount)s excl. VAT") % {
        "amount": money(split.total_excl_vat, currency)
    }
    vat = _vat_said(split.mode, split.rate)
    if split.mode != VatMode.STANDARD:  # nothing charged on top: one figure, and why
        return ShownPrice(split.total, excl if business else incl, vat)
    if business:
        return ShownPrice(split.total_excl_vat, excl, f"{incl} · {vat}")
    return ShownPrice(split.total, incl, f"{excl} · {vat}")


def storage(gigabytes: int) -> str:
    if gigabytes >= 1000:
        terabytes = number_format(
            Decimal(gigabytes) / 1000, decimal_pos=0 if gigabytes % 1000 == 0 else 1
        )
        return pgettext("storage", "%(n)s TB") % {"n": terabytes}
    return pgettext("storage", "%(n)s GB") % {"n": gigabytes}


def machine_specs(
    *, vcpus: int | None, ram_gb: int | None, disk_gb: int | None, regions: str | None
) -> str:
    parts = []
    if vcpus:
        parts.append(gettext("%(n)d vCPU") % {"n": vcpus})
    if ram_gb:
        parts.append(gettext("%(size)s of RAM") % {"size": storage(ram_gb)})
    if disk_gb:
        parts.append(gettext("%(size)s NVMe") % {"size": storage(disk_gb)})
    if regions:
        parts.append(gettext("region %(regions)s") % {"regions": regions})
    if not parts:
        return ""
    return gettext("From %(specs)s") % {"specs": ", ".join(parts)}

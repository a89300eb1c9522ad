from decimal import Decimal

from django.conf import settings
from django.utils.formats import number_format
from django.utils.translation import gettext, pgettext

from catalog.models import hourly_rate

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

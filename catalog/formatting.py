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

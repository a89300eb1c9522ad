from decimal import Decimal

from django import template
from django.conf import settings
from django.utils.formats import number_format
from django.utils.translation import pgettext

register = template.Library()

CURRENCY_SYMBOLS = {"EUR": "€", "USD": "$", "GBP": "£"}


@register.filter
def money(value: Decimal | None) -> str:
    """An amount in the store currency, written the way the active language writes it."""
    if value is None or value == "":
        return ""
    currency = settings.STORE_CURRENCY
    return pgettext("money", "%(symbol)s%(amount)s") % {
        "symbol": CURRENCY_SYMBOLS.get(currency, f"{currency}\u00a0"),
        "amount": number_format(value, decimal_pos=2, use_l10n=True, force_grouping=True),
    }


@register.simple_tag
def configure_query(*, environment: str = "pytorch", quantity: int = 1, term: int = 7) -> str:
    """The prefill query string the configurator understands."""
    return f"?environment={environment}&quantity={int(quantity)}&term={int(term)}"

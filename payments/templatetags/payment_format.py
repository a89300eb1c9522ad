"""Payment figures written the way the customer's language writes them."""

from decimal import Decimal

from django import template

from catalog.formatting import money
from payments.models import Asset
from payments.selectors import in_asset_units

register = template.Library()


@register.filter
def unit_price(rate: Decimal, currency: str) -> str:
    """What one unit of an asset costs: 0,9203 € for a stablecoin (a cent is too coarse for
    1 000 of them), 2 941,17 € for ether."""
    return money(rate, currency, decimal_pos=4 if rate < 10 else 2)


@register.filter
def asset_units(base_units: Decimal | int, asset: Asset) -> str:
    """Base units in whole units, exact: 1095.295013 (a wallet reads it, so no grouping)."""
    return in_asset_units(base_units, asset=asset)


@register.filter
def hash_short(value: str) -> str:
    """A transaction hash as staff compare it at a glance, `0x5e5e5e…5e5e5e`: the 66 characters
    in full would push a table past its column (the full hash goes in a title)."""
    return value if len(value) <= 20 else f"{value[:8]}…{value[-6:]}"

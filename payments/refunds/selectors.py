"""Reads on refunds: which one an order shows, and its facts for people (no HTML)."""

from collections.abc import Iterable
from decimal import Decimal

from django.db.models import QuerySet
from django.utils.formats import number_format
from django.utils.translation import gettext
from eth_utils import to_checksum_address

from orders.models import Order
from payments.refunds.models import Refund, RefundStatus
from payments.selectors import in_asset_units


def refunds_with_facts() -> QuerySet[Refund]:
    return Refund.objects.select_related("asset", "chain")


def refund_current(*, order: Order, refunds: Iterable[Refund] | None = None) -> Refund | None:
    """The refund the order page and the API show: the one still open, else the latest done;
    None when nothing is owed. `refunds`: the order's, prefetched, else read here."""
    if refunds is None:
        refunds = refunds_with_facts().filter(order=order)
    latest_first = sorted(refunds, key=lambda refund: refund.created_at, reverse=True)
    # An open refund at 0 was owed once, then its money left the chain (reorganisation).
    open_refund = next(
        (r for r in latest_first if r.status != RefundStatus.CONFIRMED and r.amount > 0), None
    )
    return open_refund or next(
        (r for r in latest_first if r.status == RefundStatus.CONFIRMED), None
    )


def refund_address_changeable(refund: Refund) -> bool:
    """Whether the customer may still give or correct the address: not once staff opened the
    refund to pay it (pinned), nor once it was sent."""
    unsent = refund.status in (RefundStatus.OWED, RefundStatus.ADDRESS_GIVEN)
    return unsent and refund.pinned_at is None


def refund_address_display(refund: Refund) -> str:
    return to_checksum_address(refund.address) if refund.address else ""


def refund_amount_localized(refund: Refund) -> str:
    """The amount in whole units in the active language, at least two decimals: 12,50."""
    value = Decimal(in_asset_units(refund.amount, asset=refund.asset))
    exponent = value.as_tuple().exponent
    decimals = max(2, -exponent if isinstance(exponent, int) else 0)
    return number_format(value, decimal_pos=decimals, use_l10n=True)


def refund_facts(refund: Refund) -> dict:
    """What people are told of a refund (timeline data, e-mails, the page): plain strings."""
    return {
        "refund": refund.pk,
        "invoice": refund.invoice_id,
        "asset": refund.asset.slug,
        "amount": str(int(refund.amount)),
        "amount_display": in_asset_units(refund.amount, asset=refund.asset),
        "symbol": refund.asset.symbol,
        "network": refund.chain.name,
        "address": refund_address_display(refund),
        "tx_hash": refund.tx_hash,
        "status": refund.status,
        "rejection": refund.rejection,
        "explorer_url": refund.chain.explorer_link(refund.tx_hash) if refund.tx_hash else "",
    }


def refund_to_send(refund: Refund) -> str:
    """What staff must send, in words: "to refund: 12,50 USDC to 0x… on Base"."""
    facts = {
        "amount": refund_amount_localized(refund),
        "symbol": refund.asset.symbol,
        "network": refund.chain.name,
    }
    if not refund.address:
        return gettext("to refund: %(amount)s %(symbol)s on %(network)s (no address yet)") % facts
    if refund_address_changeable(refund):
        # The customer may still change it: staff are shown the address to pay only once they
        # open the refund, which pins it (payments.refunds.services.refund_open).
        return (
            gettext(
                "to refund: %(amount)s %(symbol)s on %(network)s (address given: open the "
                "refund to see it pinned before paying)"
            )
            % facts
        )
    return gettext("to refund: %(amount)s %(symbol)s to %(address)s on %(network)s") % {
        **facts,
        "address": refund_address_display(refund),
    }

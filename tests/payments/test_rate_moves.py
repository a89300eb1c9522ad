"""A feed moving more than PAYMENTS_RATE_MAX_MOVE between two reads holds its asset: no invoice
at that rate, the asset unavailable to customers, the case in the staff's queue, until staff
confirm the new rate or the feed comes back within the band (issue 35: the devnet's ETH/USD
mock moved x1000 and a 33 € order cost 1.1e13 wei 31 s later)."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.urls import reverse
from django.utils import timezone, translation

from backoffice.selectors import queue_entries
from payments.models import Asset, Invoice, Rate
from payments.rates import chain_rates_refresh
from payments.selectors import rate_current
from payments.services import PaymentError, invoice_issue
from tests.factories import OrderFactory
from tests.payments.feeds import FeedsOnChain

pytestmark = [pytest.mark.chain]
UNAVAILABLE = "ETH on Anvil devnet: this payment method is temporarily unavailable"


@pytest.fixture
def feeds(devnet):
    feeds = FeedsOnChain(devnet)
    refresh(devnet)
    assert rate_current(asset=devnet.eth, currency="EUR").rate == Decimal("3000")
    return feeds


def refresh(devnet, now=None) -> None:
    chain_rates_refresh(chain=devnet.chain, now=now)
    devnet.eth.refresh_from_db()


def held_in_queue() -> int:
    return next(entry.count for entry in queue_entries() if entry.key == "rate_held")


def order_page(client, customer) -> str:
    with translation.override("en"):
        url = reverse("payments:page", args=[OrderFactory(user=customer).number])
    return client.get(url).content.decode()


def test_a_thousandfold_move_issues_nothing_until_staff_confirm_it(
    devnet, feeds, client, customer, staff
):
    feeds.set("ETH/USD", Decimal("3510000"))  # x1000 between two reads
    refresh(devnet)

    assert rate_current(asset=devnet.eth, currency="EUR") is None
    with pytest.raises(PaymentError) as refused:
        invoice_issue(order=OrderFactory(total=Decimal("33.00")), asset=devnet.eth)
    assert refused.value.code == "stale_rate"
    assert not Invoice.objects.exists()
    client.force_login(customer)
    assert UNAVAILABLE in order_page(client, customer)
    assert held_in_queue() == 1
    held = devnet.eth.rate_held
    assert held.rate == Decimal("3000000") and "x1000" in held.reason

    client.force_login(staff)
    listed = client.get(next(e.url for e in queue_entries() if e.key == "rate_held"))
    assert list(listed.context["cl"].result_list) == [devnet.eth]
    confirmed = client.post(
        reverse("admin:payments_asset_changelist"),
        {"action": "rate_held_confirm", ACTION_CHECKBOX_NAME: [devnet.eth.pk]},
        follow=True,
    )
    assert "1 ETH = 3000000.00000000 EUR" in confirmed.content.decode()

    held.refresh_from_db()
    devnet.eth.refresh_from_db()
    assert (held.confirmed_by, devnet.eth.rate_held, held_in_queue()) == (staff, None, 0)
    invoice = invoice_issue(order=OrderFactory(total=Decimal("33.00")), asset=devnet.eth)
    assert invoice.rate == held and invoice.amount_due == 11 * 10**12  # at the confirmed rate
    refresh(devnet)  # the next moves are measured from the confirmed rate
    assert rate_current(asset=devnet.eth, currency="EUR") == held


def test_a_move_within_the_band_changes_nothing(devnet, feeds):
    feeds.set("ETH/USD", Decimal("4212"))  # +20 % exactly: 3600 EUR
    refresh(devnet)
    assert rate_current(asset=devnet.eth, currency="EUR").rate == Decimal("3600")
    assert devnet.eth.rate_held is None and held_in_queue() == 0
    invoice = invoice_issue(order=OrderFactory(total=Decimal("36.00")), asset=devnet.eth)
    assert invoice.amount_due == 10**16


def test_the_feed_coming_back_within_the_band_releases_the_asset(devnet, feeds):
    feeds.set("ETH/USD", Decimal("3.51"))  # ÷1000 holds as x1000 does
    refresh(devnet)
    assert devnet.eth.rate_held is not None
    feeds.set("ETH/USD", Decimal("2.9"))  # still far from the rate before: still held
    refresh(devnet)
    assert devnet.eth.rate_held.rate == Decimal("2.47863248")
    feeds.set("ETH/USD", Decimal("3627"))  # within the band of 3000 EUR
    refresh(devnet)
    assert rate_current(asset=devnet.eth, currency="EUR").rate == Decimal("3100")
    assert devnet.eth.rate_held is None and held_in_queue() == 0


def test_a_move_after_a_longer_silence_than_the_window_is_not_held(devnet, feeds, settings):
    later = timezone.now() + settings.PAYMENTS_RATE_MOVE_WINDOW + timedelta(minutes=1)
    feeds.set("ETH/USD", Decimal("5265"), updated_at=later)  # +50 %, read over an hour after
    refresh(devnet, now=later)
    assert devnet.eth.rate_held is None
    assert rate_current(asset=devnet.eth, currency="EUR", now=later).rate == Decimal("4500")


def test_a_hold_outlasts_the_window(devnet, feeds, settings):
    feeds.set("ETH/USD", Decimal("3510000"))
    refresh(devnet)
    later = timezone.now() + settings.PAYMENTS_RATE_MOVE_WINDOW + timedelta(minutes=1)
    feeds.set("ETH/USD", Decimal("3522870"), updated_at=later)  # a new reading, as far
    refresh(devnet, now=later)
    assert Asset.objects.get(pk=devnet.eth.pk).rate_held is not None
    assert rate_current(asset=devnet.eth, currency="EUR", now=later) is None
    assert list(
        Rate.objects.filter(asset=devnet.eth, held=True).values_list("rate", flat=True)
    ) == [
        Decimal("3011000"),
        Decimal("3000000"),
    ]

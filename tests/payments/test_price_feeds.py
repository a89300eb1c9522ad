"""Rates from Chainlink's own MockV3Aggregator on anvil: each refusal, a normal update, an RPC
failure; never an invoice at a refused rate."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone, translation

from payments.models import Asset, Invoice, PriceFeed, Rate
from payments.rates import chain_rates_refresh, rate_set_manually
from payments.selectors import rate_current
from payments.services import PaymentError, invoice_issue
from tests.factories import OrderFactory
from tests.payments.feeds import FeedsOnChain

pytestmark = [pytest.mark.chain]


@pytest.fixture
def feeds(devnet):
    return FeedsOnChain(devnet)


def refresh(devnet):
    outcome = chain_rates_refresh(chain=devnet.chain)
    for asset in (devnet.eth, devnet.usdc):
        asset.refresh_from_db()
    return outcome


def priced(asset) -> Decimal | None:
    rate = rate_current(asset=asset, currency="EUR")
    return None if rate is None else rate.rate


def assert_refused(asset, because: str) -> None:
    """No rate, a reason for staff, and no invoice issued in that asset."""
    asset.refresh_from_db()
    assert because in asset.rate_refusal
    assert rate_current(asset=asset, currency="EUR") is None
    with pytest.raises(PaymentError) as refused, translation.override("en"):
        invoice_issue(order=OrderFactory(), asset=asset)
    assert refused.value.code == "stale_rate"
    assert "this payment method is temporarily unavailable" in str(refused.value.message)
    assert not Invoice.objects.filter(asset=asset).exists()


def test_a_normal_update_prices_eth_in_euros_through_eur_usd(devnet, feeds):
    refresh(devnet)
    rate = rate_current(asset=devnet.eth, currency="EUR")
    assert rate.rate == Decimal("3000")  # 3510 USD / 1.17 USD per EUR
    assert rate.source == "Chainlink ETH/USD ÷ EUR/USD" and rate.kind == Rate.Kind.FEED
    assert priced(devnet.usdc) == Decimal("0.85470085")  # 1 / 1.17, 8 places

    rows = Rate.objects.filter(asset=devnet.eth).count()
    refresh(devnet)  # nothing moved: the same row lives on
    assert Rate.objects.filter(asset=devnet.eth).count() == rows
    assert rate_current(asset=devnet.eth, currency="EUR") == rate

    feeds.set("ETH/USD", Decimal("3627"))
    refresh(devnet)
    assert priced(devnet.eth) == Decimal("3100")
    invoice = invoice_issue(order=OrderFactory(total=Decimal("310.00")), asset=devnet.eth)
    assert invoice.locked_rate == Decimal("3100") and invoice.amount_due == 10**17


def test_a_locked_rate_stays_locked_when_the_feed_moves(devnet, feeds):
    refresh(devnet)
    invoice = invoice_issue(order=OrderFactory(total=Decimal("300.00")), asset=devnet.eth)
    feeds.set("ETH/USD", Decimal("1755"))
    refresh(devnet)
    invoice.refresh_from_db()
    assert (invoice.locked_rate, invoice.amount_due) == (Decimal("3000"), 10**17)


def test_a_feed_older_than_its_heartbeat_and_margin_is_refused(devnet, feeds):
    feeds.set("ETH/USD", 3510, updated_at=timezone.now() - timedelta(seconds=3600 + 300 + 60))
    refresh(devnet)
    assert_refused(devnet.eth, "ETH/USD: stale")
    assert priced(devnet.usdc) is not None  # only the asset behind that feed


def test_a_feed_within_its_heartbeat_is_used(devnet, feeds):
    feeds.set("ETH/USD", 3510, updated_at=timezone.now() - timedelta(seconds=3600))
    refresh(devnet)
    assert priced(devnet.eth) == Decimal("3000")


def test_a_rate_expires_when_its_feed_would_turn_stale(devnet, feeds):
    updated = timezone.now() - timedelta(seconds=3500)
    feeds.set("ETH/USD", 3510, updated_at=updated)
    refresh(devnet)
    rate = rate_current(asset=devnet.eth, currency="EUR")
    assert rate.expires_at == updated.replace(microsecond=0) + timedelta(seconds=3600 + 300)
    later = rate.expires_at + timedelta(seconds=1)
    assert rate_current(asset=devnet.eth, currency="EUR", now=later) is None


def test_a_feed_updated_in_the_future_is_refused(devnet, feeds):
    feeds.set("EUR/USD", Decimal("1.17"), updated_at=timezone.now() + timedelta(hours=1))
    refresh(devnet)
    # EUR/USD converts both assets.
    assert_refused(devnet.eth, "EUR/USD: updated in the future")
    assert_refused(devnet.usdc, "EUR/USD: updated in the future")


def test_a_round_without_update_time_is_refused(devnet, feeds):
    feeds.set("ETH/USD", 3510, updated_at=0, started_at=0)
    refresh(devnet)
    assert_refused(devnet.eth, "ETH/USD: the round has no update time")


@pytest.mark.parametrize("answer", [0, -3510])
def test_a_zero_or_negative_answer_is_refused(devnet, feeds, answer):
    feeds.set("ETH/USD", answer)
    refresh(devnet)
    assert_refused(devnet.eth, f"ETH/USD: answer {answer * 10**8} is not a price")


def test_an_answer_carried_over_from_an_earlier_round_is_refused(devnet, feeds):
    feeds.lagging("ETH/USD")
    refresh(devnet)
    assert_refused(devnet.eth, "ETH/USD: answer carried over from round")


def test_a_sequencer_down_refuses_every_asset_of_the_chain(devnet, feeds):
    feeds.sequencer_add()
    feeds.set("sequencer", 1, decimals=0, started_at=timezone.now() - timedelta(hours=3))
    refresh(devnet)
    assert_refused(devnet.eth, "the L2 sequencer is down")
    assert_refused(devnet.usdc, "the L2 sequencer is down")


def test_a_sequencer_back_for_less_than_the_grace_period_is_refused(devnet, feeds):
    feeds.sequencer_add()
    feeds.set("sequencer", 0, decimals=0, started_at=timezone.now() - timedelta(minutes=20))
    refresh(devnet)
    assert_refused(devnet.eth, "the L2 sequencer came back only")

    feeds.set("sequencer", 0, decimals=0, started_at=timezone.now() - timedelta(hours=2))
    refresh(devnet)
    assert priced(devnet.eth) == Decimal("3000") and devnet.eth.rate_refusal == ""


@pytest.mark.parametrize("usd", ["0.9799", "1.0201"])
def test_a_stablecoin_off_its_peg_is_refused(devnet, feeds, usd):
    feeds.set("USDC/USD", Decimal(usd))
    refresh(devnet)
    assert_refused(devnet.usdc, f"USDC/USD: {Decimal(usd):.8f} is off its peg")
    assert priced(devnet.eth) == Decimal("3000")  # ETH has no peg


def test_a_stablecoin_inside_its_band_is_priced(devnet, feeds):
    feeds.set("USDC/USD", Decimal("0.98"))
    refresh(devnet)
    assert priced(devnet.usdc) == Decimal("0.83760684")


def test_an_rpc_failure_refuses_rather_than_keeping_the_last_price(devnet, feeds, settings):
    settings.PAYMENTS_RPC_RETRIES = 0
    refresh(devnet)
    assert priced(devnet.eth) == Decimal("3000")
    devnet.rpc_url_use("http://127.0.0.1:9")  # nothing listens there
    outcome = refresh(devnet)
    assert outcome["eth-devnet"].startswith("refused: eth_call")
    assert_refused(devnet.eth, "eth_call")
    assert_refused(devnet.usdc, "eth_call")


def test_a_refused_asset_is_priced_again_by_the_next_good_reading(devnet, feeds):
    feeds.set("ETH/USD", 0)
    refresh(devnet)
    assert priced(devnet.eth) is None
    feeds.set("ETH/USD", 3510)
    refresh(devnet)
    assert priced(devnet.eth) == Decimal("3000")


def test_staff_price_a_refused_asset_by_hand_until_the_expiry_they_chose(devnet, feeds, staff):
    feeds.set("ETH/USD", 0)
    refresh(devnet)
    until = timezone.now() + timedelta(hours=2)
    rate_set_manually(
        asset=devnet.eth,
        rate=Decimal("2900"),
        currency="EUR",
        reason="Feed down, price from our exchange",
        expires_at=until,
        staff_user=staff,
    )
    invoice = invoice_issue(order=OrderFactory(total=Decimal("290.00")), asset=devnet.eth)
    assert invoice.rate.kind == Rate.Kind.MANUAL and invoice.rate.created_by == staff
    assert invoice.rate.reason == "Feed down, price from our exchange"
    assert invoice.amount_due == 10**17
    later = until + timedelta(seconds=1)
    assert (
        rate_current(asset=Asset.objects.get(pk=devnet.eth.pk), currency="EUR", now=later) is None
    )


def test_the_beat_task_refreshes_every_active_chain(devnet, feeds):
    from payments.tasks import rates_refresh_task

    feeds.set("ETH/USD", Decimal("3627"))
    outcome = rates_refresh_task.delay().get()
    assert outcome == {
        "eth-devnet": "1 ETH = 3100.00000000 EUR",
        "usdc-devnet": outcome["usdc-devnet"],
    }
    assert priced(devnet.eth) == Decimal("3100")


def test_a_broken_feed_that_prices_nothing_does_not_refuse_the_others(devnet, feeds):
    PriceFeed.objects.create(
        chain=devnet.chain,
        pair="BTC/USD",
        role=PriceFeed.Role.PRICE,
        address="0x" + "12" * 20,  # no contract there: eth_call answers 0x
        heartbeat_seconds=3600,
    )
    refresh(devnet)
    assert priced(devnet.eth) == Decimal("3000") and priced(devnet.usdc) is not None


def test_an_absurd_answer_or_time_is_refused_not_crashed_on(devnet, feeds):
    feeds.set("ETH/USD", 2**200, decimals=0)
    refresh(devnet)
    assert_refused(devnet.eth, "Chainlink ETH/USD ÷ EUR/USD: a rate of 1.373E+52 is out of range")
    feeds.set("ETH/USD", 1, decimals=0)  # 10^-8 USD: no rate at 8 places
    refresh(devnet)
    assert_refused(devnet.eth, "is out of range")
    feeds.set("ETH/USD", 3510, updated_at=2**200)
    refresh(devnet)
    assert_refused(devnet.eth, "ETH/USD: updated in the future")
    feeds.sequencer_add()
    feeds.set("sequencer", 0, decimals=0, started_at=2**200)
    feeds.set("ETH/USD", 3510)
    refresh(devnet)
    assert_refused(devnet.eth, "the L2 sequencer status starts in the future")

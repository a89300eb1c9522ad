"""Rates from Chainlink price feeds, and rates set by staff.

A beat task reads every feed of a chain in one batched call (latestRoundData through the RPC
the watcher uses) and records, per asset, either a rate or why none can be trusted now. No
invoice is issued at a refused or expired rate (payments.selectors.rate_current), nor at one
that moved beyond PAYMENTS_RATE_MAX_MOVE until staff confirm it (Asset.rate_held).
"""

import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import ROUND_HALF_EVEN, Decimal

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from accounts.models import User
from payments.models import Asset, Chain, PriceFeed, Rate
from payments.watcher.rpc import RoundData, RpcClient, RpcError

logger = logging.getLogger(__name__)
# Rate.rate: 8 decimal places, 16 digits before them.
RATE_PLACES, RATE_LIMIT = Decimal("0.00000001"), Decimal(10) ** 16


class FeedRefused(Exception):
    """A reading that must not price an invoice; the message is for staff."""


def _time(seconds: int) -> datetime:
    return datetime.fromtimestamp(seconds, tz=UTC)


def feed_answer(*, feed: PriceFeed, data: RoundData, now: datetime) -> Decimal:
    """The feed's answer in whole units, or FeedRefused saying why it cannot be trusted."""
    if data.updated_at == 0:
        raise FeedRefused(f"{feed.pair}: the round has no update time")
    # Compared as integers first: a uint256 time may lie beyond any datetime.
    if data.updated_at > (now + settings.PAYMENTS_FEED_CLOCK_SKEW).timestamp():
        raise FeedRefused(f"{feed.pair}: updated in the future (Unix time {data.updated_at})")
    age = now - _time(data.updated_at)
    if age > timedelta(seconds=feed.heartbeat_seconds) + settings.PAYMENTS_FEED_HEARTBEAT_MARGIN:
        raise FeedRefused(
            f"{feed.pair}: stale, updated {int(age.total_seconds())} s ago "
            f"(heartbeat {feed.heartbeat_seconds} s)"
        )
    if data.answer <= 0:
        raise FeedRefused(f"{feed.pair}: answer {data.answer} is not a price")
    if data.answered_in_round < data.round_id:
        raise FeedRefused(
            f"{feed.pair}: answer carried over from round {data.answered_in_round} "
            f"(latest round {data.round_id})"
        )
    return Decimal(data.answer).scaleb(-feed.decimals)


def sequencer_check(*, data: RoundData, now: datetime) -> None:
    """An L2 sequencer-uptime feed answers 0 while up, 1 while down; `startedAt` is when that
    status began. Right after an outage prices may lag: wait a grace period."""
    if data.answer != 0:
        raise FeedRefused("the L2 sequencer is down")
    if data.started_at == 0:
        raise FeedRefused("the L2 sequencer status has no start time")
    if data.started_at > now.timestamp():
        raise FeedRefused("the L2 sequencer status starts in the future")
    since = now - _time(data.started_at)
    if since < settings.PAYMENTS_SEQUENCER_GRACE:
        raise FeedRefused(f"the L2 sequencer came back only {int(since.total_seconds())} s ago")


@dataclass(frozen=True)
class FeedRate:
    rate: Decimal
    source: str
    feed_updated_at: datetime
    expires_at: datetime


def _feed_rate(
    *, asset: Asset, fiat: PriceFeed | None, readings: dict[int, RoundData], now: datetime
) -> FeedRate:
    """The asset's rate in the store currency: its USD price, divided by the currency's USD
    price unless the store sells in USD."""
    feed = asset.price_feed
    if feed is None:
        raise FeedRefused(f"{asset.slug}: no price feed")
    if feed.chain_id != asset.chain_id:
        raise FeedRefused(f"{feed.pair}: a feed of another chain")
    price = feed_answer(feed=feed, data=readings[feed.pk], now=now)
    if asset.is_stablecoin and not (
        settings.PAYMENTS_PEG_LOW <= price <= settings.PAYMENTS_PEG_HIGH
    ):
        raise FeedRefused(f"{feed.pair}: {price} is off its peg")
    used = [feed]
    currency = settings.STORE_CURRENCY
    if currency != "USD":
        if fiat is None:
            raise FeedRefused(f"no {currency}/USD feed on {asset.chain.name}")
        price /= feed_answer(feed=fiat, data=readings[fiat.pk], now=now)
        used.append(fiat)
    source = "Chainlink " + " ÷ ".join(each.pair for each in used)
    if not RATE_PLACES <= price < RATE_LIMIT:
        raise FeedRefused(f"{source}: a rate of {price:.3E} is out of range")
    # The rate lasts while every feed behind it would still pass feed_answer, and only until
    # the next reads could have seen a move.
    margin = settings.PAYMENTS_FEED_HEARTBEAT_MARGIN
    expires_at = min(
        [
            _time(readings[each.pk].updated_at) + timedelta(seconds=each.heartbeat_seconds) + margin
            for each in used
        ]
        + [now + settings.PAYMENTS_RATE_MAX_AGE]
    )
    return FeedRate(
        rate=price.quantize(RATE_PLACES, rounding=ROUND_HALF_EVEN),
        source=source,
        feed_updated_at=min(_time(readings[each.pk].updated_at) for each in used),
        expires_at=expires_at,
    )


# A feed rate staff may build on: never held, or held and confirmed by staff.
TRUSTED = Q(held=False) | Q(confirmed_at__isnull=False)


def rate_move(*, old: Decimal, new: Decimal) -> Decimal:
    """How far apart two rates are, either way: the higher over the lower, less one (x1000
    and ÷1000 are both 999)."""
    low, high = sorted((old, new))
    return high / low - 1


def _move_held_because(*, rate: Decimal, trusted: Rate | None, holding: bool, now: datetime) -> str:
    """Why the new feed `rate` must wait for staff ("" when it need not): it moved beyond
    PAYMENTS_RATE_MAX_MOVE from the `trusted` rate read within PAYMENTS_RATE_MOVE_WINDOW, or
    the asset is `holding` already and the feed has not come back within the band."""
    if trusted is None:
        return ""
    move = rate_move(old=trusted.rate, new=rate)
    if move <= settings.PAYMENTS_RATE_MAX_MOVE:
        return ""
    read_at = trusted.read_at or trusted.fetched_at
    if not holding and read_at < now - settings.PAYMENTS_RATE_MOVE_WINDOW:
        return ""  # read too long ago for a move to tell a misreading from the market
    factor = (move + 1).quantize(Decimal("0.1")).normalize()
    return (
        f"moved x{factor:f} from {trusted.rate.normalize():f} {trusted.currency}, the trusted "
        f"rate read at {read_at.isoformat(timespec='seconds')}: held until staff confirm it "
        "or the feed comes back within the band"
    )


def _feed_rate_record(*, asset: Asset, priced: FeedRate, now: datetime) -> Rate:
    """A new rate when the price moved; else the latest one lives on (one row per price, not
    per read). A new rate too far from the trusted one is recorded held: the asset names it
    (Asset.rate_held) and no feed rate prices it until staff confirm or the feed comes back
    within the band, which releases it."""
    currency = settings.STORE_CURRENCY
    with transaction.atomic():
        # The asset's row first, as staff confirming its held rate take it (rate_held_confirm).
        held_before = (
            Asset.objects.select_for_update().values_list("rate_held", flat=True).get(pk=asset.pk)
        )
        rates = Rate.objects.filter(asset=asset, currency=currency, kind=Rate.Kind.FEED)
        latest = rates.order_by("-fetched_at").first()
        if (
            latest is not None
            and latest.rate == priced.rate
            and latest.feed_updated_at == priced.feed_updated_at
        ):
            latest.expires_at, latest.read_at = priced.expires_at, now
            latest.save(update_fields=["expires_at", "read_at"])
        else:
            trusted = rates.filter(TRUSTED).order_by("-fetched_at").first()
            because = _move_held_because(
                rate=priced.rate, trusted=trusted, holding=held_before is not None, now=now
            )
            if because:
                logger.warning("Rate of %s held: %s", asset.slug, because)
            latest = Rate.objects.create(
                asset=asset,
                currency=currency,
                rate=priced.rate,
                source=priced.source,
                kind=Rate.Kind.FEED,
                fetched_at=now,
                expires_at=priced.expires_at,
                feed_updated_at=priced.feed_updated_at,
                read_at=now,
                held=bool(because),
                reason=because,
            )
        held = latest if latest.held and latest.confirmed_at is None else None
        Asset.objects.filter(pk=asset.pk).update(
            rate_refusal="", rate_checked_at=now, rate_held=held
        )
    return latest


def _refuse(*, asset: Asset, reason: str, now: datetime) -> None:
    logger.warning("Rate of %s refused: %s", asset.slug, reason)
    Asset.objects.filter(pk=asset.pk).update(rate_refusal=reason[:300], rate_checked_at=now)


def chain_rates_refresh(
    *, chain: Chain, now: datetime | None = None, client: RpcClient | None = None
) -> dict[str, str]:
    """Read the chain's feeds once and price each of its assets that has a feed. Returns,
    per asset id, the rate recorded or why it was refused."""
    now = now or timezone.now()
    assets = list(
        chain.assets.filter(is_active=True, price_feed__isnull=False).select_related(
            "price_feed", "chain"
        )
    )
    if not assets:
        return {}
    on_chain = list(chain.price_feeds.all())
    fiat = next(
        (
            each
            for each in on_chain
            if each.role == PriceFeed.Role.FIAT and each.pair == f"{settings.STORE_CURRENCY}/USD"
        ),
        None,
    )
    sequencer = next((each for each in on_chain if each.role == PriceFeed.Role.SEQUENCER), None)
    # Only the feeds in use: a mistyped feed that prices nothing must not refuse the others.
    used = {asset.price_feed_id for asset in assets} | {
        fiat and fiat.pk,
        sequencer and sequencer.pk,
    }
    feeds = [each for each in on_chain if each.pk in used]
    client = client or RpcClient(chain.rpc_url)
    outcome: dict[str, str] = {}
    try:
        readings = dict(
            zip(
                [each.pk for each in feeds],
                client.latest_rounds([each.address for each in feeds]),
                strict=True,
            )
        )
        if sequencer is not None:
            sequencer_check(data=readings[sequencer.pk], now=now)
    except (RpcError, FeedRefused) as exc:
        # Nothing read can be trusted: no invoice at a price we could not check.
        for asset in assets:
            _refuse(asset=asset, reason=f"{exc}"[:300], now=now)
            outcome[asset.slug] = f"refused: {exc}"
        return outcome
    for asset in assets:
        try:
            priced = _feed_rate(asset=asset, fiat=fiat, readings=readings, now=now)
        except FeedRefused as exc:
            _refuse(asset=asset, reason=str(exc), now=now)
            outcome[asset.slug] = f"refused: {exc}"
            continue
        rate = _feed_rate_record(asset=asset, priced=priced, now=now)
        outcome[asset.slug] = str(rate)
    return outcome


def rates_refresh(*, now: datetime | None = None) -> dict[str, str]:
    """Every active chain's feed rates; one chain's failure does not stop the others."""
    outcome: dict[str, str] = {}
    for chain in Chain.objects.filter(is_active=True, price_feeds__isnull=False).distinct():
        outcome |= chain_rates_refresh(chain=chain, now=now)
    return outcome


def rate_held_confirm(
    *, asset: Asset, staff_user: User, now: datetime | None = None
) -> Rate | None:
    """Staff confirm the rate held on `asset`: it prices new invoices from now on (while it
    lasts), and the next moves are measured from it. None when nothing is held any more (the
    feed came back within the band meanwhile)."""
    now = now or timezone.now()
    with transaction.atomic():
        locked = Asset.objects.select_for_update().get(pk=asset.pk)
        if locked.rate_held_id is None:
            return None
        Rate.objects.filter(pk=locked.rate_held_id).update(
            confirmed_at=now, confirmed_by=staff_user
        )
        Asset.objects.filter(pk=asset.pk).update(rate_held=None)
        logger.warning(
            "Rate %s of %s confirmed by user %s", locked.rate_held_id, asset.slug, staff_user.pk
        )
    return Rate.objects.select_related("asset").get(pk=locked.rate_held_id)


class RateRefused(Exception):
    """A manual rate staff may not set; the message says why."""


def rate_manual_check(
    *, rate: Decimal, reason: str, expires_at: datetime, now: datetime | None = None
) -> None:
    """RateRefused unless staff may set this rate by hand."""
    if not (reason or "").strip():
        raise RateRefused(_("Give the reason for setting this rate by hand."))
    if rate <= 0:
        raise RateRefused(_("A rate is a positive amount."))
    if expires_at <= (now or timezone.now()):
        raise RateRefused(_("The expiry must be in the future."))


def rate_set_manually(
    *,
    asset: Asset,
    rate: Decimal,
    currency: str,
    reason: str,
    expires_at: datetime,
    staff_user: User,
    now: datetime | None = None,
) -> Rate:
    """Staff price an asset themselves (feeds down, asset without a feed), until `expires_at`.
    While it lasts it prices new invoices, whatever the feeds say."""
    now = now or timezone.now()
    rate_manual_check(rate=rate, reason=reason, expires_at=expires_at, now=now)
    return Rate.objects.create(
        asset=asset,
        currency=currency,
        rate=rate,
        source="manual",
        kind=Rate.Kind.MANUAL,
        fetched_at=now,
        expires_at=expires_at,
        reason=reason.strip(),
        created_by=staff_user,
    )

"""Chainlink's MockV3Aggregator on anvil, driven by the feed tests in a sentence each."""

import itertools
from datetime import datetime
from decimal import Decimal

from django.utils import timezone
from web3 import Web3

from payments.devnet import artifact, contract_deploy, feed_deploy
from payments.models import PriceFeed


class FeedsOnChain:
    """Fresh mock feeds for one test, put in place of the devnet chain's feeds: the session's
    own feeds stay untouched for the other tests."""

    def __init__(self, devnet):
        self.devnet, self.w3, self.chain = devnet, devnet.w3, devnet.chain
        self.addresses: dict[str, str] = {}
        self._rounds = itertools.count(10)
        for feed in PriceFeed.objects.filter(chain=self.chain):
            answer = Decimal(
                {"ETH/USD": "3510", "USDC/USD": "1.0000", "EUR/USD": "1.17"}[feed.pair]
            )
            self.replace(feed.pair, feed_deploy(self.w3, answer))
            # Stamped with our clock: earlier tests may have moved the chain's clock ahead.
            self.set(feed.pair, answer)
        PriceFeed.objects.filter(chain=self.chain).update(heartbeat_seconds=3600)

    def replace(self, pair: str, address: str) -> None:
        PriceFeed.objects.filter(chain=self.chain, pair=pair).update(address=address)
        self.addresses[pair] = address

    def contract(self, pair: str):
        return self.w3.eth.contract(
            address=Web3.to_checksum_address(self.addresses[pair]),
            abi=artifact("MockV3Aggregator")["abi"],
        )

    def set(
        self,
        pair: str,
        answer: Decimal | int,
        *,
        updated_at: datetime | int | None = None,
        started_at: datetime | int | None = None,
        decimals: int = 8,
    ) -> None:
        """A new round of `pair` with this answer and times (now by default)."""
        updated = _seconds(timezone.now() if updated_at is None else updated_at)
        started = updated if started_at is None else _seconds(started_at)
        tx = (
            self.contract(pair)
            .functions.updateRoundData(
                next(self._rounds), int(Decimal(answer).scaleb(decimals)), updated, started
            )
            .transact({"from": self.w3.eth.accounts[0]})
        )
        self.w3.eth.wait_for_transaction_receipt(tx, timeout=10)

    def sequencer_add(self) -> None:
        """An L2 sequencer-uptime feed (answer 0: up), as Chainlink's mock."""
        address = feed_deploy(self.w3, Decimal(0), decimals=0)
        PriceFeed.objects.create(
            chain=self.chain,
            pair="sequencer",
            role=PriceFeed.Role.SEQUENCER,
            address=address,
            decimals=0,
            heartbeat_seconds=86_400,
        )
        self.addresses["sequencer"] = address

    def lagging(self, pair: str) -> None:
        """`pair` now answers from an earlier round than its latest (answeredInRound < roundId)."""
        source = Web3.to_checksum_address(self.addresses[pair])
        self.replace(pair, contract_deploy(self.w3, source, name="LaggingRoundFeed"))


def _seconds(moment: datetime | int) -> int:
    return moment if isinstance(moment, int) else int(moment.timestamp())

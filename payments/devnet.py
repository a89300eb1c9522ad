"""The local anvil devnet: deploy the test token, register the chain, pay like a customer.

Used by `setup_devnet`, `simulate_payment`, the test suite and the benchmark. Anvil's default
accounts are unlocked, so transactions are sent with eth_sendTransaction: no key here.
"""

import json
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import cast

from django.conf import settings
from django.db import transaction
from web3 import Web3
from web3.types import TxParams

from payments.models import Asset, Chain, PriceFeed, ScanCursor
from payments.rates import chain_rates_refresh
from payments.services import chain_cursor_start

BUILD = Path(settings.BASE_DIR) / "contracts" / "build"
DEVNET_CHAIN_ID = 31337
ETH_SLUG, USDC_SLUG = "eth-devnet", "usdc-devnet"
# The devnet prices like a real network: Chainlink's MockV3Aggregator feeds read through the
# same code path. In euros: 3240 / 1.08 = 3000 per ETH, 0.9936 / 1.08 = 0.92 per USDC.
DEVNET_FEEDS = {
    "ETH/USD": Decimal("3240"),
    "USDC/USD": Decimal("0.9936"),
    "EUR/USD": Decimal("1.08"),
}
FEED_DECIMALS = 8
# The mock feeds never update by themselves: a year-long heartbeat keeps them usable for a
# long `make run`, while each rate read from them still expires PAYMENTS_RATE_MAX_AGE later.
DEVNET_FEED_HEARTBEAT = 365 * 86_400


def artifact(name: str = "TestUSDC") -> dict:
    return json.loads((BUILD / f"{name}.json").read_text())


def web3_for(url: str) -> Web3:
    return Web3(Web3.HTTPProvider(url, request_kwargs={"timeout": 10}))


def contract_deploy(w3: Web3, *args, name: str = "TestUSDC", deployer: str | None = None) -> str:
    """Deploy a contract of contracts/build/ with constructor `args`; returns its lower-case
    address."""
    compiled = artifact(name)
    contract = w3.eth.contract(abi=compiled["abi"], bytecode=compiled["bytecode"])
    tx = contract.constructor(*args).transact({"from": deployer or w3.eth.accounts[0]})
    receipt = w3.eth.wait_for_transaction_receipt(tx, timeout=30)
    address = receipt["contractAddress"]
    assert address is not None  # the receipt of a contract creation names the contract
    return address.lower()


def token_deploy(w3: Web3, *, deployer: str | None = None) -> str:
    return contract_deploy(w3, deployer=deployer)


def feed_deploy(w3: Web3, answer: Decimal, *, decimals: int = FEED_DECIMALS) -> str:
    """Chainlink's MockV3Aggregator answering `answer`, updated at the current block."""
    return contract_deploy(w3, decimals, int(answer.scaleb(decimals)), name="MockV3Aggregator")


def devnet_feeds_deploy(w3: Web3) -> dict[str, str]:
    """The devnet's feeds: pair -> address."""
    return {pair: feed_deploy(w3, answer) for pair, answer in DEVNET_FEEDS.items()}


def token(w3: Web3, address: str):
    return w3.eth.contract(address=Web3.to_checksum_address(address), abi=artifact()["abi"])


def token_mint(w3: Web3, *, token_address: str, to: str, amount: int) -> str:
    tx = (
        token(w3, token_address)
        .functions.mint(Web3.to_checksum_address(to), amount)
        .transact({"from": w3.eth.accounts[0]})
    )
    w3.eth.wait_for_transaction_receipt(tx, timeout=30)
    return Web3.to_hex(tx)


def token_transfer(
    w3: Web3, *, token_address: str, sender: str, to: str, amount: int, **extra
) -> str:
    tx = (
        token(w3, token_address)
        .functions.transfer(Web3.to_checksum_address(to), amount)
        .transact({"from": Web3.to_checksum_address(sender), **extra})
    )
    return Web3.to_hex(tx)


def native_transfer(w3: Web3, *, sender: str, to: str, amount: int, **extra) -> str:
    # `extra` holds more transaction fields (a test's gas limit), passed on to the node as is.
    params = {
        "from": Web3.to_checksum_address(sender),
        "to": Web3.to_checksum_address(to),
        "value": amount,
        **extra,
    }
    tx = w3.eth.send_transaction(cast(TxParams, params))
    return Web3.to_hex(tx)


def devnet_register(
    *, rpc_url: str, token_address: str, confirmations: int, feeds: dict[str, str] | None = None
) -> Chain:
    """Chain 31337 with ETH and the test USDC priced by mock Chainlink feeds (deployed unless
    `feeds` gives them, pair -> address), fresh rates, and a cursor at the head."""
    w3 = web3_for(rpc_url)
    feeds = feeds or devnet_feeds_deploy(w3)
    with transaction.atomic():
        chain, _created = Chain.objects.update_or_create(
            chain_id=DEVNET_CHAIN_ID,
            defaults={
                "name": "Anvil devnet",
                "rpc_url_env": "",
                "default_rpc_url": rpc_url,
                # Anvil has no key to hide: wallets may add the devnet with it.
                "public_rpc_url": rpc_url,
                "confirmations": confirmations,
                "block_time_seconds": Decimal("2"),
                "is_devnet": True,
                "is_active": True,
            },
        )
        price_feeds = {
            pair: PriceFeed.objects.update_or_create(
                chain=chain,
                pair=pair,
                defaults={
                    "role": PriceFeed.Role.FIAT if pair == "EUR/USD" else PriceFeed.Role.PRICE,
                    "address": address.lower(),
                    "decimals": FEED_DECIMALS,
                    "heartbeat_seconds": DEVNET_FEED_HEARTBEAT,
                },
            )[0]
            for pair, address in feeds.items()
        }
        Asset.objects.update_or_create(
            slug=ETH_SLUG,
            defaults={
                "chain": chain,
                "kind": Asset.Kind.NATIVE,
                "symbol": "ETH",
                "name": "Ether (devnet)",
                "contract_address": "",
                "decimals": 18,
                "price_feed": price_feeds["ETH/USD"],
            },
        )
        Asset.objects.update_or_create(
            slug=USDC_SLUG,
            defaults={
                "chain": chain,
                "kind": Asset.Kind.ERC20,
                "symbol": "USDC",
                "name": "Test USD Coin (devnet)",
                "contract_address": token_address.lower(),
                "decimals": 6,
                "price_feed": price_feeds["USDC/USD"],
                "is_stablecoin": True,
            },
        )
        if not ScanCursor.objects.filter(chain=chain).exists():
            head = w3.eth.get_block("latest")
            chain_cursor_start(
                chain=chain,
                block_number=head["number"],
                block_hash=Web3.to_hex(head["hash"]),
                block_time=datetime.fromtimestamp(head["timestamp"], tz=UTC),
            )
    chain_rates_refresh(chain=chain)
    return chain

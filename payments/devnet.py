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

from payments.models import Asset, Chain, ScanCursor
from payments.services import chain_cursor_start, rate_record

BUILD = Path(settings.BASE_DIR) / "contracts" / "build"
DEVNET_CHAIN_ID = 31337
ETH_SLUG, USDC_SLUG = "eth-devnet", "usdc-devnet"
# Fixed devnet prices in the store currency.
DEVNET_RATES = {ETH_SLUG: Decimal("3000"), USDC_SLUG: Decimal("0.92")}


def artifact(name: str = "TestUSDC") -> dict:
    return json.loads((BUILD / f"{name}.json").read_text())


def web3_for(url: str) -> Web3:
    return Web3(Web3.HTTPProvider(url, request_kwargs={"timeout": 10}))


def contract_deploy(w3: Web3, *, name: str = "TestUSDC", deployer: str | None = None) -> str:
    """Deploy a contract of contracts/build/; returns its lower-case address."""
    compiled = artifact(name)
    contract = w3.eth.contract(abi=compiled["abi"], bytecode=compiled["bytecode"])
    tx = contract.constructor().transact({"from": deployer or w3.eth.accounts[0]})
    receipt = w3.eth.wait_for_transaction_receipt(tx, timeout=30)
    address = receipt["contractAddress"]
    assert address is not None  # the receipt of a contract creation names the contract
    return address.lower()


def token_deploy(w3: Web3, *, deployer: str | None = None) -> str:
    return contract_deploy(w3, deployer=deployer)


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


def devnet_register(*, rpc_url: str, token_address: str, confirmations: int) -> Chain:
    """Chain 31337 with ETH and the test USDC, fresh rates, and a cursor at the head."""
    w3 = web3_for(rpc_url)
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
        Asset.objects.update_or_create(
            slug=ETH_SLUG,
            defaults={
                "chain": chain,
                "kind": Asset.Kind.NATIVE,
                "symbol": "ETH",
                "name": "Ether (devnet)",
                "contract_address": "",
                "decimals": 18,
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
            },
        )
        for slug, value in DEVNET_RATES.items():
            rate_record(
                asset=Asset.objects.get(slug=slug),
                rate=value,
                currency=settings.STORE_CURRENCY,
                source="devnet fixed price",
            )
        if not ScanCursor.objects.filter(chain=chain).exists():
            head = w3.eth.get_block("latest")
            chain_cursor_start(
                chain=chain,
                block_number=head["number"],
                block_hash=Web3.to_hex(head["hash"]),
                block_time=datetime.fromtimestamp(head["timestamp"], tz=UTC),
            )
    return chain

"""Production networks from payments/presets.py: loaded as rows, active only once checked.

A network is switched on only when its RPC URL variable is set, the node there answers the
preset's chain id, and each token's decimals() and symbol() read on chain match the row: a
wrong URL (another chain) or a mistyped token would otherwise price and credit the wrong thing.
"""

import os

from django.db import transaction

from payments.models import Asset, Chain, PriceFeed
from payments.presets import NetworkPreset
from payments.watcher.rpc import RpcClient, RpcError


class ActivationRefused(Exception):
    """The network stays off; the message says what to fix."""


@transaction.atomic
def network_preset_load(*, preset: NetworkPreset) -> Chain:
    """Create or update the preset's chain, feeds and assets; running it again changes
    nothing. A new chain starts inactive (see chain_activate); an existing one keeps its
    state, its confirmations and which assets staff offer."""
    chain, _created = Chain.objects.update_or_create(
        chain_id=preset.chain_id,
        defaults={
            "name": preset.name,
            "rpc_url_env": preset.rpc_url_env,
            "default_rpc_url": "",
            "public_rpc_url": preset.public_rpc_url,
            "block_time_seconds": preset.block_time_seconds,
            "finality_tag": preset.finality_tag,
            "explorer_tx_url": preset.explorer_tx_url,
            "is_devnet": False,
        },
        create_defaults={
            "name": preset.name,
            "rpc_url_env": preset.rpc_url_env,
            "public_rpc_url": preset.public_rpc_url,
            "block_time_seconds": preset.block_time_seconds,
            "finality_tag": preset.finality_tag,
            "confirmations": preset.confirmations,
            "explorer_tx_url": preset.explorer_tx_url,
            "is_active": False,
        },
    )
    feeds = {
        feed.pair: PriceFeed.objects.update_or_create(
            chain=chain,
            pair=feed.pair,
            defaults={
                "role": feed.role,
                "address": feed.address,
                "decimals": feed.decimals,
                "heartbeat_seconds": feed.heartbeat_seconds,
            },
        )[0]
        for feed in preset.feeds
    }
    Asset.objects.update_or_create(
        slug=preset.asset_slug(preset.native_symbol),
        defaults={
            "chain": chain,
            "kind": Asset.Kind.NATIVE,
            "symbol": preset.native_symbol,
            "name": preset.native_name,
            "contract_address": "",
            "decimals": 18,
            "price_feed": feeds.get(preset.native_price_pair),
            "is_stablecoin": False,
        },
    )
    for token in preset.tokens:
        Asset.objects.update_or_create(
            slug=preset.asset_slug(token.symbol),
            defaults={
                "chain": chain,
                "kind": Asset.Kind.ERC20,
                "symbol": token.symbol,
                "name": token.name,
                "contract_address": token.address,
                "decimals": token.decimals,
                "price_feed": feeds.get(token.price_pair),
                "is_stablecoin": token.is_stablecoin,
            },
        )
    return chain


def _refuse(chain: Chain, message: str) -> ActivationRefused:
    Chain.objects.filter(pk=chain.pk).update(is_active=False)
    return ActivationRefused(f"{chain.name}: {message}")


def chain_activate(*, chain: Chain) -> None:
    """Switch `chain` on after checking it on its RPC; else switch it off and raise
    ActivationRefused. The RPC calls happen outside any transaction."""
    url = os.environ.get(chain.rpc_url_env, "") if chain.rpc_url_env else ""
    if not url:
        raise _refuse(chain, f"set {chain.rpc_url_env or 'its RPC URL variable'} to activate it.")
    client = RpcClient(url, retries=1)
    try:
        answered = client.chain_id()
        if answered != chain.chain_id:
            raise _refuse(
                chain,
                f"the node at ${chain.rpc_url_env} is chain {answered}, not {chain.chain_id}.",
            )
        tokens = list(chain.assets.filter(kind=Asset.Kind.ERC20).order_by("slug"))
        for asset in tokens:
            decimals = client.decimals(asset.contract_address)
            symbol = client.symbol(asset.contract_address)
            if (decimals, symbol) != (asset.decimals, asset.symbol):
                raise _refuse(
                    chain,
                    f"the token at {asset.contract_address} is {symbol} with {decimals} "
                    f"decimals on chain, not {asset.symbol} with {asset.decimals}.",
                )
    except RpcError as exc:
        raise _refuse(chain, f"could not check it on ${chain.rpc_url_env} ({exc}).") from exc
    Chain.objects.filter(pk=chain.pk).update(is_active=True)

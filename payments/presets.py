"""Production networks as data: `manage.py load_networks` writes them (payments/networks.py).

Sources, read when this file was written (re-check them before adding a network):
- Tokens: Circle's "USDC contract addresses" page (developers.circle.com, native USDC only,
  never the bridged USDC.e / USDbC) and Tether's "supported protocols" page (tether.to). USDT
  is Tether's own on Ethereum only: on Arbitrum One and Polygon PoS the token is USDT0, a third
  party's (Polygon's former USDT contract was upgraded to it in 2025, symbol changed), and Base
  has none; left out rather than guessed.
- Feeds: Chainlink's "Price Feed Contract Addresses" list (docs.chain.link/data-feeds), with
  each feed's heartbeat, and "L2 Sequencer Uptime Feeds" for Base and Arbitrum One. A heartbeat
  set shorter than the real one only refuses more often; check Polygon's against the list
  before going live there (the values below were the least certain).
- Finality: the Ethereum JSON-RPC spec (ethereum/execution-apis) defines the block tags `safe`
  and `finalized`; Ethereum finalizes after two epochs (~13 min, ethereum.org "Proof-of-stake"
  page); OP Stack (Base) and Arbitrum Nitro answer `safe` once the L2 block's batch is posted
  on L1 and `finalized` once that L1 block is final (docs.optimism.io "Transaction finality",
  docs.arbitrum.io "Finality"). We take `safe` on the L2s (a reversal then needs an L1 reorg)
  and `finalized` on L1. Polygon PoS answers `finalized` from its milestones (PIP-11,
  deterministic finality). `confirmations` is the count a node without the tag falls back on.
- Explorers: etherscan.io, basescan.org, arbiscan.io, polygonscan.com.
"""

from dataclasses import dataclass, field
from decimal import Decimal


@dataclass(frozen=True)
class FeedPreset:
    pair: str  # "ETH/USD"; the sequencer feed is named "sequencer"
    role: str  # PriceFeed.Role value
    address: str
    heartbeat_seconds: int
    decimals: int = 8


@dataclass(frozen=True)
class TokenPreset:
    symbol: str  # as symbol() answers on chain
    name: str
    address: str
    decimals: int  # as decimals() answers on chain
    price_pair: str
    is_stablecoin: bool = True


@dataclass(frozen=True)
class NetworkPreset:
    key: str  # the name given to `load_networks`, and the suffix of asset ids
    chain_id: int
    name: str
    rpc_url_env: str
    public_rpc_url: str
    block_time_seconds: Decimal
    finality_tag: str
    confirmations: int
    explorer_tx_url: str
    native_symbol: str
    native_name: str
    native_price_pair: str
    tokens: list[TokenPreset] = field(default_factory=list)
    feeds: list[FeedPreset] = field(default_factory=list)

    def asset_slug(self, symbol: str) -> str:
        return f"{symbol.lower()}-{self.key}"


PRICE, FIAT, SEQUENCER = "price", "fiat", "sequencer"
DAY = 86_400

PRESETS: dict[str, NetworkPreset] = {
    preset.key: preset
    for preset in [
        NetworkPreset(
            key="ethereum",
            chain_id=1,
            name="Ethereum",
            rpc_url_env="ETHEREUM_RPC_URL",
            # Every wallet knows mainnet: nothing to hand out.
            public_rpc_url="",
            block_time_seconds=Decimal("12"),
            finality_tag="finalized",
            confirmations=64,  # two epochs of 32 slots
            explorer_tx_url="https://etherscan.io/tx/{tx}",
            native_symbol="ETH",
            native_name="Ether",
            native_price_pair="ETH/USD",
            tokens=[
                TokenPreset(
                    "USDC", "USD Coin", "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48", 6, "USDC/USD"
                ),
                TokenPreset(
                    "USDT",
                    "Tether USD",
                    "0xdac17f958d2ee523a2206206994597c13d831ec7",
                    6,
                    "USDT/USD",
                ),
            ],
            feeds=[
                FeedPreset("ETH/USD", PRICE, "0x5f4ec3df9cbd43714fe2740f5e3616155c5b8419", 3600),
                FeedPreset("USDC/USD", PRICE, "0x8fffffd4afb6115b954bd326cbe7b4ba576818f6", DAY),
                FeedPreset("USDT/USD", PRICE, "0x3e7d1eab13ad0104d2750b8863b489d65364e32d", DAY),
                FeedPreset("EUR/USD", FIAT, "0xb49f677943bc038e9857d61e7d053caa2c1734c1", DAY),
            ],
        ),
        NetworkPreset(
            key="base",
            chain_id=8453,
            name="Base",
            rpc_url_env="BASE_RPC_URL",
            public_rpc_url="https://mainnet.base.org",
            block_time_seconds=Decimal("2"),
            finality_tag="safe",
            confirmations=300,  # ten minutes of 2 s blocks, for a node without the tag
            explorer_tx_url="https://basescan.org/tx/{tx}",
            native_symbol="ETH",
            native_name="Ether",
            native_price_pair="ETH/USD",
            tokens=[
                TokenPreset(
                    "USDC", "USD Coin", "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913", 6, "USDC/USD"
                ),
            ],
            feeds=[
                FeedPreset("ETH/USD", PRICE, "0x71041dddad3595f9ced3dccfbe3d1f4b0a16bb70", 1200),
                FeedPreset("USDC/USD", PRICE, "0x7e860098f58bbfc8648a4311b374b1d669a2bc6b", DAY),
                FeedPreset("EUR/USD", FIAT, "0xc91d87e81fab8f93699ecf7ee9b44d11e1d53f0f", 3600),
                FeedPreset(
                    "sequencer", SEQUENCER, "0xbcf85224fc0756b9fa45aa7892530b47e10b6433", DAY
                ),
            ],
        ),
        NetworkPreset(
            key="arbitrum",
            chain_id=42161,
            name="Arbitrum One",
            rpc_url_env="ARBITRUM_RPC_URL",
            public_rpc_url="https://arb1.arbitrum.io/rpc",
            block_time_seconds=Decimal("0.25"),
            finality_tag="safe",
            confirmations=2400,  # ten minutes of 0.25 s blocks, for a node without the tag
            explorer_tx_url="https://arbiscan.io/tx/{tx}",
            native_symbol="ETH",
            native_name="Ether",
            native_price_pair="ETH/USD",
            tokens=[
                TokenPreset(
                    "USDC", "USD Coin", "0xaf88d065e77c8cc2239327c5edb3a432268e5831", 6, "USDC/USD"
                ),
            ],
            feeds=[
                FeedPreset("ETH/USD", PRICE, "0x639fe6ab55c921f74e7fac1ee960c0b6293ba612", DAY),
                FeedPreset("USDC/USD", PRICE, "0x50834f3163758fcc1df9973b6e91f0f0f0434ad3", DAY),
                FeedPreset("EUR/USD", FIAT, "0xa14d53bc1f1c0f31b4aa3bd109344e5009051a84", 3600),
                FeedPreset(
                    "sequencer", SEQUENCER, "0xfdb631f5ee196f0ed6faa767959853a9f217697d", DAY
                ),
            ],
        ),
        NetworkPreset(
            key="polygon",
            chain_id=137,
            name="Polygon PoS",
            rpc_url_env="POLYGON_RPC_URL",
            public_rpc_url="https://polygon-rpc.com",
            block_time_seconds=Decimal("2"),
            finality_tag="finalized",
            # Before milestones, exchanges waited for 128 blocks and more on Polygon PoS.
            confirmations=256,
            explorer_tx_url="https://polygonscan.com/tx/{tx}",
            native_symbol="POL",
            native_name="Polygon Ecosystem Token",
            native_price_pair="POL/USD",
            tokens=[
                TokenPreset(
                    "USDC", "USD Coin", "0x3c499c542cef5e3811e1192ce70d8cc03d5c3359", 6, "USDC/USD"
                ),
            ],
            feeds=[
                # Chainlink's former MATIC/USD feed, which now prices POL.
                FeedPreset("POL/USD", PRICE, "0xab594600376ec9fd91f8e885dadf0ce036862de0", 27),
                FeedPreset("USDC/USD", PRICE, "0xfe4a8cc5b5b2366c1b58bea3858e81843581b2f7", DAY),
                FeedPreset("EUR/USD", FIAT, "0x73366fe0aa0ded304479862808e02506fe556a98", 27),
            ],
        ),
    ]
}

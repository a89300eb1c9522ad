"""Register the local anvil chain with ETH and a test USDC; safe to run again."""

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from web3 import Web3

from payments.devnet import (
    DEVNET_CHAIN_ID,
    DEVNET_FEEDS,
    USDC_SLUG,
    devnet_register,
    token_deploy,
    web3_for,
)
from payments.models import Asset, PriceFeed, Rate, ScanCursor


class Command(BaseCommand):
    help = (
        "Deploy the test USDC and mock Chainlink price feeds on the local anvil (once) and "
        "register chain 31337."
    )

    def add_arguments(self, parser):
        parser.add_argument("--rpc-url", default=settings.PAYMENTS_DEVNET_RPC_URL)
        parser.add_argument(
            "--confirmations", type=int, default=settings.PAYMENTS_DEVNET_CONFIRMATIONS
        )

    def handle(self, *args, rpc_url, confirmations, **options):
        if confirmations < 1:
            raise CommandError("--confirmations must be at least 1.")
        w3 = web3_for(rpc_url)
        try:
            chain_id = w3.eth.chain_id
        except Exception as exc:  # any connection problem reads the same to the user
            raise CommandError(f"No chain answers at {rpc_url} ({exc}). Is anvil running?") from exc
        if chain_id != DEVNET_CHAIN_ID:
            raise CommandError(
                f"{rpc_url} is chain {chain_id}, not the devnet ({DEVNET_CHAIN_ID})."
            )

        usdc = Asset.objects.filter(slug=USDC_SLUG).first()
        address = usdc.contract_address if usdc else ""
        if address and w3.eth.get_code(Web3.to_checksum_address(address)):
            self.stdout.write(f"Test USDC already deployed at {address}")
        else:
            address = token_deploy(w3)
            self.stdout.write(f"Deployed the test USDC at {address}")

        cursor = ScanCursor.objects.filter(chain__chain_id=DEVNET_CHAIN_ID).first()
        if cursor is not None and not _on_chain(w3, cursor):
            # Anvil was restarted: the old blocks are gone, watch from the new head.
            cursor.delete()
            self.stdout.write("The devnet was restarted: watching from its current head.")
        deployed = {
            feed.pair: feed.address
            for feed in PriceFeed.objects.filter(chain__chain_id=DEVNET_CHAIN_ID)
            if w3.eth.get_code(Web3.to_checksum_address(feed.address))
        }
        feeds: dict[str, str] | None = deployed
        if set(deployed) != set(DEVNET_FEEDS):
            feeds = None
            self.stdout.write("Deploying the mock price feeds (Chainlink's MockV3Aggregator)")
        chain = devnet_register(
            rpc_url=rpc_url, token_address=address, confirmations=confirmations, feeds=feeds
        )
        for asset in chain.assets.all():
            rate = Rate.objects.filter(asset=asset).order_by("-fetched_at").first()
            self.stdout.write(f"{asset.slug}: {asset.rate_refusal or rate}")
        self.stdout.write(
            self.style.SUCCESS(
                f"{chain} ready: ETH and USDC, fresh rates, {chain.confirmations} confirmations."
            )
        )


def _on_chain(w3: Web3, cursor: ScanCursor) -> bool:
    try:
        block = w3.eth.get_block(cursor.block_number)
    except Exception:  # web3 raises BlockNotFound and friends
        return False
    return Web3.to_hex(block["hash"]) == cursor.block_hash

"""pytest plugin: a real anvil chain for the payment tests.

One anvil per test session on a free port, with instant mining (one block per transaction)
so tests decide when blocks appear (`devnet.mine(n)`). The test token and a lookalike (same
contract, same symbol, other address) are deployed once per session.
"""

import itertools
import socket
import subprocess
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pytest
import requests
from web3 import Web3

ROOT = Path(__file__).resolve().parent.parent
ANVIL = ROOT / "node_modules" / ".bin" / "anvil"
# Each test derives its deposit addresses from its own index range: the chain outlives the
# test database, so addresses (and their balances) must not repeat between tests.
_derivation_ranges = itertools.count(10_000, 1_000)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Anvil:
    url: str
    process: subprocess.Popen
    usdc: str = ""
    lookalike: str = ""
    # Sends on the ether it receives in the same call (an internal transaction).
    forwarder: str = ""
    # The devnet's mock Chainlink feeds, pair -> address.
    feeds: dict[str, str] = field(default_factory=dict)

    @property
    def w3(self) -> Web3:
        return Web3(Web3.HTTPProvider(self.url, request_kwargs={"timeout": 10}))

    def rpc(self, method: str, params: list | None = None):
        answer = requests.post(
            self.url, json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params or []}
        ).json()
        if "error" in answer:
            raise RuntimeError(answer["error"])
        return answer["result"]


def anvil_start(
    *,
    block_time: float | None = None,
    chain_id: int | None = None,
    slots_in_an_epoch: int | None = None,
) -> Anvil:
    """`slots_in_an_epoch` small moves the `safe` (head - epoch) and `finalized`
    (head - 2 epochs) tags along with the head."""
    port = free_port()
    command = [str(ANVIL), "--host", "127.0.0.1", "--port", str(port), "--silent"]
    if block_time:
        command += ["--block-time", str(block_time)]
    if chain_id:
        command += ["--chain-id", str(chain_id)]
    if slots_in_an_epoch:
        command += ["--slots-in-an-epoch", str(slots_in_an_epoch)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    node = Anvil(url=f"http://127.0.0.1:{port}", process=process)
    for _ in range(200):
        try:
            node.rpc("eth_chainId")
            return node
        except requests.ConnectionError:
            if process.poll() is not None:
                raise RuntimeError(f"anvil exited: {process.stderr.read().decode()}") from None
            time.sleep(0.05)
    process.kill()
    raise RuntimeError("anvil did not start within 10 s")


def anvil_stop(node: Anvil) -> None:
    node.process.terminate()
    try:
        node.process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        node.process.kill()


def anvil_with_contracts():
    """A new chain with the test token, a lookalike, the forwarder and the mock feeds."""
    from payments.devnet import contract_deploy, devnet_feeds_deploy, token_deploy

    node = anvil_start()
    try:
        w3 = node.w3
        node.usdc = token_deploy(w3)
        node.lookalike = token_deploy(w3)
        node.forwarder = contract_deploy(w3, name="Forwarder")
        node.feeds = devnet_feeds_deploy(w3)
        yield node
    finally:
        anvil_stop(node)


@pytest.fixture(scope="session")
def anvil():
    yield from anvil_with_contracts()


class Devnet:
    """What a payment test does to the chain, in a sentence each."""

    def __init__(self, node: Anvil, chain):
        from payments.models import Asset

        self.node, self.chain, self.w3 = node, chain, node.w3
        self.usdc = Asset.objects.get(chain=chain, kind=Asset.Kind.ERC20)
        self.eth = Asset.objects.get(chain=chain, kind=Asset.Kind.NATIVE)
        # Account 0 deploys and mints; the others pay.
        self.payer = self.w3.eth.accounts[1]

    def mine(self, blocks: int = 1) -> None:
        self.node.rpc("anvil_mine", [hex(blocks)])

    def head(self) -> int:
        return self.w3.eth.block_number

    def block_time(self, number: int | str = "latest") -> datetime:
        return datetime.fromtimestamp(self.w3.eth.get_block(number)["timestamp"], tz=UTC)

    def mine_later(self, seconds: int) -> None:
        """One block `seconds` after the last one: time passes on the chain, not in the test.
        Later blocks of the session keep the offset; keep it to seconds."""
        self.node.rpc("evm_increaseTime", [seconds])
        self.mine()

    def automine(self, enabled: bool) -> None:
        self.node.rpc("evm_setAutomine", [enabled])

    def snapshot(self) -> str:
        return self.node.rpc("evm_snapshot")

    def revert(self, snapshot_id: str) -> None:
        assert self.node.rpc("evm_revert", [snapshot_id])

    def mint(self, amount: int, *, to: str | None = None, token: str | None = None) -> None:
        from payments.devnet import token_mint

        token_mint(
            self.w3, token_address=token or self.node.usdc, to=to or self.payer, amount=amount
        )

    def pay_token(
        self, to: str, amount: int, *, token: str | None = None, mint=True, **extra
    ) -> str:
        from payments.devnet import token_transfer

        if mint:
            self.mint(amount, token=token)
        token_address = token or self.node.usdc
        return token_transfer(
            self.w3, token_address=token_address, sender=self.payer, to=to, amount=amount, **extra
        )

    def pay_native(self, to: str, amount: int, **extra) -> str:
        from payments.devnet import native_transfer

        return native_transfer(self.w3, sender=self.payer, to=to, amount=amount, **extra)

    def pay_through_contract(self, payouts: dict[str, int]) -> str:
        """ETH to each address, sent by the forwarder contract within one transaction."""
        from payments.devnet import artifact

        forwarder = self.w3.eth.contract(
            address=Web3.to_checksum_address(self.node.forwarder), abi=artifact("Forwarder")["abi"]
        )
        recipients = [Web3.to_checksum_address(address) for address in payouts]
        tx = forwarder.functions.forwardMany(recipients, list(payouts.values())).transact(
            {"from": self.payer, "value": sum(payouts.values())}
        )
        return Web3.to_hex(tx)

    def receipt(self, tx_hash: str):
        return self.w3.eth.wait_for_transaction_receipt(tx_hash, timeout=10)

    def rpc_url_use(self, url: str) -> None:
        """Point the store's chain at `url` (a proxy, or a dead port for an outage)."""
        self.chain.default_rpc_url = url
        self.chain.save(update_fields=["default_rpc_url"])

    def scan(self, **kwargs):
        from payments.watcher.scanner import chain_scan

        return chain_scan(chain=self.chain, **kwargs)


@pytest.fixture
def devnet(db, anvil, settings, celery_eager):
    from payments.devnet import devnet_register

    settings.PAYMENTS_DERIVATION_START = next(_derivation_ranges)
    # Staff refund from the devnet's paying account; a test paying from another one is not
    # the store.
    settings.PAYMENTS_REFUND_WALLETS = (anvil.w3.eth.accounts[1].lower(),)
    chain = devnet_register(
        rpc_url=anvil.url, token_address=anvil.usdc, confirmations=3, feeds=anvil.feeds
    )
    return Devnet(anvil, chain)

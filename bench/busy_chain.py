"""Row 3 of `make bench`: what the watcher downloads on a quiet chain and on a busy one.

A busy block holds, besides the store's payments, strangers' transfers: --busy-token token
transfers and --busy-eth ether transfers each (200 and 50 by default, like a block of USDC
on Base). They are sent in one JSON-RPC batch per block, then mined. The
same range is also downloaded the old way (every Transfer log of the token, every block in
full) for the ratio the issue asks for.
"""

import random
from dataclasses import dataclass

from bench.payments_bench import CatchUpResult, catch_up

TRANSFER_SELECTOR = "0xa9059cbb"  # transfer(address,uint256)


def _stranger() -> str:
    return "0x" + random.randbytes(20).hex()


def _token_transfer_data(to: str, amount: int) -> str:
    return TRANSFER_SELECTOR + to[2:].rjust(64, "0") + hex(amount)[2:].rjust(64, "0")


def strangers_blocks(node, *, token: str, blocks: int, token_transfers: int, eth_transfers: int):
    """`blocks` blocks, each with this many transfers between strangers."""
    import requests

    from payments.devnet import token_mint

    w3 = node.w3
    sender = w3.eth.accounts[3]
    token_mint(w3, token_address=token, to=sender, amount=10**18)
    # anvil mines every second here (automine off): the batch waits in the pool for evm_mine.
    # Nonces given, not left to the node: a batch of sends would reuse one.
    nonce = int(node.rpc("eth_getTransactionCount", [sender, "pending"]), 16)
    for _ in range(blocks):
        calls = [
            {
                "from": sender,
                "to": token,
                "gas": hex(80_000),
                "data": _token_transfer_data(_stranger(), 1),
            }
            for _ in range(token_transfers)
        ] + [
            {"from": sender, "to": _stranger(), "gas": hex(21_000), "value": "0x1"}
            for _ in range(eth_transfers)
        ]
        batch = [
            {
                "jsonrpc": "2.0",
                "id": n,
                "method": "eth_sendTransaction",
                "params": [{**call, "nonce": hex(nonce + n)}],
            }
            for n, call in enumerate(calls)
        ]
        nonce += len(calls)
        answers = requests.post(node.url, json=batch, timeout=60).json()
        errors = [a["error"] for a in answers if "error" in a]
        if errors:
            raise RuntimeError(f"the background sender was refused: {errors[0]}")
        node.rpc("evm_mine")


@dataclass
class Everything:
    """The old way: every Transfer log of the token and every block in full."""

    blocks: int
    bytes_received: int
    calls: int

    @property
    def bytes_per_1000_blocks(self) -> float:
        return self.bytes_received * 1000 / self.blocks


def download_everything(node, *, token: str, start: int, end: int) -> Everything:
    from payments.watcher.rpc import TRANSFER_TOPIC, RpcClient

    client = RpcClient(node.url)
    for low in range(start, end + 1, 500):
        client.request(
            "eth_getLogs",
            [
                {
                    "fromBlock": hex(low),
                    "toBlock": hex(min(low + 499, end)),
                    "address": [token],
                    "topics": [TRANSFER_TOPIC],
                }
            ],
        )
    client.blocks(list(range(start, end + 1)), full=True)
    return Everything(
        blocks=end - start + 1,
        bytes_received=client.bytes_received,
        calls=sum(client.calls.values()),
    )


def watcher_runs(node, *, chain, blocks: int, invoice_counts: list[int], busy: tuple[int, int]):
    """The catch-up over quiet and busy blocks, with each number of open invoices; and the
    old way over the last busy run's blocks."""
    from payments.models import Asset

    token = Asset.objects.get(chain=chain, kind="erc20").contract_address
    token_transfers, eth_transfers = busy

    def busy_blocks(count: int) -> None:
        strangers_blocks(
            node,
            token=token,
            blocks=count,
            token_transfers=token_transfers,
            eth_transfers=eth_transfers,
        )

    runs: dict[tuple[str, int], CatchUpResult] = {}
    for traffic in ("quiet", "busy"):
        for open_invoices in invoice_counts:
            runs[(traffic, open_invoices)] = catch_up(
                node,
                chain=chain,
                blocks=blocks,
                open_invoices=open_invoices,
                traffic=busy_blocks if traffic == "busy" else None,
                timeout=600,
            )
    last = runs[("busy", invoice_counts[-1])]
    everything = download_everything(
        node, token=token, start=last.start_block + 1, end=last.start_block + last.blocks
    )
    return runs, everything

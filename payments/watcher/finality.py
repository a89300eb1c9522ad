"""When a block is final: one rule for crediting transfers and for proving refunds.

A chain that names its final blocks by tag (`safe`, `finalized`) is asked for that tag; any
other chain counts confirmations. Either way the block must still be the canonical one.
"""

from payments.models import Chain
from payments.watcher.rpc import RpcClient


def final_height(*, chain: Chain, client: RpcClient, head: int | None = None) -> int:
    """The highest block number the chain's rule calls final (-1: none yet). `head` spares a
    call when the caller has just asked for it."""
    if chain.finality_tag:
        tagged = client.tagged_block_number(chain.finality_tag)
        return -1 if tagged is None else tagged
    if head is None:
        head = client.block_number()
    return head - max(chain.confirmations, 1) + 1


def block_is_final(*, chain: Chain, client: RpcClient, block_number: int, block_hash: str) -> bool:
    if block_number > final_height(chain=chain, client=client):
        return False
    return client.block_hashes([block_number]).get(block_number) == block_hash

"""What one block range holds for the store: its cost follows the store's invoices.

Token transfers: eth_getLogs filtered on the node by the `to` topic, for the deposit addresses
watched at the range's time only (one call per PAYMENTS_LOG_RECIPIENTS_PER_CALL addresses),
never every Transfer of the token. Ether: the balances of the ETH invoices' addresses at the
range's two ends, asked by block hash; only a balance that changed is bisected to its blocks
(payments.watcher.internal_transfers.balance_changes), and only those blocks are fetched in full. No
ETH invoice watched: no balance and no full block at all.

Consistency without every header: the end block's hash is read first and read again last,
with the cursor's block. A block's hash commits to its whole ancestry, so both unchanged mean
every answer in between came from one chain that extends the cursor; anything else is
ChainMoved and the range is read again.
"""

from dataclasses import dataclass
from datetime import UTC, datetime

from payments.models import NATIVE_LOG_INDEX, Asset, Chain, Invoice, ScanCursor
from payments.watcher.internal_transfers import balance_changes
from payments.watcher.rpc import Block, Log, RpcClient, decode_transfer_log
from payments.watcher.settlement import ObservedTransfer


class ChainMoved(Exception):
    """The chain changed between two calls of one scan step: the step is retried later."""


@dataclass
class RangeRead:
    observed: list[ObservedTransfer]
    # The blocks read in the range (the end, those fetched in full or for their time), by
    # number: the last one is the range's end.
    blocks: list[Block]


def block_time(block: Block) -> datetime:
    return datetime.fromtimestamp(block.timestamp, tz=UTC)


def observed_transfer(
    where: Block | Log, tx_hash, log_index, from_address, to_address, asset, amount
) -> ObservedTransfer:
    """The transfer, placed by its block, or by its log when the log names its block's time."""
    if isinstance(where, Log):
        if where.block_timestamp is None:
            raise ValueError("a log that does not name its block's time is placed by its block")
        number, block_hash, timestamp = where.block_number, where.block_hash, where.block_timestamp
    else:
        number, block_hash, timestamp = where.number, where.hash, where.timestamp
    return ObservedTransfer(
        tx_hash=tx_hash,
        log_index=log_index,
        block_number=number,
        block_hash=block_hash,
        block_time=datetime.fromtimestamp(timestamp, tz=UTC),
        from_address=from_address,
        to_address=to_address,
        asset=asset,
        amount=amount,
    )


def watched_addresses(*, chain: Chain, since: datetime) -> dict[str, int]:
    """Deposit address -> invoice asset id, for invoices of `chain` watched at `since`: open,
    paid or expired, until their monitor_until (one query on the status/monitor_until index)."""
    rows = Invoice.objects.filter(asset__chain=chain, monitor_until__gt=since).values_list(
        "deposit_address", "asset_id"
    )
    return dict(rows)


def range_read(
    *,
    chain: Chain,
    client: RpcClient,
    cursor: ScanCursor,
    assets: list[Asset],
    watched: dict[str, int],
    start: int,
    end: int,
) -> RangeRead:
    tokens = {a.contract_address: a for a in assets if a.kind == Asset.Kind.ERC20}
    native = next((a for a in assets if a.kind == Asset.Kind.NATIVE), None)
    (end_block,) = client.blocks([end])
    if start == end and end_block.parent_hash != cursor.block_hash:
        raise ChainMoved(f"block {end} does not follow the scanned chain")
    recipients = sorted(watched)
    # No token or no address: no query at all (an empty list would mean every contract).
    logs = (
        client.transfer_logs(
            from_block=start, to_block=end, tokens=sorted(tokens), recipients=recipients
        )
        if tokens and recipients
        else []
    )
    logs = [log for log in logs if not log.removed and log.address in tokens]
    eth_addresses = sorted(a for a, asset_id in watched.items() if native and asset_id == native.pk)
    changed = (
        _balance_changed_blocks(
            client=client, cursor=cursor, end_block=end_block, addresses=eth_addresses
        )
        if native is not None and eth_addresses
        else {}
    )
    # A header is the size of its list of transactions: on a busy chain, asked for only when
    # the log does not name its block's time.
    untimed = {log.block_number for log in logs if log.block_timestamp is None}
    headers = client.blocks(sorted(untimed - {end}))
    full = client.blocks(sorted(changed), full=True)
    by_number = {b.number: b for b in [*headers, end_block]}
    by_number.update({b.number: b for b in full})
    observed: list[ObservedTransfer] = []
    for log in logs:
        block = by_number.get(log.block_number)
        if block is not None and block.hash != log.block_hash:
            raise ChainMoved(f"block {log.block_number} changed during the scan")
        decoded = decode_transfer_log(log)
        if decoded is not None:
            from_address, to_address, amount = decoded
            observed.append(
                observed_transfer(
                    block or log,
                    log.transaction_hash,
                    log.log_index,
                    from_address,
                    to_address,
                    tokens[log.address],
                    amount,
                )
            )
    if native is not None and full:
        observed += native_transfers(client=client, blocks=full, native=native, addresses=changed)
    _still_the_same_chain(client=client, cursor=cursor, end_block=end_block)
    return RangeRead(observed=observed, blocks=sorted(by_number.values(), key=lambda b: b.number))


def _balance_changed_blocks(
    *, client: RpcClient, cursor: ScanCursor, end_block: Block, addresses: list[str]
) -> dict[int, set[str]]:
    """Block number -> the watched ETH addresses whose balance changed in that block."""
    # By hash: the very states the cursor's and the end's blocks left, even mid-reorg.
    ends = client.balances(
        [(a, cursor.block_hash) for a in addresses] + [(a, end_block.hash) for a in addresses]
    )
    before, after = ends[: len(addresses)], ends[len(addresses) :]
    changed: dict[int, set[str]] = {}
    for address, start_balance, end_balance in zip(addresses, before, after, strict=True):
        if start_balance == end_balance:
            continue
        for number in balance_changes(
            client,
            address=address,
            start=cursor.block_number,
            end=end_block.number,
            start_balance=start_balance,
            end_balance=end_balance,
        ):
            changed.setdefault(number, set()).add(address)
    return changed


def native_transfers(
    *, client: RpcClient, blocks: list[Block], native: Asset, addresses: dict[int, set[str]]
) -> list[ObservedTransfer]:
    """Top-level ether transfers to the addresses whose balance changed in each block. Ether
    a contract passed on is not here: the periodic balance check traces it."""
    matched = [
        (block, tx)
        for block in blocks
        for tx in block.transactions
        if not isinstance(tx, str) and tx.to in addresses[block.number] and tx.value > 0
    ]
    if not matched:
        return []
    # A reverted transaction moved no value, even though the block lists it.
    receipts = client.receipts([tx.hash for _block, tx in matched])
    return [
        observed_transfer(
            block, tx.hash, NATIVE_LOG_INDEX, tx.from_address, tx.to, native, tx.value
        )
        for (block, tx), receipt in zip(matched, receipts, strict=True)
        if receipt.succeeded and receipt.block_hash == block.hash
    ]


def _still_the_same_chain(*, client: RpcClient, cursor: ScanCursor, end_block: Block) -> None:
    hashes = client.block_hashes([cursor.block_number, end_block.number])
    if hashes[cursor.block_number] != cursor.block_hash:
        raise ChainMoved(f"block {cursor.block_number} left the chain during the scan")
    if hashes[end_block.number] != end_block.hash:
        raise ChainMoved(f"block {end_block.number} changed during the scan")

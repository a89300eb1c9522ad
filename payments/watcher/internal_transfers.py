"""Ether that contracts send: the balance check that finds it, the traces that credit it.

A contract paying a deposit address (a Safe wallet, an exchange's batched payout) leaves no
top-level transaction naming that address, so the block scan cannot see it. A periodic task
compares each watched address's ether balance with the transfers recorded for it (token
invoices' too: the block scan reads the balances of ETH invoices only, so ether sent to a
token invoice's address, a wrong asset, is found here). A surplus is
located by bisecting the address's balance over the blocks since it was last explained, and
credited from those blocks' call traces like any other transfer (same key, same confirmations,
same reorg handling). What the node cannot trace, or what traces do not explain (a block
reward, a validator withdrawal), is flagged for staff with the amount: never ignored.

This runs apart from the block scan, in batched requests of bounded size (one per 50
addresses). The block scan reuses its bisection (balance_changes) for top-level transfers.
"""

import logging
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from itertools import pairwise

from django.conf import settings
from django.db import transaction
from django.db.models import Q, Sum
from django.utils import timezone
from django.utils.translation import gettext_noop

from orders.models import OrderEvent
from orders.transitions import order_event_record
from payments.locks import order_and_invoices_locked
from payments.models import NATIVE_LOG_INDEX, Asset, Chain, Invoice, ScanCursor, Transfer
from payments.watcher.rpc import Block, CallFrame, RpcClient, RpcError, RpcUnavailable
from payments.watcher.settlement import ObservedTransfer, invoice_settle, transfers_record

logger = logging.getLogger(__name__)
# Calls that move ether to `to`; DELEGATECALL and CALLCODE leave it in the calling contract.
VALUE_FRAMES = {"CALL", "SELFDESTRUCT"}
# Balances asked per bisection round, in one batched request.
PROBES = 16
UNEXPLAINED = gettext_noop("funds received without a visible transaction")


def traced_transfers(
    *, root: CallFrame, tx_hash: str, block: Block, native: Asset
) -> Iterator[ObservedTransfer]:
    """The ether each call of one transaction moved, keyed by the call's place in the trace.

    The top-level call keeps NATIVE_LOG_INDEX, the key the block scan gives it, so a transfer
    seen both ways is stored once; the n-th call below it takes NATIVE_LOG_INDEX - n. A
    reverted call moved nothing, and neither did the calls under it.
    """
    position = -1
    stack = [root]
    while stack:
        frame = stack.pop()
        position += 1
        if frame.error is not None:
            continue
        if frame.type in VALUE_FRAMES and frame.to is not None and frame.value > 0:
            yield ObservedTransfer(
                tx_hash=tx_hash,
                log_index=NATIVE_LOG_INDEX - position,
                block_number=block.number,
                block_hash=block.hash,
                block_time=datetime.fromtimestamp(block.timestamp, tz=UTC),
                from_address=frame.from_address,
                to_address=frame.to,
                asset=native,
                amount=frame.value,
            )
        stack.extend(reversed(frame.calls))


def transaction_internal_transfers(
    *, client: RpcClient, tx_hash: str, block: Block, native: Asset
) -> list[ObservedTransfer]:
    """Ether that contracts passed on inside one transaction (for "I've paid" with its hash).

    None when the node cannot trace: the periodic balance check then flags what arrived.
    """
    try:
        root = client.call_trace(tx_hash)
    except RpcUnavailable:
        raise
    except RpcError as exc:
        logger.info("no trace of %s: %s", tx_hash, exc)
        return []
    return [
        observed
        for observed in traced_transfers(root=root, tx_hash=tx_hash, block=block, native=native)
        if observed.log_index != NATIVE_LOG_INDEX
    ]


@dataclass
class BalanceReport:
    chain_id: int
    checked: int = 0
    traced_blocks: list[int] = field(default_factory=list)
    invoices: set[int] = field(default_factory=set)
    # Invoice id -> base units no recorded transfer explains (flagged for staff).
    unexplained: dict[int, int] = field(default_factory=dict)
    error: str = ""


def native_balances_check(
    *, chain: Chain, client: RpcClient | None = None, invoice_ids: list[int] | None = None, now=None
) -> BalanceReport:
    """Compare watched ETH addresses' balances with their transfers; credit or flag a surplus."""
    report = BalanceReport(chain_id=chain.chain_id)
    native = Asset.objects.filter(chain=chain, kind=Asset.Kind.NATIVE).first()
    cursor = ScanCursor.objects.filter(chain=chain).first()
    if native is None or cursor is None:
        return report
    # Every watched address of the chain, token invoices' too: the block scan reads balances of
    # ETH invoices only, so ether sent to a token invoice's address (wrong asset) is found here.
    invoices = Invoice.objects.filter(asset__chain=chain, monitor_until__gt=now or timezone.now())
    if invoice_ids is not None:
        invoices = invoices.filter(pk__in=invoice_ids)
    watched = list(invoices.order_by("pk"))
    if not watched:
        return report
    try:
        _check(
            chain=chain,
            client=client or RpcClient(chain.rpc_url),
            native=native,
            invoices=watched,
            # The scanned block, not the head: every top-level transfer up to it is recorded,
            # so a surplus there is not one the scan has yet to reach.
            at=cursor.block_number,
            report=report,
        )
    except RpcError as exc:
        report.error = str(exc)[:500]
        logger.warning("balance check of chain %s stopped: %s", chain.chain_id, exc)
    return report


def _check(
    *,
    chain: Chain,
    client: RpcClient,
    native: Asset,
    invoices: list[Invoice],
    at: int,
    report: BalanceReport,
) -> None:
    report.checked = len(invoices)
    balances = dict(
        zip(
            (i.deposit_address for i in invoices),
            client.balances([(i.deposit_address, at) for i in invoices]),
            strict=True,
        )
    )
    recorded = _recorded(native=native, addresses=balances, at=at)
    surplus = [i for i in invoices if balances[i.deposit_address] > recorded[i.deposit_address]]
    _explained_mark(chain=chain, invoices=[i for i in invoices if i not in surplus], at=at)
    if not surplus:
        return

    observed: list[ObservedTransfer] = []
    try:
        blocks = _unexplained_blocks(
            client=client, native=native, invoices=surplus, balances=balances, at=at
        )
        addresses = {i.deposit_address for i in surplus}
        for block in client.blocks(sorted(blocks)):
            report.traced_blocks.append(block.number)
            for trace in client.block_call_traces(block.hash):
                observed += (
                    item
                    for item in traced_transfers(
                        root=trace.result, tx_hash=trace.tx_hash, block=block, native=native
                    )
                    if item.to_address in addresses
                )
    except RpcUnavailable:
        raise
    except RpcError as exc:
        # No trace method, or no historical state: what was not found is flagged below.
        logger.warning("chain %s: cannot locate ether sent by contracts: %s", chain.chain_id, exc)
    with transaction.atomic():
        touched = transfers_record(chain=chain, observed=observed)
        for invoice_id in sorted(touched):
            invoice_settle(invoice_id=invoice_id)
    report.invoices |= touched

    recorded = _recorded(native=native, addresses=addresses, at=at)
    explained = []
    for invoice in surplus:
        left = balances[invoice.deposit_address] - recorded[invoice.deposit_address]
        if left > 0:
            report.unexplained[invoice.pk] = left
            _unexplained_flag(invoice=invoice, asset=native, amount=left, block=at)
        else:
            explained.append(invoice)
    _explained_mark(chain=chain, invoices=explained, at=at)


def _recorded(*, native: Asset, addresses: Iterable[str], at: int) -> dict[str, int]:
    """Ether recorded as reaching each address up to block `at`."""
    rows = (
        Transfer.objects.filter(asset=native, to_address__in=list(addresses), block_number__lte=at)
        .exclude(status=Transfer.Status.ORPHANED)
        .values("to_address")
        .annotate(total=Sum("amount"))
    )
    totals: dict[str, int] = defaultdict(int)
    totals.update({row["to_address"]: int(row["total"]) for row in rows})
    return totals


def _unexplained_blocks(
    *, client: RpcClient, native: Asset, invoices: list[Invoice], balances: dict, at: int
) -> set[int]:
    """Blocks where a surplus address's balance grew by more than the transfers recorded there."""
    changes: dict[tuple[str, int], int] = {}
    for invoice in invoices:
        start = invoice.balance_explained_block
        if start is None:  # invoices issued before this check existed
            start = max(at - settings.PAYMENTS_REORG_HISTORY_BLOCKS, 0)
        address = invoice.deposit_address
        for number, change in balance_changes(
            client, address=address, start=min(start, at), end=at, end_balance=balances[address]
        ).items():
            changes[(address, number)] = change
    rows = (
        Transfer.objects.filter(
            asset=native,
            to_address__in={address for address, _number in changes},
            block_number__in={number for _address, number in changes},
        )
        .exclude(status=Transfer.Status.ORPHANED)
        .values("to_address", "block_number")
        .annotate(total=Sum("amount"))
    )
    known = {(row["to_address"], row["block_number"]): row["total"] for row in rows}
    return {
        number
        for (address, number), change in changes.items()
        if change > known.get((address, number), Decimal(0))
    }


def balance_changes(
    client: RpcClient,
    *,
    address: str,
    start: int,
    end: int,
    end_balance: int,
    start_balance: int | None = None,
) -> dict[int, int]:
    """Blocks in (start, end] where the balance of `address` changed, with the change.

    Each round asks up to PROBES balances in one batched request, so a day of blocks takes a
    few rounds (a scan range, one or two); the block scan uses it too. A part whose two ends
    hold the same balance is skipped: deposit addresses only receive while watched, and
    anything such a skip could hide stays unexplained and flagged.
    """
    if start_balance is None:
        (start_balance,) = client.balances([(address, start)])
    changes: dict[int, int] = {}
    parts = [(start, start_balance, end, end_balance)]
    while parts:
        low, low_balance, high, high_balance = parts.pop()
        if low_balance == high_balance:
            continue
        if high - low == 1:
            changes[high] = high_balance - low_balance
            continue
        step = -(-(high - low) // PROBES)
        probes = list(range(low + step, high, step))
        probed = client.balances([(address, number) for number in probes])
        edges = [(low, low_balance), *zip(probes, probed, strict=True), (high, high_balance)]
        parts += [(*low_edge, *high_edge) for low_edge, high_edge in pairwise(edges)]
    return changes


def _explained_mark(*, chain: Chain, invoices: list[Invoice], at: int) -> None:
    """The next search starts here: deep enough that a reorg cannot undo what it explained."""
    mark = max(at - max(chain.confirmations, 1), 0)
    Invoice.objects.filter(pk__in=[i.pk for i in invoices]).filter(
        Q(balance_explained_block__isnull=True) | Q(balance_explained_block__lt=mark)
    ).update(balance_explained_block=mark)


def _unexplained_flag(*, invoice: Invoice, asset: Asset, amount: int, block: int) -> None:
    """Flag `review` with the amount; one timeline event per amount, not one per check."""
    # Also makes concurrent checks add one event.
    with order_and_invoices_locked(invoice.order_id) as (order, _invoices):
        Invoice.objects.filter(pk=invoice.pk, review=False).update(review=True)
        reported = OrderEvent.objects.filter(
            order=order,
            kind=OrderEvent.Kind.PAYMENT_FLAGGED,
            reason=UNEXPLAINED,
            data__invoice=invoice.pk,
            data__amount=str(amount),
        )
        if reported.exists():
            return
        order_event_record(
            order=order,
            kind=OrderEvent.Kind.PAYMENT_FLAGGED,
            actor=OrderEvent.Actor.SYSTEM,
            reason=UNEXPLAINED,
            data={
                "flag": "review",
                "invoice": invoice.pk,
                "asset": asset.slug,
                "amount": str(amount),
                "block": block,
            },
        )

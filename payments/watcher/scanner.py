"""The chain watcher: scan blocks from the cursor, record transfers, follow confirmations.

What a range holds is read by payments.watcher.range_reading; this module moves the cursor, walks
back on reorganisations and confirms transfers by the chain's finality rule.

One scan at a time per chain (an advisory lock), RPC calls first and writes after (no RPC
while a row is locked), and a cursor that only moves in the same transaction as the
transfers of the blocks it passes.
"""

import logging
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.core.cache import cache
from django.db import connection, transaction
from django.utils import timezone

from payments.locks import orders_and_invoices_locked
from payments.models import Asset, Chain, ScanCursor, ScannedBlock, Transfer
from payments.watcher.finality import final_height
from payments.watcher.range_reading import ChainMoved, block_time, range_read, watched_addresses
from payments.watcher.rpc import InvalidAnswer, RangeTooLarge, RpcClient, RpcError, RpcUnavailable
from payments.watcher.settlement import (
    invoice_settle,
    transfer_confirm,
    transfer_orphan,
    transfers_record,
)

logger = logging.getLogger(__name__)
# Advisory lock keys: this namespace in the high 32 bits, the chain's pk in the low ones.
LOCK_NAMESPACE = 0x5041_5953  # "PAYS"


class CursorMoved(Exception):
    """Another scan moved the cursor first: this one's writes are rolled back."""


@dataclass
class ScanReport:
    chain_id: int
    skipped: bool = False
    head: int | None = None
    scanned_from: int | None = None
    scanned_to: int | None = None
    transfers: int = 0
    reorg_to: int | None = None
    error: str = ""
    invoices: set[int] = field(default_factory=set)

    @property
    def blocks(self) -> int:
        if self.scanned_from is None or self.scanned_to is None:
            return 0
        return self.scanned_to - self.scanned_from + 1


def client_for(chain: Chain) -> RpcClient:
    return RpcClient(chain.rpc_url)


@contextmanager
def chain_scan_lock(chain: Chain) -> Iterator[bool]:
    """True if this process now holds the chain's scan lock; never waits."""
    if connection.vendor == "postgresql":
        key = (LOCK_NAMESPACE << 32) | chain.pk
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_lock(%s)", [key])
            acquired = cursor.fetchone()[0]
        try:
            yield acquired
        finally:
            if acquired:
                with connection.cursor() as cursor:
                    cursor.execute("SELECT pg_advisory_unlock(%s)", [key])
        return
    # SQLite (make run): the cache is the lock; the conditional cursor update still guards.
    cache_key = f"payments:scan-lock:{chain.pk}"
    acquired = cache.add(cache_key, 1, timeout=int(settings.PAYMENTS_SCAN_TIME_BUDGET_SECONDS) + 60)
    try:
        yield acquired
    finally:
        if acquired:
            cache.delete(cache_key)


def cursor_for(*, chain: Chain, client: RpcClient) -> ScanCursor:
    """The chain's cursor; a chain never scanned starts at the current head."""
    cursor = ScanCursor.objects.filter(chain=chain).first()
    if cursor is not None:
        return cursor
    number = client.block_number()
    head = client.block(number)
    if head is None:  # a node behind a balancer may not have the head its peer named
        raise InvalidAnswer(f"eth_getBlockByNumber: block {number} is missing")
    cursor, _created = ScanCursor.objects.get_or_create(
        chain=chain,
        defaults={
            "block_number": head.number,
            "block_hash": head.hash,
            "block_time": block_time(head),
            "block_range": settings.PAYMENTS_MAX_BLOCK_RANGE,
        },
    )
    return cursor


def chain_scan(*, chain: Chain, client: RpcClient | None = None) -> ScanReport:
    """Scan `chain` from its cursor toward the head within the time budget, then settle."""
    report = ScanReport(chain_id=chain.chain_id)
    with chain_scan_lock(chain) as acquired:
        if not acquired:
            report.skipped = True
            return report
        client = client or client_for(chain)
        try:
            _scan(chain=chain, client=client, report=report)
        except RpcError as exc:
            report.error = str(exc)[:500]
            logger.warning("scan of chain %s stopped: %s", chain.chain_id, exc)
        outcome: dict[str, str | datetime] = {"last_error": report.error}
        if not report.error:
            outcome["scanned_at"] = timezone.now()
        ScanCursor.objects.filter(chain=chain).update(**outcome)
    return report


def _scan(*, chain: Chain, client: RpcClient, report: ScanReport) -> None:
    deadline = time.monotonic() + settings.PAYMENTS_SCAN_TIME_BUDGET_SECONDS
    cursor = cursor_for(chain=chain, client=client)
    head = client.block_number()
    report.head = head
    ScanCursor.objects.filter(pk=cursor.pk).update(head_block=head)
    assets = list(Asset.objects.filter(chain=chain))
    _reorg_check(chain=chain, cursor=cursor, client=client, report=report)
    # The largest range known to be refused in this scan: growing back stops below it.
    ceiling = settings.PAYMENTS_MAX_BLOCK_RANGE
    while cursor.block_number < head and time.monotonic() < deadline:
        start = cursor.block_number + 1
        end = min(head, cursor.block_number + max(min(cursor.block_range, ceiling), 1))
        try:
            _scan_range(
                chain=chain,
                cursor=cursor,
                client=client,
                assets=assets,
                start=start,
                end=end,
                next_range=min(cursor.block_range * 2, ceiling),
            )
        except RangeTooLarge:
            if end == start:
                raise
            ceiling = cursor.block_range = max(1, (end - start + 1) // 2)
            ScanCursor.objects.filter(pk=cursor.pk).update(block_range=cursor.block_range)
            continue
        except (ChainMoved, CursorMoved):
            cursor.refresh_from_db()
            _reorg_check(chain=chain, cursor=cursor, client=client, report=report)
            continue
        report.scanned_from = report.scanned_from or start
        report.scanned_to = end
    _confirmations_update(chain=chain, client=client, head=head, report=report)


def _scan_range(
    *,
    chain: Chain,
    cursor: ScanCursor,
    client: RpcClient,
    assets: list[Asset],
    start: int,
    end: int,
    next_range: int,
) -> None:
    # The addresses watched at the range's time; after a reorg the cursor's time is unknown,
    # and the whole watch period is a safe superset.
    since = cursor.block_time or timezone.now() - settings.PAYMENTS_MONITOR_PERIOD
    read = range_read(
        chain=chain,
        client=client,
        cursor=cursor,
        assets=assets,
        watched=watched_addresses(chain=chain, since=since),
        start=start,
        end=end,
    )
    last = read.blocks[-1]
    with transaction.atomic():
        moved = ScanCursor.objects.filter(
            pk=cursor.pk, block_number=cursor.block_number, block_hash=cursor.block_hash
        ).update(
            block_number=last.number,
            block_hash=last.hash,
            block_time=block_time(last),
            block_range=next_range,
        )
        if not moved:
            raise CursorMoved
        # The blocks read, not every block: a reorg walks back to the deepest of them that is
        # still canonical, and rescans from there.
        ScannedBlock.objects.filter(chain=chain, number__gte=start).delete()
        ScannedBlock.objects.bulk_create(
            ScannedBlock(chain=chain, number=b.number, hash=b.hash) for b in read.blocks
        )
        ScannedBlock.objects.filter(
            chain=chain, number__lt=last.number - settings.PAYMENTS_REORG_HISTORY_BLOCKS
        ).delete()
        for invoice_id in sorted(transfers_record(chain=chain, observed=read.observed)):
            invoice_settle(invoice_id=invoice_id)
    cursor.block_number, cursor.block_hash = last.number, last.hash
    cursor.block_time = block_time(last)
    cursor.block_range = next_range


def _reorg_check(*, chain: Chain, cursor: ScanCursor, client: RpcClient, report: ScanReport):
    """If the cursor's block left the canonical chain, walk back to the common ancestor."""
    current = client.block_hashes([cursor.block_number])[cursor.block_number]
    if current is None:
        # A node behind its peers knows nothing of that block yet: not a reorganisation.
        raise RpcUnavailable(f"the node does not know block {cursor.block_number} yet")
    if current == cursor.block_hash:
        return
    history = list(
        ScannedBlock.objects.filter(chain=chain, number__lt=cursor.block_number)
        .order_by("-number")
        .values_list("number", "hash")
    )
    ancestor = None
    for start in range(0, len(history), 50):
        part = history[start : start + 50]
        canonical = client.block_hashes([number for number, _hash in part])
        ancestor = next(((n, h) for n, h in part if canonical[n] == h), None)
        if ancestor is not None:
            break
    if ancestor is None:
        # Deeper than the history kept: restart below it and let the rescan sort it out.
        number = max(0, cursor.block_number - settings.PAYMENTS_REORG_HISTORY_BLOCKS)
        # A restarted devnet can even be shorter than that.
        number = min(number, client.block_number())
        restart_hash = client.block_hashes([number])[number]
        if restart_hash is None:
            raise RpcUnavailable(f"the node does not know block {number} yet")
        ancestor = (number, restart_hash)
        logger.error("chain %s: reorg deeper than the kept history", chain.chain_id)
    number, block_hash = ancestor
    suspects = list(
        Transfer.objects.filter(chain=chain, block_number__gt=number)
        .exclude(status=Transfer.Status.ORPHANED)
        .select_related("asset", "invoice")
    )
    canonical = client.block_hashes(sorted({t.block_number for t in suspects}))
    with transaction.atomic():
        if not ScanCursor.objects.filter(
            pk=cursor.pk, block_number=cursor.block_number, block_hash=cursor.block_hash
        ).update(block_number=number, block_hash=block_hash, block_time=None):
            raise CursorMoved
        ScannedBlock.objects.filter(chain=chain, number__gt=number).delete()
        touched: set[int] = set()
        # After the cursor, as a scan range takes them: the orders, then their invoices.
        order_ids = {t.invoice.order_id for t in suspects if t.invoice is not None}
        with orders_and_invoices_locked(order_ids):
            for transfer in suspects:
                # A block the node does not return (None) is unknown, not replaced: the rescan
                # from the ancestor finds the transfer again if it is still there.
                replaced = canonical[transfer.block_number] not in (None, transfer.block_hash)
                if replaced and transfer_orphan(transfer=transfer) and transfer.invoice_id:
                    touched.add(transfer.invoice_id)
            for invoice_id in sorted(touched):
                invoice_settle(invoice_id=invoice_id)
    logger.warning("chain %s: reorg, cursor back to %s", chain.chain_id, number)
    cursor.block_number, cursor.block_hash = number, block_hash
    report.reorg_to = number
    report.invoices |= touched


def _confirmations_update(*, chain: Chain, client: RpcClient, head: int, report: ScanReport):
    """Seen transfers final by the chain's rule (payments.watcher.finality), and still in the
    canonical chain, become confirmed."""
    deepest = final_height(chain=chain, client=client, head=head)
    pending = list(
        Transfer.objects.filter(chain=chain, status=Transfer.Status.SEEN, block_number__lte=deepest)
        .select_related("asset", "invoice")
        .order_by("block_number", "log_index")
    )
    if not pending:
        return
    canonical = client.block_hashes(sorted({t.block_number for t in pending}))
    by_invoice: dict[int | None, list[Transfer]] = defaultdict(list)
    for transfer in pending:
        by_invoice[transfer.invoice_id].append(transfer)
    for invoice_id, transfers in by_invoice.items():
        # The order and its invoices before the transfers' events and the settlement.
        invoice = transfers[0].invoice  # selected with the transfer
        order_ids = [invoice.order_id] if invoice is not None else []
        with orders_and_invoices_locked(order_ids):
            for transfer in transfers:
                block_hash = canonical[transfer.block_number]
                if block_hash is None:
                    continue  # the node did not answer for that block: ask again next scan
                if block_hash == transfer.block_hash:
                    transfer_confirm(transfer=transfer)
                else:
                    transfer_orphan(transfer=transfer)
            if invoice_id:
                invoice_settle(invoice_id=invoice_id)
                report.invoices.add(invoice_id)

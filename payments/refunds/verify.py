"""The chain's verdict on a refund transaction staff pasted.

It proves the refund when it succeeded, moved at least the amount owed of the refund's asset
from one of the store's refund wallets (PAYMENTS_REFUND_WALLETS) to the refund's pinned
address on the refund's network, was mined after the refund was owed, and is final there:
a customer paying themselves, or an older transfer of the store's, proves nothing.
RPC calls first, without locks; the verdict is written after
(payments.refunds.services.refund_verdict_record).
"""

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from payments.refunds.models import Refund, RefundStatus
from payments.refunds.services import refund_verdict_record
from payments.watcher.finality import block_is_final
from payments.watcher.rpc import Receipt, RpcClient, RpcError, Transaction, decode_transfer_log
from payments.watcher.scanner import client_for
from rental.celery import task_named

logger = logging.getLogger(__name__)
# A transaction just broadcast may take a moment to reach the node we ask: "not found" is a
# verdict only after this long.
NOT_FOUND_GRACE = timedelta(minutes=2)


@dataclass
class Moved:
    from_store: int = 0
    from_others: int = 0
    other_asset: bool = False

    def add(self, *, amount: int, from_store: bool) -> None:
        if from_store:
            self.from_store += amount
        else:
            self.from_others += amount


@dataclass(frozen=True)
class Verdict:
    rejection: str  # empty: the transaction proves the refund
    amount_sent: int = 0
    block_number: int | None = None


def _moved(*, refund: Refund, receipt: Receipt, tx: Transaction | None) -> Moved:
    """What the transaction moved to the refund's address: of the refund's asset from the
    store's wallets, of that asset from anyone else, and of anything else."""
    wallets = set(settings.PAYMENTS_REFUND_WALLETS)
    moved = Moved()
    for log in receipt.logs:
        decoded = decode_transfer_log(log)
        if decoded is None or log.removed or decoded[1] != refund.address:
            continue
        if not refund.asset.is_native and log.address == refund.asset.contract_address:
            moved.add(amount=decoded[2], from_store=decoded[0] in wallets)
        else:
            moved.other_asset = True
    if tx is not None and tx.to == refund.address and tx.value > 0:
        if refund.asset.is_native:
            moved.add(amount=tx.value, from_store=tx.from_address in wallets)
        else:
            moved.other_asset = True
    return moved


def refund_chain_check(*, refund: Refund, client: RpcClient, now: datetime) -> Verdict | None:
    """What the chain says of the refund's transaction; None while it cannot tell yet (not
    mined, or not final)."""
    receipt = client.receipt(refund.tx_hash)
    tx = client.transaction(refund.tx_hash)
    if receipt is None:
        sent_at = refund.sent_at or now  # a refund checked here was sent
        if tx is None and now - sent_at >= NOT_FOUND_GRACE:
            return Verdict("not_found")
        return None
    block = receipt.block_number
    if not receipt.succeeded:
        return Verdict("reverted", block_number=block)
    moved = _moved(refund=refund, receipt=receipt, tx=tx)
    if not moved.from_store:
        if moved.from_others:
            return Verdict("wrong_sender", block_number=block)
        return Verdict("wrong_asset" if moved.other_asset else "wrong_address", block_number=block)
    if moved.from_store < refund.amount:
        return Verdict("amount_too_small", amount_sent=moved.from_store, block_number=block)
    if refund.owed_block is not None and block <= refund.owed_block:
        return Verdict("too_early", block_number=block)
    final = block_is_final(
        chain=refund.chain, client=client, block_number=block, block_hash=receipt.block_hash
    )
    return Verdict("", amount_sent=moved.from_store, block_number=block) if final else None


def refund_verify(*, refund_id: int, now: datetime | None = None) -> str:
    """Check a sent refund's transaction; returns the outcome (`checking` until final)."""
    refund = (
        Refund.objects.select_related("asset", "chain")
        .filter(pk=refund_id, status=RefundStatus.SENT)
        .first()
    )
    if refund is None:
        return "done"  # checked already (a second delivery of the task), or a new hash
    try:
        verdict = refund_chain_check(
            refund=refund, client=client_for(refund.chain), now=now or timezone.now()
        )
    except RpcError as exc:
        # The beat asks again (refunds_verify_pending).
        logger.warning("refund %s: chain check failed: %s", refund.pk, exc)
        return "checking"
    if verdict is None:
        return "checking"
    refund_verdict_record(
        refund=refund,
        tx_hash=refund.tx_hash,
        rejection=verdict.rejection,
        amount_sent=verdict.amount_sent,
        block_number=verdict.block_number,
    )
    return verdict.rejection or "confirmed"


def refunds_verify_pending() -> int:
    """Queue a check of each refund still being checked (beat). Returns how many."""
    refund_ids = list(Refund.objects.filter(status=RefundStatus.SENT).values_list("pk", flat=True))
    for refund_id in refund_ids:
        task_named("payments.tasks.refund_verify_task").delay(refund_id)
    return len(refund_ids)

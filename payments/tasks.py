"""Celery entry points of the watcher: thin, and safe to run twice.

They run on the `chain` queue (CELERY_TASK_ROUTES), which nothing else shares. No scan
expires: instead of dropping late scans, at most one scan per chain waits in the queue.
"""

from celery import shared_task
from django.conf import settings
from django.core.cache import cache

from payments.models import Chain
from payments.rates import rates_refresh
from payments.refunds.verify import refund_verify, refunds_verify_pending
from payments.watcher.internal_transfers import native_balances_check
from payments.watcher.invoice_check import invoice_check
from payments.watcher.rpc import RpcUnavailable
from payments.watcher.scanner import chain_scan


def _scan_queued_key(chain_id: int) -> str:
    return f"payments:scan-queued:{chain_id}"


def scan_queued_ttl() -> int:
    """How long a "scan queued" marker may outlive a lost message (broker restarted):
    after that, the next beat queues a scan again."""
    budget = settings.PAYMENTS_SCAN_TIME_BUDGET_SECONDS
    return int(budget + 4 * settings.PAYMENTS_SCAN_INTERVAL_SECONDS)


@shared_task(acks_late=True, ignore_result=True)
def chains_scan_task() -> int:
    """Beat: a scan for each active chain that has none waiting already. Returns how many
    were queued."""
    queued = 0
    for chain_id in Chain.objects.filter(is_active=True).values_list("pk", flat=True):
        # add() is atomic: two beats (or a beat and a slow worker) cannot both queue one.
        if cache.add(_scan_queued_key(chain_id), 1, timeout=scan_queued_ttl()):
            chain_scan_task.delay(chain_id)
            queued += 1
    return queued


@shared_task(acks_late=True, ignore_result=True)
def chain_scan_task(chain_id: int) -> dict | None:
    # Taken off the queue: the next beat may queue the following scan, which then waits at
    # most for this one (or skips on the chain's advisory lock if this one still runs).
    cache.delete(_scan_queued_key(chain_id))
    chain = Chain.objects.filter(pk=chain_id, is_active=True).first()
    if chain is None:
        return None
    report = chain_scan(chain=chain)
    return {"skipped": report.skipped, "to": report.scanned_to, "error": report.error}


@shared_task(acks_late=True, ignore_result=True)
def native_balances_check_task(
    chain_id: int | None = None, invoice_ids: list[int] | None = None
) -> None:
    """Beat: ether sent by contracts on every active chain; or one invoice after "I've paid"."""
    chains = Chain.objects.filter(is_active=True).order_by("pk")
    if chain_id is not None:
        chains = chains.filter(pk=chain_id)
    for chain in chains:
        native_balances_check(chain=chain, invoice_ids=invoice_ids)


@shared_task(
    acks_late=True,
    ignore_result=True,
    autoretry_for=(RpcUnavailable,),
    retry_backoff=2,
    max_retries=3,
)
def invoice_check_task(invoice_id: int, tx_hash: str = "") -> dict:
    return invoice_check(invoice_id=invoice_id, tx_hash=tx_hash)


@shared_task(acks_late=True, ignore_result=True)
def rates_refresh_task() -> dict[str, str]:
    return rates_refresh()


@shared_task(acks_late=True, ignore_result=True)
def refund_verify_task(refund_id: int) -> str:
    return refund_verify(refund_id=refund_id)


@shared_task(acks_late=True, ignore_result=True)
def refunds_verify_pending_task() -> int:
    """Beat: check again each refund whose transaction was not final (or the node was down)."""
    return refunds_verify_pending()

"""Celery entry points of the watcher: thin, and safe to run twice."""

from celery import shared_task
from django.conf import settings

from payments.models import Chain
from payments.rpc import RpcUnavailable


@shared_task(acks_late=True, ignore_result=True)
def chains_scan_task() -> None:
    """Beat: one scan task per active chain (each takes its chain's lock)."""
    for chain_id in Chain.objects.filter(is_active=True).values_list("pk", flat=True):
        chain_scan_task.apply_async(
            (chain_id,), expires=settings.PAYMENTS_SCAN_INTERVAL_SECONDS * 2
        )


@shared_task(acks_late=True, ignore_result=True)
def chain_scan_task(chain_id: int) -> dict | None:
    from payments.scanner import chain_scan

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
    from payments.internal_transfers import native_balances_check

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
    from payments.scanner import invoice_check

    return invoice_check(invoice_id=invoice_id, tx_hash=tx_hash)


@shared_task(acks_late=True, ignore_result=True)
def devnet_rates_refresh_task() -> int:
    from payments.services import devnet_rates_refresh

    return devnet_rates_refresh()

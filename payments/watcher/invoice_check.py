"""The immediate check behind "I've paid": the transaction the customer named, then the
balance of the invoice's address."""

from django.db import transaction

from payments.models import NATIVE_LOG_INDEX, Asset, Chain, Invoice, Transfer
from payments.watcher.internal_transfers import transaction_internal_transfers
from payments.watcher.range_reading import observed_transfer
from payments.watcher.rpc import RpcClient, decode_transfer_log
from payments.watcher.scanner import client_for
from payments.watcher.settlement import ObservedTransfer, invoice_settle, transfers_record
from rental.celery import task_named


def invoice_check(*, invoice_id: int, tx_hash: str = "") -> dict:
    """The immediate check behind "I've paid": the given transaction, then the balance.

    A transfer found in the receipt is recorded at once (the scan will find it recorded);
    a balance above what we know of means transfers the scan has not reached: scan now.
    """
    invoice = Invoice.objects.select_related("asset__chain", "order").get(pk=invoice_id)
    chain = invoice.asset.chain
    client = client_for(chain)
    observed = _receipt_transfers(client=client, chain=chain, tx_hash=tx_hash) if tx_hash else []
    asset = invoice.asset
    if asset.is_native:
        balance = client.balance(invoice.deposit_address)
    else:
        balance = client.token_balance(token=asset.contract_address, owner=invoice.deposit_address)
    with transaction.atomic():
        touched = transfers_record(chain=chain, observed=observed)
        for touched_id in sorted(touched):
            invoice_settle(invoice_id=touched_id)
    known = sum(
        t.amount
        for t in Transfer.objects.filter(invoice=invoice, asset=asset).exclude(status="orphaned")
    )
    behind = balance > known
    if behind:
        scan = task_named("payments.tasks.chain_scan_task").si(chain.pk)
        # After the scan, ether sent by a contract is what the balance still does not explain.
        if asset.is_native:
            scan |= task_named("payments.tasks.native_balances_check_task").si(
                chain.pk, [invoice.pk]
            )
        scan.delay()
    return {"recorded": len(observed), "balance": str(balance), "scan_queued": behind}


def _receipt_transfers(*, client: RpcClient, chain: Chain, tx_hash: str) -> list[ObservedTransfer]:
    receipt = client.receipt(tx_hash)
    if receipt is None or not receipt.succeeded:
        return []
    block = client.block(receipt.block_number, full=True)
    if block is None or block.hash != receipt.block_hash:
        return []
    assets = list(Asset.objects.filter(chain=chain))
    tokens = {a.contract_address: a for a in assets if a.kind == Asset.Kind.ERC20}
    native = next((a for a in assets if a.kind == Asset.Kind.NATIVE), None)
    observed = []
    for log in receipt.logs:
        decoded = decode_transfer_log(log)
        if decoded and log.address in tokens and not log.removed:
            observed.append(
                observed_transfer(
                    block, tx_hash, log.log_index, *decoded[:2], tokens[log.address], decoded[2]
                )
            )
    tx = next((t for t in block.transactions if not isinstance(t, str) and t.hash == tx_hash), None)
    if native is not None and tx is not None and tx.to and tx.value > 0:
        observed.append(
            observed_transfer(
                block, tx_hash, NATIVE_LOG_INDEX, tx.from_address, tx.to, native, tx.value
            )
        )
    if native is not None:
        # Ether a contract passed on inside the transaction names no address at the top.
        observed += transaction_internal_transfers(
            client=client, tx_hash=tx_hash, block=block, native=native
        )
    return observed

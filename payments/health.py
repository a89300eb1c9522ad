"""The chain entry of /healthz: each active chain's head and how far the watcher lags."""

from payments.models import Chain, ScanCursor
from payments.rpc import RpcClient, RpcError

# A watcher further behind than this many blocks is unhealthy.
MAX_LAG_BLOCKS = 50


def chains_health() -> dict:
    chains = {}
    for chain in Chain.objects.filter(is_active=True):
        cursor = ScanCursor.objects.filter(chain=chain).first()
        entry: dict = {"chain_id": chain.chain_id, "cursor": cursor and cursor.block_number}
        try:
            entry["head"] = RpcClient(chain.rpc_url, timeout=3, retries=0).block_number()
        except RpcError as exc:
            entry.update(ok=False, error=str(exc)[:200])
        else:
            entry["lag"] = entry["head"] - cursor.block_number if cursor else None
            entry["ok"] = cursor is not None and entry["lag"] <= MAX_LAG_BLOCKS
        chains[chain.name] = entry
    return {"ok": all(entry["ok"] for entry in chains.values()), "chains": chains}

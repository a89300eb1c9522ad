"""The chain entry of /healthz/ready: each active chain's watcher, from what it last stored.

No RPC call: a health check polled every few seconds must not multiply the store's RPC
traffic, nor hang on a slow node. The watcher records when it last scanned without error.
"""

from django.conf import settings
from django.utils import timezone

from payments.models import Chain


def chains_health() -> dict:
    now = timezone.now()
    max_age = settings.PAYMENTS_CURSOR_MAX_AGE.total_seconds()
    chains = {}
    for chain in Chain.objects.filter(is_active=True).select_related("cursor"):
        cursor = getattr(chain, "cursor", None)
        if cursor is None:
            chains[chain.name] = {"chain_id": chain.chain_id, "ok": False, "cursor": None}
            continue
        age = (now - cursor.scanned_at).total_seconds()
        head = cursor.head_block
        chains[chain.name] = {
            "chain_id": chain.chain_id,
            "ok": age <= max_age,
            "cursor": cursor.block_number,
            "head": head,
            "lag": head - cursor.block_number if head is not None else None,
            "age_seconds": round(age, 1),
            "last_error": cursor.last_error,
        }
    return {"ok": all(entry["ok"] for entry in chains.values()), "chains": chains}

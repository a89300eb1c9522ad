"""The chain entry of /healthz/ready: every configured chain registered, and each active
chain's watcher, from what it last stored.

No RPC call: a health check polled every few seconds must not multiply the store's RPC
traffic, nor hang on a slow node. The watcher records when it last scanned without error.
"""

import os

from django.conf import settings
from django.utils import timezone

from payments.models import Chain
from payments.presets import PRESETS


def _configured_chain_ids() -> set[int]:
    """The chains this store is set up to watch: PAYMENTS_READY_CHAIN_IDS (the devnet under
    `make run`) and each preset network whose RPC URL variable is set."""
    presets = {preset.chain_id for preset in PRESETS.values() if os.environ.get(preset.rpc_url_env)}
    return set(settings.PAYMENTS_READY_CHAIN_IDS) | presets


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
    # Until `setup_devnet` or `load_networks` registered them, the store cannot take payments.
    registered = Chain.objects.filter(is_active=True).values_list("chain_id", flat=True)
    missing = sorted(_configured_chain_ids() - set(registered))
    healthy = not missing and all(entry["ok"] for entry in chains.values())
    return {"ok": healthy, "chains": chains, "missing_chain_ids": missing}

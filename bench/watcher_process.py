"""`python -m bench.watcher_process`: what a chain worker does, alone in its own process.

Scans the devnet chain (as the beat's task does, chain_scan) until the cursor reaches the
head, then prints its memory as JSON: {"rss_kb", "peak_kb", "scans"}. bench/memory.py runs it
with few and with many open invoices.
"""

import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def main() -> None:
    os.environ["DJANGO_SETTINGS_MODULE"] = "bench.settings"
    import django

    django.setup()
    from bench.memory import proc_status_kb
    from payments.devnet import DEVNET_CHAIN_ID
    from payments.models import Chain, ScanCursor
    from payments.watcher.rpc import RpcClient
    from payments.watcher.scanner import chain_scan

    chain = Chain.objects.get(chain_id=DEVNET_CHAIN_ID)
    client = RpcClient(chain.rpc_url)
    head = client.block_number()
    scans = 0
    while ScanCursor.objects.get(chain=chain).block_number < head:
        report = chain_scan(chain=chain, client=client)
        if report.error:
            raise SystemExit(f"scan failed: {report.error}")
        scans += 1
    pid = os.getpid()
    print(
        json.dumps(
            {
                "rss_kb": proc_status_kb(pid),
                "peak_kb": proc_status_kb(pid, "VmHWM"),
                "scans": scans,
            }
        )
    )


if __name__ == "__main__":
    main()

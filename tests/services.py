"""Fails fast, with the command that fixes it, when PostgreSQL or Redis is not answering.

The suite never falls back to SQLite or an in-memory broker: it proves the real thing or nothing.
"""

import os
import socket
import sys
from urllib.parse import urlparse

SERVICES = {
    "PostgreSQL": (
        os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/rental"),
        "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start",
    ),
    "Redis": (
        os.environ.get("REDIS_URL", "redis://127.0.0.1:6379"),
        'redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" '
        "--appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log",
    ),
}


def unreachable() -> list[str]:
    problems = []
    for name, (url, start_command) in SERVICES.items():
        parsed = urlparse(url)
        try:
            socket.create_connection((parsed.hostname, parsed.port), timeout=2).close()
        except OSError as exc:
            problems.append(
                f"{name} is not answering at {parsed.hostname}:{parsed.port} ({exc}).\n"
                f"  Start it with: {start_command}"
            )
    return problems


if __name__ == "__main__":
    problems = unreachable()
    for problem in problems:
        print(problem, file=sys.stderr)
    sys.exit(1 if problems else 0)

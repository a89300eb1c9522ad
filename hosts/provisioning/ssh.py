"""Running deploy/host/locagpu-host on a host over SSH (asyncssh), as its provisioning account
with the store's key. The script travels with each call, so a host runs the store's version
and needs nothing installed beforehand."""

import asyncio
import json
import shlex
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import asyncssh
from django.conf import settings

from hosts.models import Host

HOST_SCRIPT = Path(settings.BASE_DIR) / "deploy" / "host" / "locagpu-host"
# The script's answer fits in a few lines; anything beyond is not worth keeping in an event.
MAX_REASON = 200
T = TypeVar("T")


class HostUnreachable(Exception):
    """No SSH session: refused, timed out, host key unknown or changed, key refused."""


class HostScriptError(Exception):
    """The script ran and failed, or did not answer with JSON."""


def _reason(text: str) -> str:
    return " ".join(text.split())[:MAX_REASON]


def _text(output: str | bytes | None) -> str:
    return output.decode(errors="replace") if isinstance(output, bytes) else output or ""


async def _run(host: Host, command: str, stdin: str) -> asyncssh.SSHCompletedProcess:
    if not settings.PROVISIONING_KEY_FILE or not settings.PROVISIONING_KNOWN_HOSTS:
        raise HostUnreachable("no provisioning key or known_hosts file configured")
    async with asyncssh.connect(
        host.ssh_host,
        port=host.ssh_port,
        username=host.provisioning_user,
        client_keys=[settings.PROVISIONING_KEY_FILE],
        known_hosts=settings.PROVISIONING_KNOWN_HOSTS,
        agent_path=None,
        connect_timeout=settings.PROVISIONING_CONNECT_TIMEOUT,
    ) as connection:
        return await connection.run(
            command, input=stdin, check=False, timeout=settings.PROVISIONING_CONNECT_TIMEOUT * 6
        )


def _in_own_loop(coroutine: Coroutine[Any, Any, T]) -> T:
    """asyncio.run, also from a thread that already runs an event loop (an ASGI server's,
    Playwright's in the browser tests), where asyncio.run refuses: then in a thread of its own."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with ThreadPoolExecutor(max_workers=1) as thread:
        return thread.submit(asyncio.run, coroutine).result()


def host_script_run(*, host: Host, args: list[str], stdin: str = "") -> dict:
    """Run `locagpu-host ARGS` on `host` and return its JSON answer."""
    command = shlex.join(["sh", "-c", HOST_SCRIPT.read_text(), "locagpu-host", *args])
    try:
        result = _in_own_loop(_run(host, command, stdin))
    except (OSError, asyncssh.Error, TimeoutError, ValueError) as error:
        raise HostUnreachable(_reason(f"{host.ssh_host}:{host.ssh_port}: {error}")) from error
    if result.exit_status != 0:
        raise HostScriptError(_reason(_text(result.stderr) or f"exit {result.exit_status}"))
    try:
        answer = json.loads(_text(result.stdout))
    except ValueError as error:
        raise HostScriptError(_reason(f"not JSON: {_text(result.stdout)}")) from error
    if not isinstance(answer, dict):
        raise HostScriptError("not a JSON object")
    return answer

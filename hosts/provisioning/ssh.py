"""Running deploy/host/locagpu-host on a host over SSH (asyncssh), as its provisioning account
with the store's key. The script travels with each call, so a host runs the store's version
and needs nothing installed beforehand.

Most verbs answer one JSON object (host_script_run). `archive` answers a file, a tar of the
rental's workspace, streamed to the customer as the host sends it (host_script_stream): the
session runs in a thread of its own and hands its chunks through a small queue, so a slow
download slows the host's reading, a closed one ends the session, and nothing is kept here."""

import asyncio
import json
import queue
import shlex
import threading
from collections.abc import Coroutine, Iterator
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
CHUNK_BYTES = 64 * 1024
# Chunks in flight between a streamed session and its response: a few, so memory stays small.
QUEUED_CHUNKS = 8
_END = object()


class HostUnreachable(Exception):
    """No SSH session: refused, timed out, host key unknown or changed, key refused."""


class HostScriptError(Exception):
    """The script ran and failed, or did not answer with JSON."""


# What asyncssh and the network raise when no session (or no answer) comes.
CONNECTION_ERRORS = (OSError, asyncssh.Error, TimeoutError, ValueError)


def _unreachable(host: Host, error: Exception) -> HostUnreachable:
    return HostUnreachable(_reason(f"{host.ssh_host}:{host.ssh_port}: {error}"))


def _reason(text: str) -> str:
    return " ".join(text.split())[:MAX_REASON]


def _text(output: str | bytes | None) -> str:
    return output.decode(errors="replace") if isinstance(output, bytes) else output or ""


def _connect(host: Host):
    if not settings.PROVISIONING_KEY_FILE or not settings.PROVISIONING_KNOWN_HOSTS:
        raise HostUnreachable("no provisioning key or known_hosts file configured")
    return asyncssh.connect(
        host.ssh_host,
        port=host.ssh_port,
        username=host.provisioning_user,
        client_keys=[settings.PROVISIONING_KEY_FILE],
        known_hosts=settings.PROVISIONING_KNOWN_HOSTS,
        agent_path=None,
        connect_timeout=settings.PROVISIONING_CONNECT_TIMEOUT,
    )


def _command(args: list[str]) -> str:
    return shlex.join(["sh", "-c", HOST_SCRIPT.read_text(), "locagpu-host", *args])


def _answer_timeout() -> float:
    return settings.PROVISIONING_CONNECT_TIMEOUT * 6


async def _run(
    host: Host, command: str, stdin: str, timeout: float
) -> asyncssh.SSHCompletedProcess:
    async with _connect(host) as connection:
        return await connection.run(command, input=stdin, check=False, timeout=timeout)


def _in_own_loop(coroutine: Coroutine[Any, Any, T]) -> T:
    """asyncio.run, also from a thread that already runs an event loop (an ASGI server's,
    Playwright's in the browser tests), where asyncio.run refuses: then in a thread of its own."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with ThreadPoolExecutor(max_workers=1) as thread:
        return thread.submit(asyncio.run, coroutine).result()


def host_script_run(
    *, host: Host, args: list[str], stdin: str = "", timeout: float | None = None
) -> dict:
    """Run `locagpu-host ARGS` on `host` and return its JSON answer, awaited `timeout` seconds
    (default: six connection timeouts)."""
    wait = timeout or _answer_timeout()
    try:
        result = _in_own_loop(_run(host, _command(args), stdin, wait))
    except asyncssh.TimeoutError as error:  # reached, the script still running
        raise HostScriptError(f"no answer within {wait:g} s") from error
    except CONNECTION_ERRORS as error:
        raise _unreachable(host, error) from error
    if result.exit_status != 0:
        raise HostScriptError(_reason(_text(result.stderr) or f"exit {result.exit_status}"))
    try:
        answer = json.loads(_text(result.stdout))
    except ValueError as error:
        raise HostScriptError(_reason(f"not JSON: {_text(result.stdout)}")) from error
    if not isinstance(answer, dict):
        raise HostScriptError("not a JSON object")
    return answer


class _Pipe:
    """The session's side puts, the response's side gets; closing stops the session."""

    def __init__(self) -> None:
        self.items: queue.Queue = queue.Queue(maxsize=QUEUED_CHUNKS)
        self.closed = threading.Event()

    def put(self, item: object) -> bool:
        """Blocks while the response is behind; False once it was closed (stop reading)."""
        while not self.closed.is_set():
            try:
                self.items.put(item, timeout=0.5)
            except queue.Full:
                continue
            return True
        return False

    def get(self) -> object:
        try:
            return self.items.get(timeout=_answer_timeout())
        except queue.Empty:
            return HostScriptError("the host stopped sending")


async def _pump(host: Host, args: list[str], pipe: _Pipe) -> None:
    try:
        async with _connect(host) as connection:
            process = await connection.create_process(_command(args), encoding=None)
            process.stdin.write_eof()
            while chunk := await asyncio.wait_for(
                process.stdout.read(CHUNK_BYTES), _answer_timeout()
            ):
                if not await asyncio.to_thread(pipe.put, chunk):
                    process.close()
                    return
            result = await asyncio.wait_for(process.wait(), _answer_timeout())
    except HostUnreachable as error:  # no key configured
        await asyncio.to_thread(pipe.put, error)
        return
    except CONNECTION_ERRORS as error:
        await asyncio.to_thread(pipe.put, _unreachable(host, error))
        return
    if result.exit_status != 0:
        reason = _reason(_text(result.stderr) or f"exit {result.exit_status}")
        await asyncio.to_thread(pipe.put, HostScriptError(reason))
        return
    await asyncio.to_thread(pipe.put, _END)


def host_script_stream(*, host: Host, args: list[str]) -> Iterator[bytes]:
    """`locagpu-host ARGS` on `host`, its output as it comes. The first chunk is awaited
    before this returns: a host that cannot be reached, or a script that fails before writing
    anything, raises HostUnreachable or HostScriptError here, while a page can still say so.
    A failure after that raises from the iterator: the download is cut, never passed off as
    whole."""
    pipe = _Pipe()
    threading.Thread(target=asyncio.run, args=(_pump(host, args, pipe),), daemon=True).start()
    first = pipe.get()
    if isinstance(first, Exception):
        pipe.closed.set()
        raise first
    return _rest(pipe, first)


def _rest(pipe: _Pipe, first: object) -> Iterator[bytes]:
    item = first
    try:
        while item is not _END:
            if isinstance(item, Exception):
                raise item
            assert isinstance(item, bytes)
            yield item
            item = pipe.get()
    finally:
        pipe.closed.set()

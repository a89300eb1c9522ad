"""A real OpenSSH server on 127.0.0.1 playing the GPU host: Debian's sshd on a free port with
its own host key and config, root as the provisioning account with the store's key."""

import os
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from hosts.local import SSHD, SSHD_KEYS_ONLY, local_host_prepare
from tests.anvil import free_port

# This run's rental accounts: several suites may provision on this machine at once, and each
# removes only its own. A process id is unique among the runs alive, so an account under this
# prefix left on the machine is a dead run's (one that had this id), stale.
TEST_ACCOUNT_PREFIX = f"lgt{os.getpid():x}-"
STATE_DIR = Path("/var/lib/locagpu/rentals")
# Where locagpu-host writes each rental's key lines (deploy/host/README.md).
RENTAL_KEYS_DIR = Path("/var/lib/locagpu/keys")


def client_options(key: Path, known_hosts: Path) -> list[str]:
    """How a customer's `ssh` (or scp) logs in here: its key only, the host's key checked,
    never a prompt."""
    return [
        "-i",
        str(key),
        "-o",
        f"UserKnownHostsFile={known_hosts}",
        "-o",
        "StrictHostKeyChecking=yes",
        "-o",
        "BatchMode=yes",
        "-o",
        "IdentitiesOnly=yes",
        "-o",
        "ConnectTimeout=10",
    ]


def process_end(process: subprocess.Popen, *, timeout: float) -> None:
    """SIGTERM, then SIGKILL after `timeout` seconds."""
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@dataclass
class LocalSshHost:
    port: int
    directory: Path
    store_key: Path
    known_hosts: Path
    process: subprocess.Popen

    def login(
        self, *, user: str, key: Path, command: str, options: tuple[str, ...] = ()
    ) -> subprocess.CompletedProcess:
        """`ssh -i KEY -p PORT USER@127.0.0.1 COMMAND`, as the customer types it (with
        `options`, e.g. a forwarding)."""
        return subprocess.run(
            [
                "ssh",
                *options,
                *client_options(key, self.known_hosts),
                "-p",
                str(self.port),
                f"{user}@127.0.0.1",
                command,
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )


def keypair(directory: Path, name: str) -> Path:
    path = directory / name
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(path)], check=True
    )
    return path


def _wait_listening(port: int, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"sshd exited: {process.stderr.read() if process.stderr else ''}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError("sshd did not listen")


def sshd_start(*, environment: dict[str, str] | None = None) -> LocalSshHost:
    """With `environment`: what the host script's sessions get (e.g. LOCAGPU_RUNTIME)."""
    # sshd refuses key files under a world-writable directory such as /tmp (StrictModes).
    directory = Path(tempfile.mkdtemp(prefix="locagpu-sshd-", dir="/run"))
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # privilege separation directory
    host_key = keypair(directory, "host_key")
    store_key = keypair(directory, "store_key")
    root_keys = directory / "root_authorized_keys"
    shutil.copy(store_key.with_suffix(".pub"), root_keys)
    port = free_port()
    config = directory / "sshd_config"
    config.write_text(
        f"""Port {port}
ListenAddress 127.0.0.1
HostKey {host_key}
PidFile {directory / "sshd.pid"}
AuthorizedKeysFile {RENTAL_KEYS_DIR}/%u
{SSHD_KEYS_ONLY}Match User root
    AuthorizedKeysFile {root_keys}
"""
    )
    if environment:
        with config.open("a") as lines:
            # Quoted: a value may hold spaces (LOCAGPU_PIP_OPTIONS).
            pairs = " ".join(f'"{name}={value}"' for name, value in environment.items())
            lines.write(f"    SetEnv {pairs}\n")
    process = subprocess.Popen(
        [SSHD, "-D", "-e", "-f", str(config)], stderr=subprocess.PIPE, text=True
    )
    _wait_listening(port, process)
    known_hosts = directory / "known_hosts"
    public = host_key.with_suffix(".pub").read_text().split()
    known_hosts.write_text(f"[127.0.0.1]:{port} {public[0]} {public[1]}\n")
    return LocalSshHost(port, directory, store_key, known_hosts, process)


def make_run_host_start(*, containers: bool = False) -> LocalSshHost:
    """The GPU host `make run` serves (hosts.local): the same keys, config and
    shared-account mode (or container mode), in a directory of its own; customers log in as
    the running user (or into their containers)."""
    directory = Path(tempfile.mkdtemp(prefix="locagpu-make-run-", dir="/run"))
    port = free_port()
    config = local_host_prepare(directory=directory / "ssh", port=port, containers=containers)
    process = subprocess.Popen(
        [SSHD, "-D", "-e", "-f", str(config)], stderr=subprocess.PIPE, text=True
    )
    _wait_listening(port, process)
    ssh = directory / "ssh"
    return LocalSshHost(port, directory, ssh / "store_key", ssh / "known_hosts", process)


def rental_accounts_remove() -> None:
    """Remove the Unix accounts (and their state and key files) under this run's prefix: those
    its tests created, and any a dead run of the same prefix left. Another run's are left
    alone."""
    for line in Path("/etc/passwd").read_text().splitlines():
        user = line.split(":", 1)[0]
        if user.startswith(TEST_ACCOUNT_PREFIX):
            subprocess.run(["pkill", "-KILL", "-u", user], check=False)
            subprocess.run(["userdel", "--remove", user], capture_output=True, check=False)
    for state in STATE_DIR.glob(f"{TEST_ACCOUNT_PREFIX}*.json"):
        state.unlink()
    for keys in RENTAL_KEYS_DIR.glob(f"{TEST_ACCOUNT_PREFIX}*"):
        keys.unlink()


def sshd_stop(host: LocalSshHost) -> None:
    process_end(host.process, timeout=10)
    shutil.rmtree(host.directory, ignore_errors=True)

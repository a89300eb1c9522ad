"""`make run`'s GPU host (hosts.local) where newcomers clone: under /tmp (sticky, world-writable,
which sshd's StrictModes refuses) it serves its keys all the same; where another user could
replace them it refuses to start, saying why and what to do."""

import getpass
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from hosts.local import SSHD, local_host_prepare
from tests.anvil import free_port


def _folder(parent: Path, name: str, mode: int) -> Path:
    folder = parent / name
    folder.mkdir()
    folder.chmod(mode)
    return folder


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def _logs_in(directory: Path, port: int) -> subprocess.CompletedProcess:
    """The store's key, as provisioning uses it, against the sshd of that config."""
    sshd = subprocess.Popen(
        [SSHD, "-D", "-e", "-f", str(directory / "sshd_config")],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 15
        while not _listening(port):
            assert sshd.poll() is None, sshd.stderr.read()
            assert time.monotonic() < deadline, "sshd did not listen"
            time.sleep(0.05)
        options = [f"UserKnownHostsFile={directory / 'known_hosts'}", "BatchMode=yes"]
        command = ["ssh", "-i", str(directory / "store_key"), "-p", str(port)]
        for option in options:
            command += ["-o", option]
        return subprocess.run(
            [*command, f"{getpass.getuser()}@127.0.0.1", "true"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    finally:
        sshd.terminate()
        sshd.wait(timeout=10)


def test_a_clone_under_a_sticky_world_writable_folder_gets_its_logins(tmp_path):
    shared_tmp = _folder(tmp_path, "tmp", 0o1777)
    clone = _folder(shared_tmp, "x", 0o755)
    port = free_port()

    local_host_prepare(directory=clone / "var" / "ssh", port=port)

    login = _logs_in(clone / "var" / "ssh", port)
    assert login.returncode == 0, login.stderr


def test_a_clone_in_a_private_folder_keeps_sshds_own_checks():
    clone = Path(tempfile.mkdtemp(prefix="locagpu-clone-", dir="/run"))
    try:
        config = local_host_prepare(directory=clone / "var" / "ssh", port=free_port())
        assert "StrictModes" not in config.read_text()
    finally:
        subprocess.run(["rm", "-rf", str(clone)], check=True)


@pytest.mark.parametrize("mode", [0o777, 0o775])
def test_a_clone_others_may_write_to_is_refused_with_the_fix(tmp_path, settings, mode):
    clone = _folder(tmp_path, "x", mode)
    settings.VAR_DIR = clone / "var"
    settings.LOCAL_GPU_HOST_PORT = free_port()

    with pytest.raises(CommandError) as refused:
        call_command("local_gpu_host")

    assert f"other users may write to {clone}" in str(refused.value)
    assert "LOCAGPU_VAR_DIR" in str(refused.value)
    assert not (clone / "var" / "ssh" / "sshd_config").exists()

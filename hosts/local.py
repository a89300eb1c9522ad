"""The GPU host of a development machine (`make run`): an OpenSSH server the running user
starts on 127.0.0.1 (Procfile `sshd`), with its host key, the store's key and its config under
var/ssh, through which the store runs deploy/host/locagpu-host.

Where a Docker daemon answers, its sessions run the script in container mode
(LOCAGPU_RUNTIME=docker), as a real host: each rental is a container of the pytorch image
built offline (deploy/host/images/build-pytorch, cached outside the clone), reached on ports of
its own on 127.0.0.1; the seeded pytorch environment then names that image and the versions
measured inside it. Without one, shared mode (LOCAGPU_ACCOUNTS=shared, development only): each
rental logs in through the running user's account with its own `restrict`ed authorized_keys
lines; run by root, the forced command drops to a Unix account of the rental's own (never
root); run by anyone else, sessions stay that account's."""

import getpass
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

from django.conf import settings
from django.db.models import Q

from catalog.models import Environment
from hosts.models import Host

# Hosts the seed creates point at this made-up domain until a real machine replaces them.
SEEDED_DOMAIN = ".gpu.locagpu.test"
SSHD = "/usr/sbin/sshd"
# What a GPU host's sshd needs (deploy/host/README.md): keys only, and the rental's GPUs
# passed to every session.
SSHD_KEYS_ONLY = """UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin prohibit-password
PermitUserEnvironment CUDA_VISIBLE_DEVICES
DisableForwarding yes
Subsystem sftp /usr/lib/openssh/sftp-server
LogLevel ERROR
"""


# Debian's docker.io client, of its daemon's version (another `docker` may come first on PATH).
DOCKER = "/usr/bin/docker"
IMAGE_BUILD = Path(settings.BASE_DIR) / "deploy" / "host" / "images" / "build-pytorch"
# The rentals' SSH and JupyterLab ports in container mode, on 127.0.0.1.
RENTAL_PORTS = "24000-24999"  # below the ephemeral ports (32768-60999)


def docker_answers() -> bool:
    """Whether a Docker daemon answers this user (DOCKER_HOST, else the default socket)."""
    client = DOCKER if os.path.exists(DOCKER) else shutil.which("docker")
    if client is None:
        return False
    try:
        answer = subprocess.run(
            [client, "version", "--format", "{{.Server.Version}}"],
            capture_output=True,
            timeout=15,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return answer.returncode == 0


def local_image_build() -> dict:
    """The pytorch rental image in the engine (built the first time, minutes: its progress on
    the console) and the versions measured inside it."""
    built = subprocess.run(
        ["sh", str(IMAGE_BUILD)],
        env={**os.environ, "DOCKER": DOCKER},
        stdout=subprocess.PIPE,
        stderr=sys.stderr,
        text=True,
        check=True,
    )
    return json.loads(built.stdout)


def pytorch_environment_localise(image: dict) -> int:
    """The pytorch environment names the local image, pinned by its id, and what is in it:
    the order page shows what the container reports. No CUDA: the CPU build, and no GPU."""
    return Environment.objects.filter(slug="pytorch").update(
        image=f"{image['image'].split(':')[0]}@{image['id']}",
        os_name=image["os"][:40],
        python_version=image["python"],
        pytorch_version=image["pytorch"],
        jupyterlab_version=image["jupyterlab"],
        cuda_version=image["cuda"],
        cudnn_version="",
        cuda_required=None,
    )


def local_host_directory() -> Path:
    return Path(settings.VAR_DIR) / "ssh"


def local_host_fields(*, port: int) -> dict:
    """What makes a Host the local sshd: the store logs in as the running user."""
    return {
        "ssh_host": "127.0.0.1",
        "ssh_port": port,
        "provisioning": Host.Provisioning.SSH,
        "provisioning_user": getpass.getuser(),
    }


def _keypair(path: Path, comment: str) -> Path:
    if not path.exists():
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)],
            check=True,
        )
    return path


class LocalHostRefused(Exception):
    """Another user could replace the local host's keys: it is not started."""


def _strict_modes_accept(directory: Path) -> bool:
    """Whether sshd's StrictModes accepts key files in `directory`: it refuses any folder above
    them, up to the home directory, that a user other than the owner or root may write to,
    even /tmp. A clone under /tmp is safe all the same, as /tmp is sticky: no other user may
    rename or remove the folders the owner made there. False in that case only; raises
    LocalHostRefused where another user could really swap the files."""
    uid, home = os.geteuid(), Path.home().resolve()
    strict = True
    folder = directory.resolve()
    for above in [folder, *folder.parents]:
        info = above.stat()
        if info.st_uid not in (0, uid):
            raise LocalHostRefused(f"{above} belongs to another user (uid {info.st_uid})")
        if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            if above == folder or not info.st_mode & stat.S_ISVTX:
                mode = stat.filemode(info.st_mode)
                raise LocalHostRefused(f"other users may write to {above} ({mode})")
            strict = False
        if above == home:
            break
    return strict


def _script_environment(*, directory: Path, containers: bool) -> list[str]:
    """What the host script's sessions get: shared mode's files, and container mode's engine
    and ports where a Docker daemon answers."""
    shared = [
        "LOCAGPU_ACCOUNTS=shared",
        f"LOCAGPU_STATE_DIR={directory / 'rentals'}",
        f"LOCAGPU_AUTHORIZED_KEYS={directory / 'authorized_keys'}",
        f"LOCAGPU_WORKSPACES={directory.parent / 'workspaces'}",
    ]
    if not containers:
        return shared
    engine = [f"DOCKER_HOST={os.environ['DOCKER_HOST']}"] if "DOCKER_HOST" in os.environ else []
    return [
        *shared,
        "LOCAGPU_RUNTIME=docker",
        f"LOCAGPU_DOCKER={DOCKER}",
        *engine,
        f"LOCAGPU_PORTS={RENTAL_PORTS}",
        "LOCAGPU_GATEWAY_ADDRESS=127.0.0.1",
    ]


def _sshd_config(*, directory: Path, port: int, strict_modes: bool, containers: bool) -> str:
    shared = " ".join(_script_environment(directory=directory, containers=containers))
    strict_modes_line = (
        ""
        if strict_modes
        else "# Under a sticky world-writable folder such as /tmp, which StrictModes refuses:\n"
        "# local_gpu_host checked that no other user can replace these files.\nStrictModes no\n"
    )
    return f"""# Written by `manage.py local_gpu_host` (hosts/local.py).
{strict_modes_line}Port {port}
ListenAddress 127.0.0.1
HostKey {directory / "host_key"}
PidFile {directory / "sshd.pid"}
AuthorizedKeysFile {directory / "authorized_keys"}
AllowUsers {getpass.getuser()}
{SSHD_KEYS_ONLY}SetEnv {shared}
"""


def local_host_prepare(*, directory: Path, port: int, containers: bool = False) -> Path:
    """Write (or keep) the local host's keys and config, in container mode if `containers`;
    returns the sshd_config to start `sshd -D -e -f` with. Run again, it keeps its keys and
    the rentals' lines. Raises LocalHostRefused where another user could replace them."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    strict_modes = _strict_modes_accept(directory)
    if os.geteuid() == 0:
        # Run by root, sshd needs its privilege separation directory (Debian's package path).
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
        # Rentals then run as accounts of their own on this machine: none may read the
        # store's state beside this folder (the SQLite file, the broker's, the chain's).
        directory.parent.chmod(0o700)
    host_key = _keypair(directory / "host_key", "locagpu local host")
    store_key = _keypair(directory / "store_key", "locagpu store")
    authorized = directory / "authorized_keys"
    lines = authorized.read_text().splitlines() if authorized.exists() else []
    store_line = "restrict " + store_key.with_suffix(".pub").read_text().strip()
    if store_line not in lines:
        authorized.write_text("\n".join([store_line, *lines]) + "\n")
    authorized.chmod(0o600)
    key_type, key = host_key.with_suffix(".pub").read_text().split()[:2]
    (directory / "known_hosts").write_text(f"[127.0.0.1]:{port} {key_type} {key}\n")
    config = directory / "sshd_config"
    config.write_text(
        _sshd_config(
            directory=directory, port=port, strict_modes=strict_modes, containers=containers
        )
    )
    return config


def seeded_hosts_localise(*, port: int) -> int:
    """Point the hosts still at their seeded address (or at this machine, on another port
    before) at the local sshd; returns how many."""
    seeded = Q(ssh_host__endswith=SEEDED_DOMAIN)
    local = Q(ssh_host="127.0.0.1", provisioning=Host.Provisioning.SSH)
    return Host.objects.filter(seeded | local).update(**local_host_fields(port=port))

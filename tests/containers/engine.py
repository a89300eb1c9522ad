"""The suite's own Docker Engine: Debian's dockerd with a data root, exec root, socket and pid
file of its own under a directory of this run, no bridge and no iptables (a rental's container
has no network of its own anyway), the `pytorch` rental image loaded into it from the cache
outside the clone (deploy/host/images/build-pytorch builds it there the first time: minutes,
its progress printed), and character devices made for the run standing in for /dev/nvidia*."""

import contextlib
import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from tests.provisioning.sshd import process_end

DOCKERD = "/usr/sbin/dockerd"
# Debian's client, of the daemon's version (/usr/local/bin/docker may be another, newer one).
DOCKER = "/usr/bin/docker"
IMAGE_BUILD = Path(settings.BASE_DIR) / "deploy" / "host" / "images" / "build-pytorch"
# The stand-ins: what the NVIDIA driver makes, major 195 (nvidia-uvm's major is dynamic).
GPU_NODES = 8
# The gateways' ports: a hundred of this run's own (several suites may run on this machine;
# the script skips any port a socket of this machine is bound to).
PORTS_BASE = 20000 + (os.getpid() % 120) * 100  # below the ephemeral ports
DEVICE_NODES = {
    **{f"nvidia{index}": (195, index) for index in range(GPU_NODES)},
    "nvidiactl": (195, 255),
    "nvidia-uvm": (510, 0),
}


@dataclass
class Engine:
    directory: Path
    socket: Path
    process: subprocess.Popen
    devices: Path
    # build-pytorch's answer: the image's reference, id and the versions measured inside it.
    image: dict

    @property
    def env(self) -> dict[str, str]:
        return {"DOCKER_HOST": f"unix://{self.socket}"}

    def docker(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run(
            [DOCKER, *args],
            env={**os.environ, **self.env},
            capture_output=True,
            text=True,
            timeout=120,
            check=check,
        )

    @property
    def state(self) -> Path:
        """The host script's state (LOCAGPU_STATE_DIR) for this engine's rentals."""
        return self.directory / "rentals"

    @property
    def wheels(self) -> Path:
        """The host's package index for requirements files (LOCAGPU_PIP_OPTIONS): a directory
        of wheels the tests build, nothing from the internet."""
        return self.directory / "wheels"

    @property
    def pinned_image(self) -> str:
        """The image as the catalog names it: pinned by its content-addressed id, which the
        host script resolves locally (an image loaded from a tar has no registry digest)."""
        return f"{self.image['image'].split(':')[0]}@{self.image['id']}"


def device_nodes_make(directory: Path) -> Path:
    directory.mkdir(mode=0o755)
    for name, (major, minor) in DEVICE_NODES.items():
        os.mknod(directory / name, 0o666 | 0o020000, os.makedev(major, minor))
    return directory


def _wait_answering(engine_socket: Path, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"dockerd exited: {log.read_text()[-2000:]}")
        answer = subprocess.run(
            [DOCKER, "version", "--format", "{{.Server.Version}}"],
            env={**os.environ, "DOCKER_HOST": f"unix://{engine_socket}"},
            capture_output=True,
            check=False,
        )
        if answer.returncode == 0:
            return
        time.sleep(0.2)
    raise RuntimeError(f"dockerd did not answer: {log.read_text()[-2000:]}")


def image_cached() -> bool:
    """Whether build-pytorch's cache holds the image of its current version (the tar is named
    after the script's hash, as the script names it)."""
    digest = hashlib.sha256(IMAGE_BUILD.read_bytes()).hexdigest()[:16]
    cache = Path(os.environ.get("LOCAGPU_IMAGE_CACHE", "/var/cache/locagpu/images"))
    return (cache / f"{digest}.tar").is_file() and (cache / f"{digest}.json").is_file()


def engine_start() -> Engine:
    directory = Path(tempfile.mkdtemp(prefix="locagpu-engine-", dir="/run"))
    engine_socket = directory / "docker.sock"
    log = directory / "dockerd.log"
    with log.open("w") as output:
        process = subprocess.Popen(
            [
                DOCKERD,
                "--iptables=false",
                "--ip6tables=false",
                "--bridge=none",
                "--data-root",
                str(directory / "data"),
                "--exec-root",
                str(directory / "exec"),
                "--host",
                f"unix://{engine_socket}",
                "--pidfile",
                str(directory / "dockerd.pid"),
            ],
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    _wait_answering(engine_socket, process, log)
    built = subprocess.run(
        ["sh", str(IMAGE_BUILD)],
        env={**os.environ, "DOCKER_HOST": f"unix://{engine_socket}", "DOCKER": DOCKER},
        stdout=subprocess.PIPE,
        stderr=sys.stderr,  # the build's progress, for a first run that takes minutes
        text=True,
        check=True,
    )
    image = json.loads(built.stdout)
    (directory / "wheels").mkdir()
    return Engine(directory, engine_socket, process, device_nodes_make(directory / "dev"), image)


def host_environment(engine: Engine, *, ports: str) -> dict[str, str]:
    """What the host script's sessions get to run rentals in containers on `engine`, eight
    stand-in GPUs, gateways on 127.0.0.1 in `ports` (e.g. "30000-30099")."""
    return {
        "LOCAGPU_RUNTIME": "docker",
        "LOCAGPU_DOCKER": DOCKER,
        "DOCKER_HOST": f"unix://{engine.socket}",
        "LOCAGPU_STATE_DIR": str(engine.state),
        "LOCAGPU_DEVICE_DIR": str(engine.devices),
        "LOCAGPU_GPU_COUNT": str(GPU_NODES),
        # Two cores here: a slot's share of eight "vCPUs" is one, so JupyterLab and torch
        # start in seconds.
        "LOCAGPU_VCPUS": str(GPU_NODES),
        "LOCAGPU_PORTS": ports,
        "LOCAGPU_GATEWAY_ADDRESS": "127.0.0.1",
        # Requirements files: the suite's pip, fetching from the tests' own wheels only.
        "LOCAGPU_PIP": f"{sys.executable} -m pip",
        "LOCAGPU_PIP_OPTIONS": f"--no-index --find-links {engine.wheels}",
    }


def gateways_end(state: Path) -> None:
    """The socat gateways the host script started for the rentals of `state` (LOCAGPU_STATE_DIR),
    each its process group."""
    for pid_file in state.glob("*.d/*.pid"):
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.killpg(int(pid_file.read_text()), signal.SIGTERM)


def engine_stop(engine: Engine) -> None:
    """The containers killed, then dockerd stopped; the run's directory goes with it, removed
    in the background (the unpacked image's files take a minute here: no test waits on it)."""
    gateways_end(engine.state)
    containers = engine.docker("container", "ls", "--all", "--quiet", check=False).stdout.split()
    if containers:
        engine.docker("container", "rm", "--force", *containers, check=False)
    process_end(engine.process, timeout=60)
    subprocess.Popen(
        ["rm", "-rf", str(engine.directory)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def image_prepare() -> None:
    """The image built into its cache when it lacks it (minutes, with the network), on an
    engine of its own: `make test` runs this first, so that no test's time limit counts it."""
    if not image_cached():
        engine_stop(engine_start())

import shutil

import pytest

from hosts.models import Host
from tests.containers.engine import (
    GPU_NODES,
    PORTS_BASE,
    Engine,
    engine_start,
    engine_stop,
    gateways_end,
    host_environment,
)
from tests.factories import GpuModelFactory, HostFactory
from tests.provisioning.sshd import TEST_ACCOUNT_PREFIX, LocalSshHost, sshd_start, sshd_stop


@pytest.fixture(scope="session")
def engine():
    """This run's Docker Engine with the pytorch rental image (tests/containers/engine.py)."""
    started = engine_start()
    try:
        yield started
    finally:
        engine_stop(started)


@pytest.fixture(scope="session")
def container_host(engine: Engine):
    """The GPU host in container mode: an sshd whose root sessions run the host script with
    LOCAGPU_RUNTIME=docker against this run's engine."""
    host = sshd_start(environment=host_environment(engine, ports=f"{PORTS_BASE}-{PORTS_BASE + 99}"))
    try:
        yield host
    finally:
        sshd_stop(host)


def rentals_remove(engine: Engine) -> None:
    """What a test's rentals left: gateways, containers, volumes, state."""
    gateways_end(engine.state)
    containers = engine.docker("container", "ls", "--all", "--quiet").stdout.split()
    if containers:
        engine.docker("container", "rm", "--force", *containers)
    volumes = engine.docker("volume", "ls", "--quiet").stdout.split()
    if volumes:
        engine.docker("volume", "rm", "--force", *volumes)
    shutil.rmtree(engine.state, ignore_errors=True)


@pytest.fixture
def container_gpu(db, settings, engine, container_host: LocalSshHost, pytorch, custom_environment):
    """An H100 model whose only machine is the container host (8 GPUs); the pytorch
    environment is the engine's image, with the versions measured inside it."""
    settings.PROVISIONING_KEY_FILE = str(container_host.store_key)
    settings.PROVISIONING_KNOWN_HOSTS = str(container_host.known_hosts)
    settings.HOST_ACCOUNT_PREFIX = TEST_ACCOUNT_PREFIX
    settings.PROVISIONING_RETRY_SECONDS = 0
    pytorch.image = engine.pinned_image
    pytorch.os_name = engine.image["os"]
    pytorch.python_version = engine.image["python"]
    pytorch.pytorch_version = engine.image["pytorch"]
    pytorch.jupyterlab_version = engine.image["jupyterlab"]
    pytorch.save()
    gpu = GpuModelFactory(slug="h100-sxm", units_total=0)
    HostFactory(
        name="paris-1",
        gpu=gpu,
        gpu_count=GPU_NODES,
        ssh_host="127.0.0.1",
        ssh_port=container_host.port,
        provisioning=Host.Provisioning.SSH,
        provisioning_user="root",
    )
    yield gpu
    rentals_remove(engine)

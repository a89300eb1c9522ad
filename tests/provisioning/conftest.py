import shutil

import pytest

from accounts.services import ssh_key_add
from hosts.models import Host
from tests.factories import GpuModelFactory, HostFactory
from tests.provisioning.sshd import (
    TEST_ACCOUNT_PREFIX,
    keypair,
    rental_accounts_remove,
    sshd_start,
    sshd_stop,
)

if not shutil.which("sshd") and not shutil.which("/usr/sbin/sshd"):
    raise RuntimeError("openssh-server is missing: `make system-packages` installs it")


@pytest.fixture(scope="session")
def local_ssh_host():
    """The GPU host: one sshd for the session; this run's accounts removed before (a dead
    run's of the same prefix) and after."""
    rental_accounts_remove()
    host = sshd_start()
    try:
        yield host
    finally:
        sshd_stop(host)
        rental_accounts_remove()


@pytest.fixture
def store_key(local_ssh_host, settings):
    settings.PROVISIONING_KEY_FILE = str(local_ssh_host.store_key)
    settings.PROVISIONING_KNOWN_HOSTS = str(local_ssh_host.known_hosts)
    settings.HOST_ACCOUNT_PREFIX = TEST_ACCOUNT_PREFIX
    settings.PROVISIONING_RETRY_SECONDS = 0
    yield
    rental_accounts_remove()


@pytest.fixture
def customer_key(local_ssh_host, tmp_path, customer):
    """The customer's key pair, its public half one of the account's SSH keys: the orders
    the customer places carry it."""
    private = keypair(tmp_path, "customer")
    ssh_key_add(user=customer, name="laptop", public_key=private.with_suffix(".pub").read_text())
    return private


@pytest.fixture
def ssh_gpu(db, local_ssh_host, store_key, pytorch, custom_environment):
    """An H100 model whose only machine is the local sshd: 4 GPUs, provisioned over SSH."""
    gpu = GpuModelFactory(slug="h100-sxm", units_total=0)
    HostFactory(
        name="paris-1",
        gpu=gpu,
        gpu_count=4,
        ssh_host="127.0.0.1",
        ssh_port=local_ssh_host.port,
        provisioning=Host.Provisioning.SSH,
        provisioning_user="root",
    )
    return gpu

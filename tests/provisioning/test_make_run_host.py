"""The GPU host of `make run` (hosts.local): the seeded catalog's hosts are its
own sshd, provisioned without staff in shared-account mode; keys attached to a running order
log in within seconds, removed ones are refused, and the end of the term revokes access."""

import getpass
import io
import tarfile
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.core import mail
from django.core.management import call_command

from accounts.services import api_key_create, ssh_key_add
from catalog.models import Environment, GpuModel
from catalog.services import catalog_seed
from hosts.models import Host
from hosts.provisioning import keys
from hosts.provisioning.keys import order_keys_sync
from hosts.provisioning.services import host_account, hosts_grant
from hosts.provisioning.ssh import host_script_stream
from orders.extensions import extension_create
from orders.models import Order, OrderStatus
from orders.services import orders_complete
from tests.api.conftest import key_client
from tests.factories import HostFactory, accepted_terms, order_placed
from tests.payments.helpers import reload
from tests.provisioning.sshd import LocalSshHost, keypair
from tests.provisioning.test_ssh_provisioning import _pay

pytestmark = [pytest.mark.chain, pytest.mark.django_db]

S = OrderStatus


def _public(key: Path) -> str:
    return key.with_suffix(".pub").read_text().strip()


def _logs_in_within(host: LocalSshHost, user: str, key: Path, seconds: float) -> str:
    """What `echo $CUDA_VISIBLE_DEVICES` prints once the key logs in (a generous wait)."""
    deadline = time.monotonic() + seconds
    while True:
        login = host.login(user=user, key=key, command="echo $CUDA_VISIBLE_DEVICES")
        if login.returncode == 0 or time.monotonic() > deadline:
            assert login.returncode == 0, login.stderr
            return login.stdout.strip()
        time.sleep(0.2)


def test_the_seeded_catalog_under_make_run_is_served_by_its_own_sshd(make_run_settings):
    catalog_seed()
    hosts = Host.objects.all()
    assert hosts.count() == GpuModel.objects.count()
    assert {
        (host.provisioning, host.ssh_host, host.ssh_port, host.provisioning_user) for host in hosts
    } == {
        (
            Host.Provisioning.SSH,
            "127.0.0.1",
            make_run_settings.LOCAL_GPU_HOST_PORT,
            getpass.getuser(),
        )
    }


def test_make_run_prepares_its_host_and_points_hosts_seeded_before_at_it(
    make_run_settings, tmp_path
):
    make_run_settings.VAR_DIR = tmp_path
    before = HostFactory(ssh_host="h100-sxm-1.gpu.locagpu.test")
    real = HostFactory(ssh_host="gpu-17.example.net")
    console = io.StringIO()
    call_command("local_gpu_host", stdout=console)
    # No Docker daemon drives this host: the console says once what that means.
    assert console.getvalue().count("DEVELOPMENT SHARED MODE") == 1
    before.refresh_from_db()
    real.refresh_from_db()
    assert (before.provisioning, before.ssh_host, before.ssh_port) == (
        Host.Provisioning.SSH,
        "127.0.0.1",
        make_run_settings.LOCAL_GPU_HOST_PORT,
    )
    assert (real.provisioning, real.ssh_host) == (Host.Provisioning.MANUAL, "gpu-17.example.net")
    config = (tmp_path / "ssh" / "sshd_config").read_text()
    assert "SetEnv LOCAGPU_ACCOUNTS=shared" in config and "ListenAddress 127.0.0.1" in config


def test_a_second_key_attached_to_the_active_order_logs_in_and_is_refused_once_removed(
    devnet, make_run_settings, make_run_host, customer, worker_runs, tmp_path
):
    catalog_seed()
    first, second = keypair(tmp_path, "first"), keypair(tmp_path, "second")
    laptop = ssh_key_add(user=customer, name="laptop", public_key=_public(first))
    order = order_placed(
        customer,
        GpuModel.objects.get(slug="h100-sxm"),
        Environment.objects.get(slug="pytorch"),
        quantity=2,
    )
    with worker_runs():
        _pay(devnet, order)
    _invoice, order = reload(order.invoices.get())
    assert order.status == S.ACTIVE
    assert (order.access_host, order.access_port) == ("127.0.0.1", make_run_host.port)
    assert order.runs_shared  # its page says so (tests/hosts/test_rental_page_parts.py)
    user = getpass.getuser()  # the account running sshd, as on a developer's machine
    slots = ",".join(str(hold.index) for hold in order.slot_holds.order_by("index"))
    assert _logs_in_within(make_run_host, user, first, seconds=10) == slots
    # The access e-mail lists the fingerprint installed.
    active_mail = next(m for m in mail.outbox if "ssh -p" in m.body)
    assert f"ssh -p {make_run_host.port} {order.access_user}@127.0.0.1" in active_mail.body
    assert laptop.fingerprint in active_mail.body

    desktop = ssh_key_add(user=customer, name="desktop", public_key=_public(second))
    api = key_client(api_key_create(user=customer, name="Partner backend")[1])
    url = f"/api/v1/orders/{order.number}/"
    with worker_runs():
        attached = api.patch(url, {"ssh_keys": [laptop.pk, desktop.pk]}, format="json")
    assert attached.status_code == 200, attached.content
    assert sorted(attached.json()["ssh_keys"]) == sorted([laptop.pk, desktop.pk])
    assert _logs_in_within(make_run_host, user, second, seconds=10) == slots

    with worker_runs():
        removed = api.patch(url, {"ssh_keys": [laptop.pk]}, format="json")
    assert removed.status_code == 200, removed.content
    refused = make_run_host.login(user=user, key=second, command="true")
    assert refused.returncode == 255
    assert _logs_in_within(make_run_host, user, first, seconds=10) == slots

    # The end of the term revokes access.
    with worker_runs():
        assert orders_complete(now=order.ends_at + timedelta(seconds=1)) == 1
    assert Order.objects.get(pk=order.pk).access_revoked_at is not None
    assert make_run_host.login(user=user, key=first, command="true").returncode == 255
    # Its files stay downloadable: the host's `archive` streams them.
    host = order.slot_holds.first().host
    files = b"".join(host_script_stream(host=host, args=["archive", host_account(order=order)]))
    with tarfile.open(fileobj=io.BytesIO(files)) as archive:
        assert "." in archive.getnames()


def _rental_paid(devnet, customer, worker_runs, *, key: Path, gpu: str) -> Order:
    """One GPU of the seeded catalog for `customer` with `key`, paid on anvil: active."""
    catalog_seed()
    ssh_key_add(user=customer, name=key.name, public_key=_public(key))
    pytorch = Environment.objects.get(slug="pytorch")
    order = order_placed(customer, GpuModel.objects.get(slug=gpu), pytorch)
    with worker_runs():
        _pay(devnet, order)
    order.refresh_from_db()
    return order


def _expiry(host: LocalSshHost) -> set[str]:
    """The expiry-time of every rental key line on the host."""
    lines = (host.directory / "ssh" / "authorized_keys").read_text().splitlines()
    return {
        line.split('expiry-time="', 1)[1].split('"')[0] for line in lines if "expiry-time=" in line
    }


def test_the_keys_expire_with_the_rental_and_follow_its_extension(
    devnet, make_run_settings, make_run_host, customer, worker_runs, tmp_path
):
    key = keypair(tmp_path, "laptop")
    order = _rental_paid(devnet, customer, worker_runs, key=key, gpu="a100-80gb")
    assert _expiry(make_run_host) >= {order.ends_at.strftime("%Y%m%d%H%M%SZ")}

    extension = extension_create(rental=order, user=customer, term_days=3, terms=accepted_terms())
    with worker_runs():
        _pay(devnet, extension)
    order.refresh_from_db()
    assert order.ends_at.strftime("%Y%m%d%H%M%SZ") in _expiry(make_run_host)
    assert order.events.filter(reason="SSH keys installed on the host").exists()
    assert _logs_in_within(make_run_host, getpass.getuser(), key, seconds=10)


def test_keys_changed_while_the_host_answers_are_installed_before_the_sync_ends(
    devnet, make_run_settings, make_run_host, customer, worker_runs, tmp_path, monkeypatch
):
    first, second = keypair(tmp_path, "first"), keypair(tmp_path, "second")
    order = _rental_paid(devnet, customer, worker_runs, key=first, gpu="rtx-4090")
    late = ssh_key_add(user=customer, name="second", public_key=_public(second))
    granted = []

    def grant_then_a_change_lands(**arguments):
        # Another request attaches a key while this grant is on the wire.
        answers = hosts_grant(**arguments)
        if not granted:
            order.ssh_keys.add(late)
        granted.append(arguments["keys"])
        return answers

    monkeypatch.setattr(keys, "hosts_grant", grant_then_a_change_lands)
    assert order_keys_sync(order=order)
    assert [len(installed) for installed in granted] == [1, 2]
    assert _logs_in_within(make_run_host, getpass.getuser(), second, seconds=10)

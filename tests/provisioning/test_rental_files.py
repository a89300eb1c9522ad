"""After the term, on a real OpenSSH host running deploy/host/locagpu-host
(tests/provisioning/sshd.py): the files stay, their purge date on the order page and in the
end-of-term e-mail, the owner downloads them as a tar streamed from the host until the purge;
staff read each rental's container and volume state in the admin, from what was stored."""

import io
import tarfile
from datetime import timedelta

import pytest
from celery.exceptions import SoftTimeLimitExceeded
from django.core import mail
from django.utils import translation

from hosts.provisioning import services
from hosts.provisioning.keys import order_keys_sync
from hosts.provisioning.services import host_account, order_provision, rentals_purge
from hosts.tasks import order_provision_task
from orders.models import Order, OrderEvent, OrderStatus
from orders.services import orders_complete
from tests.factories import HostFactory, OrderFactory

pytestmark = pytest.mark.django_db

S = OrderStatus


def _active(customer, gpu, environment, worker_runs, *, quantity: int = 1) -> Order:
    order = OrderFactory(
        user=customer, gpu=gpu, environment=environment, quantity=quantity, status=S.PROVISIONING
    )
    order.ssh_keys.set(customer.ssh_keys.all())
    with worker_runs():
        assert order_provision(order=order)
    order.refresh_from_db()
    assert order.status == S.ACTIVE
    return order


def _members(content: bytes) -> dict[str, bytes]:
    with tarfile.open(fileobj=io.BytesIO(content)) as archive:
        return {
            member.name: archive.extractfile(member).read()  # type: ignore[union-attr]
            for member in archive.getmembers()
            if member.isfile()
        }


def test_the_files_of_an_ended_rental_download_as_a_tar_until_the_purge(
    ssh_gpu, customer, outsider, pytorch, customer_key, local_ssh_host, worker_runs, client
):
    order = _active(customer, ssh_gpu, pytorch, worker_runs)
    assert order.access_mode == "unix"
    assert order.host_state == {"paris-1": {"container": "absent", "volume": "present"}}
    wrote = local_ssh_host.login(
        user=order.access_user, key=customer_key, command="echo 'epoch 3' > checkpoint.txt"
    )
    assert wrote.returncode == 0, wrote.stderr
    client.force_login(customer)
    url = f"/fr/account/orders/{order.number}/files.tar"
    assert client.get(url).status_code == 410  # while it runs, the files are on the machine

    with worker_runs():
        assert orders_complete(now=order.ends_at + timedelta(seconds=1)) == 1
    order.refresh_from_db()
    assert order.access_revoked_at is not None
    due = order.data_purge_due
    assert due is not None
    # The end-of-term e-mail (the customer reads French) gives the purge date.
    ended = next(m for m in mail.outbox if order.number in m.subject and "terminée" in m.subject)
    assert "Vos fichiers restent sur la machine jusqu\u2019au" in ended.body
    page = client.get(f"/fr/account/orders/{order.number}/").content.decode()
    assert "Vos fichiers sont conservés jusqu\u2019au" in page
    assert "Télécharger vos fichiers (.tar)" in page

    response = client.get(url)
    assert response.status_code == 200
    assert response["Content-Type"] == "application/x-tar"
    assert f'filename="{order.number}-files.tar"' in response["Content-Disposition"]
    assert _members(b"".join(response.streaming_content))["./checkpoint.txt"] == b"epoch 3\n"

    client.force_login(outsider)
    assert client.get(url).status_code == 404

    assert rentals_purge(now=due) == 1
    order.refresh_from_db()
    assert order.host_state == {"paris-1": {"container": "absent", "volume": "absent"}}
    client.force_login(customer)
    assert "Télécharger vos fichiers" not in client.get(f"/fr/account/orders/{order.number}/")
    gone = client.get(url)
    assert gone.status_code == 410 and "ont été supprimés" in gone.content.decode()


def test_staff_read_the_state_on_the_host_and_the_list_shows_it_without_asking_a_host(
    ssh_gpu, customer, staff, pytorch, customer_key, worker_runs, client, monkeypatch
):
    order = _active(customer, ssh_gpu, pytorch, worker_runs)
    Order.objects.filter(pk=order.pk).update(host_state={})
    client.force_login(staff)
    response = client.post(
        "/admin/orders/order/",
        {"action": "host_state_read", "_selected_action": [order.pk]},
        follow=True,
    )
    assert response.status_code == 200
    order.refresh_from_db()
    assert order.host_state == {"paris-1": {"container": "absent", "volume": "present"}}
    assert order.host_state_read_at is not None

    def no_host_while_rendering(**_arguments):
        raise AssertionError("a page asked a host")

    monkeypatch.setattr(services, "host_script_run", no_host_while_rendering)
    listing = client.get("/admin/orders/order/").content.decode()
    assert "paris-1: absent · present" in listing
    assert "Relire l\u2019état sur l\u2019hôte" in listing
    change = client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert "paris-1: absent · present" in change


CONTAINER_ANSWER = {
    "mode": "container",
    "login": "renter",
    "home": "/workspace",
    "jupyter_scheme": "http",
    "cuda_visible_devices": "0",
    "environment": "pytorch",
    "image": "locagpu/pytorch@sha256:" + "0" * 64,
}


def test_a_container_hosts_grant_answer_gives_each_host_its_port_and_no_event_its_token(
    ssh_gpu, customer, pytorch, customer_key, worker_runs, monkeypatch
):
    """The host side's container mode is its own branch's: here its answer, as the contract
    between the two sides writes it, stands in for it."""
    HostFactory(name="paris-2", gpu=ssh_gpu, gpu_count=2, provisioning="ssh", ssh_host="10.0.0.2")
    ports = {"paris-1": 2201, "paris-2": 2202}
    grants: list[str] = []

    def container_host(*, host, args, stdin="", timeout=None):
        user = args[1]
        assert args[0] == "grant" and "ssh-ed25519" in stdin
        grants.append(host.name)
        return {
            **CONTAINER_ANSWER,
            "user": user,
            "container": f"locagpu-{user}",
            "volume": f"locagpu-{user}-workspace",
            "port": ports[host.name],
            "jupyter_port": ports[host.name] + 6000,
            "jupyter_token": f"secret-{host.name}-{len(grants)}",
        }

    monkeypatch.setattr(services, "host_script_run", container_host)
    order = _active(customer, ssh_gpu, pytorch, worker_runs, quantity=6)
    user = host_account(order=order)
    access = (order.access_host, order.access_port, order.access_user)
    assert access == ("127.0.0.1", 2201, "renter")
    assert (order.access_mode, order.rental_container, order.rental_volume) == (
        "container",
        f"locagpu-{user}",
        f"locagpu-{user}-workspace",
    )
    assert (order.jupyter_scheme, order.jupyter_port, order.jupyter_token) == (
        "http",
        8201,
        "secret-paris-1-1",
    )
    assert "paris-1: ssh -p 2201 renter@127.0.0.1 (GPU 0,1,2,3)" in order.access_notes
    assert "paris-2: ssh -p 2202 renter@10.0.0.2 (GPU 0,1)" in order.access_notes
    assert order.host_state == {
        "paris-1": {"container": "running", "volume": "present"},
        "paris-2": {"container": "running", "volume": "present"},
    }
    granted = order.events.filter(kind=OrderEvent.Kind.PROVISIONING, data__has_key="port")
    assert sorted(event.data["port"] for event in granted) == [2201, 2202]
    assert not any("secret" in str(event.data) for event in order.events.all())

    # The keys installed again (an extension, a key added): what the hosts answer now holds.
    ports["paris-1"] = 2301
    assert order_keys_sync(order=order)
    order.refresh_from_db()
    assert (order.access_port, order.jupyter_port, order.jupyter_token) == (
        2301,
        8301,
        "secret-paris-1-3",
    )
    assert not any("secret" in str(event.data) for event in order.events.all())


def test_a_grant_answer_the_store_cannot_use_is_a_script_error_worth_a_retry(
    ssh_gpu, customer, pytorch, customer_key, monkeypatch
):
    def bad_port(*, host, args, stdin="", timeout=None):
        return {**CONTAINER_ANSWER, "user": args[1], "port": 70000}

    monkeypatch.setattr(services, "host_script_run", bad_port)
    order = OrderFactory(user=customer, gpu=ssh_gpu, environment=pytorch, status=S.PROVISIONING)
    order.ssh_keys.set(customer.ssh_keys.all())
    with pytest.raises(services.ProvisioningError) as raised:
        order_provision(order=order)
    assert raised.value.reason == "script error" and "port" in raised.value.detail
    order.refresh_from_db()
    assert (order.status, order.access_host) == (S.PROVISIONING, "")


def _custom_paid(customer, gpu, custom_environment, details: str) -> Order:
    order: Order = OrderFactory.create(
        user=customer,
        gpu=gpu,
        environment=custom_environment,
        environment_details=details,
        status=S.PROVISIONING,
    )
    order.ssh_keys.set(customer.ssh_keys.all())
    return order


def test_a_requirements_file_goes_to_a_container_host_after_the_keys_with_the_base_image(
    settings, ssh_gpu, customer, pytorch, custom_environment, customer_key, monkeypatch
):
    """The customer's requirements start from the store's pytorch image: the host is given
    that image and the file after the keys, and longer to answer (it installs them)."""
    calls = []

    def container_host(*, host, args, stdin="", timeout=None):
        calls.append((args, stdin, timeout))
        return {**CONTAINER_ANSWER, "user": args[1], "port": 2201, "requirements": "installed"}

    monkeypatch.setattr(services, "host_script_run", container_host)
    # As pip-compile writes it (continued lines, hashes, comments) and a Windows editor saves it.
    digest = "0" * 64
    given = (
        f"# via pip-compile\r\nnumpy==2.3.5 \\\r\n    --hash=sha256:{digest}\r\n"
        "tqdm>=4.66  # bars\r\n"
    )
    order = _custom_paid(customer, ssh_gpu, custom_environment, given)
    assert order_provision(order=order)
    [(args, stdin, timeout)] = calls
    assert args[3] == "custom" and args[-1] == pytorch.image
    key = customer.ssh_keys.get().public_key.strip()
    # The host is given each requirement on a line of its own, nothing else.
    assert stdin == f"{key}\n[requirements]\nnumpy==2.3.5 --hash=sha256:{digest}\ntqdm>=4.66\n"
    assert timeout == settings.PROVISIONING_REQUIREMENTS_TIMEOUT
    order.refresh_from_db()
    # Installed on the host, it still waits for staff to confirm, as any custom environment.
    assert (order.status, order.access_port) == (S.PROVISIONING, 2201)
    granted = order.events.get(kind=OrderEvent.Kind.PROVISIONING, data__has_key="port")
    assert granted.data["requirements"] == "installed"

    # An image of the customer's own goes as the image, with the keys alone.
    calls.clear()
    image = "docker.io/acme/trainer:1.4"
    order = _custom_paid(customer, ssh_gpu, custom_environment, image)
    assert order_provision(order=order)
    [(args, stdin, timeout)] = calls
    assert (args[-1], stdin, timeout) == (image, f"{key}\n", None)


def test_a_container_host_silent_about_the_requirements_is_a_script_error_worth_a_retry(
    ssh_gpu, customer, pytorch, custom_environment, customer_key, monkeypatch
):
    def silent(*, host, args, stdin="", timeout=None):
        return {**CONTAINER_ANSWER, "user": args[1], "port": 2201}

    monkeypatch.setattr(services, "host_script_run", silent)
    order = _custom_paid(customer, ssh_gpu, custom_environment, "locagpu-probe==1.0")
    with pytest.raises(services.ProvisioningError) as raised:
        order_provision(order=order)
    assert raised.value.reason == "script error" and "requirements" in raised.value.detail
    order.refresh_from_db()
    assert (order.status, order.access_host) == (S.PROVISIONING, "")


def test_a_requirements_file_a_stricter_rule_now_refuses_is_flagged_for_staff_not_sent(
    ssh_gpu, customer, pytorch, custom_environment, customer_key, monkeypatch
):
    """An order taken before the rule: its file is never given to a host, staff read why."""
    monkeypatch.setattr(services, "host_script_run", pytest.fail)
    order = _custom_paid(customer, ssh_gpu, custom_environment, "locagpu-probe==1.0")
    Order.objects.filter(pk=order.pk).update(
        environment_details="locagpu-probe==1.0 --no-binary :all:"
    )
    order.refresh_from_db()
    with pytest.raises(services.ProvisioningError) as raised, translation.override("en"):
        order_provision(order=order)
    assert raised.value.reason == "custom environment refused"
    assert "Line 1 is not a requirement pip can fetch" in raised.value.detail


def test_a_grant_past_the_tasks_time_limit_is_a_failed_attempt_retried_then_flagged(
    settings, ssh_gpu, customer, pytorch, custom_environment, customer_key, monkeypatch
):
    """A host installing for longer than the task may run: the attempt ends as a failed one
    (retried, then flagged with the reason), never an order left in provisioning unsaid."""
    settings.PROVISIONING_ATTEMPTS = 2
    order = _custom_paid(customer, ssh_gpu, custom_environment, "locagpu-probe==1.0")

    def too_long(*, host, args, stdin="", timeout=None):
        raise SoftTimeLimitExceeded()

    monkeypatch.setattr(services, "host_script_run", too_long)
    queued = []
    monkeypatch.setattr(
        order_provision_task, "apply_async", lambda args, countdown: queued.append(args)
    )
    assert order_provision_task(order.pk) is False
    assert queued == [(order.pk, 2)]
    assert order_provision_task(order.pk, 2) is False
    order.refresh_from_db()
    assert order.provisioning_problem.startswith("host answered too late")
    assert order.events.get(kind=OrderEvent.Kind.PROVISIONING_FAILED).data["attempts"] == 2

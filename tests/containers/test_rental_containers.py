"""A rental is a container of its own, on the suite's real Docker Engine (tests/containers/
engine.py), provisioned by the store over SSH as on a real host (deploy/host/locagpu-host,
LOCAGPU_RUNTIME=docker): paid on anvil, then the customer's own `ssh` lands in it."""

import base64
import contextlib
import hashlib
import io
import shlex
import socket
import subprocess
import tarfile
import time
import urllib.error
import urllib.request
import zipfile
from datetime import UTC, timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse
from django.utils import timezone

from accounts.services import ssh_key_add
from catalog.models import Environment, GpuModel
from catalog.services import catalog_seed
from hosts.local import (
    docker_answers,
    local_image_build,
    pytorch_environment_localise,
    seeded_hosts_localise,
)
from hosts.provisioning.keys import order_ssh_keys_set
from hosts.provisioning.services import host_account, order_environment_confirm, order_hosts
from hosts.provisioning.ssh import HOST_SCRIPT
from hosts.tasks import rentals_purge_task
from orders.extensions import extension_create
from orders.models import Order, OrderEvent, OrderStatus
from orders.services import order_create, orders_complete
from orders.transitions import order_transition
from payments.services import invoice_issue
from tests.containers.engine import PORTS_BASE, gateways_end
from tests.factories import accepted_terms
from tests.provisioning.sshd import (
    TEST_ACCOUNT_PREFIX,
    client_options,
    keypair,
    make_run_host_start,
    sshd_stop,
)

# The first test also waits for the engine to start and load the image (~1 min here).
pytestmark = [
    pytest.mark.timeout(300),
    pytest.mark.chain,
    pytest.mark.containers,
    pytest.mark.django_db,
    pytest.mark.xdist_group("containers"),
]

S = OrderStatus
CUSTOMER = OrderEvent.Actor.CUSTOMER


def _pay(devnet, *orders: Order) -> None:
    for order in orders:
        invoice = invoice_issue(order=order, asset=devnet.usdc)
        devnet.pay_token(invoice.deposit_address, int(invoice.amount_due))
    devnet.mine(3)
    devnet.scan()


def _order_paid(devnet, worker_runs, **fields) -> Order:
    """An order placed (`fields`: order_create's) and paid on anvil, its provisioning run."""
    order = order_create(terms=accepted_terms(), **fields)
    with worker_runs():
        _pay(devnet, order)
    order.refresh_from_db()
    return order


@pytest.fixture
def rent(devnet, worker_runs, container_gpu, pytorch):
    """`rent(user, quantity)`: a PyTorch rental ordered and paid on anvil, active."""

    def rented(user, quantity: int) -> Order:
        order = _order_paid(
            devnet,
            worker_runs,
            user=user,
            gpu=container_gpu,
            environment=pytorch,
            quantity=quantity,
            term_days=7,
        )
        assert order.status == S.ACTIVE, order.provisioning_problem
        return order

    return rented


def _grant(order: Order) -> dict:
    """The host's last answer to `grant`, as the order's timeline recorded it."""
    events = order.events.filter(kind=OrderEvent.Kind.PROVISIONING, data__has_key="host_key")
    return events.latest("pk").data


def _login(order: Order) -> str:
    return f"{order.access_user}@{order.access_host}"


def _options(order: Order, key: Path) -> list[str]:
    """The customer's key, and the container's host key as the grant reported it."""
    known_hosts = key.with_name(f"known_hosts_{order.access_port}")
    address = f"[{order.access_host}]:{order.access_port}"
    known_hosts.write_text(f"{address} {_grant(order)['host_key']}\n")
    return client_options(key, known_hosts)


def _ssh(
    order: Order, key: Path, command: str, *options: str, stdin: bytes | None = None
) -> subprocess.CompletedProcess:
    """The customer's `ssh -p PORT LOGIN@HOST COMMAND`."""
    argv = ["ssh", *options, *_options(order, key), "-p", str(order.access_port), _login(order)]
    return subprocess.run(
        [*argv, command], input=stdin, capture_output=True, timeout=90, check=False
    )


def _in(order: Order, key: Path, command: str) -> str:
    done = _ssh(order, key, command)
    assert done.returncode == 0, done.stderr
    return done.stdout.decode()


def _key(tmp_path: Path, user, name: str):
    private = keypair(tmp_path, name)
    return private, ssh_key_add(
        user=user, name=name, public_key=private.with_suffix(".pub").read_text()
    )


@contextlib.contextmanager
def _ports_held_by_clients(first: int, count: int):
    """Connections whose own local ports are `first`..: bound, not listening (a busy
    machine's client sockets), which a gateway could not bind either."""
    with contextlib.ExitStack() as stack:
        server = stack.enter_context(socket.create_server(("127.0.0.1", 0), backlog=count))
        for port in range(first, first + count):
            client = stack.enter_context(socket.socket())
            client.bind(("127.0.0.1", port))
            client.connect(server.getsockname())
            stack.enter_context(server.accept()[0])
        yield


def test_two_rentals_on_one_host_each_see_only_their_container(
    rent, pytorch, customer, outsider, tmp_path, client
):
    key_a, _ = _key(tmp_path, customer, "a")
    key_b, _ = _key(tmp_path, outsider, "b")
    # The range's first ports are some client's: the gateways take the next free ones.
    with _ports_held_by_clients(PORTS_BASE, 10):
        a, b = rent(customer, 1), rent(outsider, 2)
    assert a.access_port != b.access_port and a.access_user == host_account(order=a)
    assert min(a.access_port, b.access_port, a.jupyter_port, b.jupyter_port) >= PORTS_BASE + 10

    # Each sees its own slots' device nodes, no other.
    for order, key in ((a, key_a), (b, key_b)):
        indices = order_hosts(order=order)[0][1]
        seen = set(_in(order, key, "ls /dev | grep ^nvidia").split())
        assert seen == {f"nvidia{index}" for index in indices} | {"nvidiactl", "nvidia-uvm"}
        assert _grant(order)["gpus"] == ",".join(map(str, indices))

    # Its own processes and files only; the other's are nowhere in reach.
    _in(a, key_a, "echo a-secret > /workspace/a.txt; nohup sleep 4242 >/dev/null 2>&1 &")
    assert "sleep 4242" in _in(a, key_a, "ps -eo args")
    assert "sleep 4242" not in _in(b, key_b, "ps -eo args")
    assert _in(b, key_b, "ls /workspace; find / -xdev -name a.txt 2>/dev/null; true") == ""
    assert _in(a, key_a, "cat /workspace/a.txt; id -u") == "a-secret\n1000\n"

    # Nor the store's state (keys, database) nor anything the machine serves: no network but
    # the container's own loopback.
    store = [str(settings.VAR_DIR), settings.PROVISIONING_KEY_FILE, str(HOST_SCRIPT.parent)]
    assert _ssh(b, key_b, "ls -d " + shlex.join(store)).stdout == b""
    assert _in(b, key_b, "ls /sys/class/net; tail -n +2 /proc/net/route") == "lo\n"
    postgres = "import socket; socket.create_connection(('127.0.0.1', 5432), 3)"
    assert b"ConnectionRefusedError" in _ssh(b, key_b, f'python -c "{postgres}"').stderr
    # Forwarding reaches the container's own services only; scp lands in the workspace.
    assert _ssh(b, key_b, "", "-W", "127.0.0.1:5432").returncode == 255
    _in(
        b,
        key_b,
        "cd /tmp; python -m http.server 8765 --bind 127.0.0.1 >/dev/null 2>&1 </dev/null &",
    )
    request = b"GET / HTTP/1.0\r\n\r\n"
    for _attempt in range(40):  # until the server listens
        tunnel = _ssh(b, key_b, "", "-W", "127.0.0.1:8765", stdin=request)
        if tunnel.stdout.startswith(b"HTTP/1.0 200"):
            break
    assert tunnel.stdout.startswith(b"HTTP/1.0 200"), tunnel.stderr
    sent = tmp_path / "data.csv"
    sent.write_text("x,y\n")
    scp = ["scp", "-q", *_options(b, key_b), "-P", str(b.access_port)]
    copied = subprocess.run([*scp, str(sent), f"{_login(b)}:/workspace/"], check=False)
    assert copied.returncode == 0
    assert _in(b, key_b, "cat /workspace/data.csv") == "x,y\n"

    # The environment is what the order page says: the page's PyTorch is the container's.
    client.force_login(customer)
    page = client.get(reverse("orders:detail", args=[a.number])).content.decode()
    reported = _in(a, key_a, 'python -c "import torch; print(torch.__version__)"').strip()
    assert reported == pytorch.pytorch_version and reported in page


def _jupyter(port: int, path: str) -> int:
    """The status JupyterLab's gateway answers for `path` (0: no answer), redirects not followed."""

    class Stay(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    try:
        with urllib.request.build_opener(Stay).open(f"http://127.0.0.1:{port}{path}", timeout=10):
            return 200
    except urllib.error.HTTPError as error:
        return error.code
    except OSError:
        return 0


def _host_script(container_host, *args: str, stdin: bytes | None = None, check=True):
    """The host script as the store runs it (root, the store's key), its raw output."""
    done = _host_run(container_host, *args, stdin=stdin)
    if check:
        assert done.returncode == 0, done.stderr
    return done.stdout


def _host_run(container_host, *args: str, stdin: bytes | None = None):
    command = shlex.join(["sh", "-c", HOST_SCRIPT.read_text(), "locagpu-host", *args])
    return subprocess.run(
        [
            "ssh",
            "-i",
            str(container_host.store_key),
            "-p",
            str(container_host.port),
            "-o",
            f"UserKnownHostsFile={container_host.known_hosts}",
            "-o",
            "BatchMode=yes",
            "root@127.0.0.1",
            command,
        ],
        input=stdin,
        capture_output=True,
        timeout=90,
        check=False,
    )


def test_a_container_ends_itself_at_the_term_and_is_never_started_after_it(
    container_host, container_gpu, pytorch, tmp_path
):
    """Should the store's revocation never reach the host, the container stops at the end of
    the term it was granted (its keys' expiry), and a grant after that end starts nothing."""
    key = keypair(tmp_path, "renter").with_suffix(".pub").read_bytes()
    user = f"{TEST_ACCOUNT_PREFIX}end"

    def grant(expires) -> subprocess.CompletedProcess:
        end = expires.astimezone(UTC).strftime("%Y%m%d%H%M%SZ")
        args = ("grant", user, "0", "pytorch", "LG-END", end, pytorch.image)
        return _host_run(container_host, *args, stdin=key)

    def container() -> bytes:
        return _host_script(container_host, "status", user)

    assert grant(timezone.now() + timedelta(seconds=8)).returncode == 0
    assert b'"container": "running"' in container()
    for _ in range(60):
        if b'"container": "exited"' in container():
            break
        time.sleep(0.5)
    assert b'"container": "exited", "volume": "present"' in container()

    late = grant(timezone.now() - timedelta(seconds=1))
    assert late.returncode != 0 and b"ended" in late.stderr
    assert b'"container": "exited"' in container()


def test_keys_jupyter_extension_then_the_end_keeps_the_volume_until_the_purge(
    rent, devnet, container_host, customer, tmp_path, worker_runs, engine
):
    first, _ = _key(tmp_path, customer, "first")
    order = rent(customer, 1)
    user = host_account(order=order)
    _in(order, first, "echo kept > /workspace/notes.txt")
    container_id = engine.docker("inspect", "--format", "{{.Id}}", f"locagpu-{user}").stdout

    # A key added to the order opens it at once; the one removed no longer does.
    second, second_row = _key(tmp_path, customer, "second")
    with worker_runs():
        order_ssh_keys_set(order=order, user=customer, ssh_key_ids=[second_row.pk], actor=CUSTOMER)
    assert _in(order, second, "cat /workspace/notes.txt") == "kept\n"
    assert _ssh(order, first, "true").returncode == 255

    # JupyterLab: its token opens it, nothing else does.
    grant = _grant(order)
    token = (engine.state / f"{user}.d" / "etc" / "jupyter_token").read_text()
    port = grant["jupyter_port"]
    for _attempt in range(120):  # until JupyterLab has started
        if _jupyter(port, f"/lab?token={token}") == 200:
            break
        time.sleep(0.5)
    assert _jupyter(port, f"/lab?token={token}") == 200
    assert _jupyter(port, "/api/contents") == 403
    assert _jupyter(port, "/lab") in (302, 403)

    # An extension keeps the same container, port and files.
    extension = extension_create(rental=order, user=customer, term_days=3, terms=accepted_terms())
    with worker_runs():
        _pay(devnet, extension)
    order.refresh_from_db()
    assert engine.docker("inspect", "--format", "{{.Id}}", f"locagpu-{user}").stdout == container_id
    assert _grant(order)["port"] == order.access_port
    assert _in(order, second, "cat /workspace/notes.txt") == "kept\n"

    # The end of the term: SSH and JupyterLab refused at once, the volume kept and readable.
    with worker_runs():
        assert orders_complete(now=order.ends_at + timedelta(seconds=1)) == 1
    assert _ssh(order, second, "true").returncode == 255
    assert _jupyter(port, f"/lab?token={token}") == 0
    status = _host_script(container_host, "status", user)
    assert b'"container": "exited", "volume": "present"' in status
    with tarfile.open(fileobj=io.BytesIO(_host_script(container_host, "archive", user))) as tar:
        assert tar.extractfile("./notes.txt").read() == b"kept\n"

    # After the retention (counted from the term's end, the date the page shows) the hourly
    # purge removes container and volume.
    Order.objects.filter(pk=order.pk).update(
        ends_at=timezone.now() - timedelta(days=settings.RENTAL_DATA_RETENTION_DAYS, seconds=1)
    )
    assert rentals_purge_task() == 1
    status = _host_script(container_host, "status", user)
    assert b'"container": "absent", "volume": "absent"' in status


def test_make_runs_host_lands_a_customers_ssh_in_a_container_where_docker_answers(
    engine, monkeypatch, settings, customer, tmp_path, worker_runs
):
    monkeypatch.setenv("DOCKER_HOST", engine.env["DOCKER_HOST"])
    assert docker_answers()
    catalog_seed()
    # What `manage.py local_gpu_host` does: the image (loaded already), the catalog's facts.
    assert pytorch_environment_localise(local_image_build()) == 1
    pytorch = Environment.objects.get(slug="pytorch")
    assert pytorch.pytorch_version == engine.image["pytorch"] and pytorch.cuda_required is None
    host = make_run_host_start(containers=True)
    try:
        settings.PROVISIONING_KEY_FILE = str(host.store_key)
        settings.PROVISIONING_KNOWN_HOSTS = str(host.known_hosts)
        settings.HOST_ACCOUNT_PREFIX = TEST_ACCOUNT_PREFIX
        seeded_hosts_localise(port=host.port)
        key, _ = _key(tmp_path, customer, "laptop")
        order = order_create(
            terms=accepted_terms(),
            user=customer,
            gpu=GpuModel.objects.get(slug="h100-sxm"),
            environment=pytorch,
            quantity=1,
            term_days=3,
        )
        with worker_runs():
            order_transition(order=order, to=S.CONFIRMING, actor="system")
            order_transition(order=order, to=S.PAID, actor="system")
        order.refresh_from_db()
        assert order.status == S.ACTIVE, order.provisioning_problem
        assert order.access_port != host.port and _grant(order)["gpus"] == "none"
        inside = _in(order, key, "hostname; test -f /.dockerenv && echo container; ls /dev")
        assert inside.startswith(f"{host_account(order=order)}\ncontainer\n")
        assert "nvidia" not in inside
    finally:
        gateways_end(host.directory / "ssh" / "rentals")
        sshd_stop(host)


def _wheel(
    directory: Path, name: str, version: str, source: str, *, extra: dict[str, str] | None = None
) -> None:
    """A pure-Python wheel of `name` into the host's index (engine.wheels), written as `pip
    wheel` would build it, without a build backend to fetch; `extra`: more files in it."""
    module = name.replace("-", "_")
    info = f"{module}-{version}.dist-info"
    files = {
        **(extra or {}),
        f"{module}/__init__.py": source,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: locagpu-tests\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
    }
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        record.append(f"{path},sha256={digest.decode()},{len(text.encode())}")
    files[f"{info}/RECORD"] = "\n".join([*record, f"{info}/RECORD,,"]) + "\n"
    with zipfile.ZipFile(directory / f"{module}-{version}-py3-none-any.whl", "w") as wheel:
        for path, text in files.items():
            wheel.writestr(path, text)


def _order_custom(devnet, worker_runs, customer, gpu, custom_environment, details: str) -> Order:
    """The custom environment described by `details`, ordered and paid."""
    fields = {"user": customer, "gpu": gpu, "environment": custom_environment}
    return _order_paid(
        devnet, worker_runs, **fields, environment_details=details, quantity=1, term_days=3
    )


def test_a_requirements_file_is_installed_in_the_container_which_still_has_no_network(
    devnet, worker_runs, engine, container_gpu, custom_environment, customer, staff, tmp_path
):
    """The customer's requirements on the store's pytorch image: the host fetches them (here
    from the tests' own index), the container installs them without a network, once."""
    _wheel(engine.wheels, "locagpu-probe", "1.0", "VALUE = 'probed'\n")
    key, key_row = _key(tmp_path, customer, "laptop")
    details = "# what my notebook needs\nlocagpu-probe==1.0\n"
    order = _order_custom(devnet, worker_runs, customer, container_gpu, custom_environment, details)
    assert order.access_host and not order.provisioning_problem, order.provisioning_problem
    granted = _grant(order)
    assert granted["requirements"] == "installed" and granted["image"] == engine.image["id"]

    probe = 'python -c "import locagpu_probe, torch; print(locagpu_probe.VALUE)"'
    assert _in(order, key, probe) == "probed\n"
    assert _in(order, key, "ls /sys/class/net; tail -n +2 /proc/net/route") == "lo\n"
    # The renter cannot change what was installed: the environment is root's.
    assert _ssh(order, key, "touch /opt/venv/lib/x").returncode != 0

    # A grant run again (staff confirmed it, the customer changes keys) installs nothing: the
    # host's index is gone, and the rental goes on.
    with worker_runs():
        assert order_environment_confirm(order=order, actor_user=staff)
    (engine.wheels / "locagpu_probe-1.0-py3-none-any.whl").unlink()
    other, other_row = _key(tmp_path, customer, "desktop")
    with worker_runs():
        order_ssh_keys_set(
            order=order, user=customer, ssh_key_ids=[key_row.pk, other_row.pk], actor=CUSTOMER
        )
    order.refresh_from_db()
    assert order.status == S.ACTIVE and not order.provisioning_problem, order.provisioning_problem
    assert _in(order, other, probe) == "probed\n"


def test_a_requirement_the_host_cannot_fetch_fails_the_grant_with_pips_reason(
    devnet,
    worker_runs,
    engine,
    container_host,
    container_gpu,
    custom_environment,
    customer,
    tmp_path,
):
    _key(tmp_path, customer, "laptop")
    details = "locagpu-absent==1.0\n"
    order = _order_custom(devnet, worker_runs, customer, container_gpu, custom_environment, details)
    assert order.status == S.PROVISIONING and not order.access_host
    # Staff read pip's own words, as for any provisioning problem.
    assert "No matching distribution found for locagpu-absent==1.0" in order.provisioning_problem
    flagged = order.events.get(kind=OrderEvent.Kind.PROVISIONING_FAILED)
    assert "requirements not fetched" in flagged.data["detail"]

    # What would make the host read its own files, reach another address or build an sdist
    # (its build backend run as root) is refused there, whatever the store let through.
    key = keypair(tmp_path, "renter").with_suffix(".pub").read_bytes()
    user = host_account(order=order)
    refused_lines = {
        b"-r /etc/shadow": b"requirement 1 is refused",
        b"probe @ http://169.254.169.254/probe.whl": b"requirement 1 is refused",
        b"locagpu-probe==1.0 --no-binary :all:": b"requirement 1 is refused",
        b"numpy\r-r /etc/shadow": b"other than printable ASCII",  # a line for pip, not sed
    }
    for line, reason in refused_lines.items():
        stdin = key + b"[requirements]\n" + line + b"\n"
        args = ("grant", user, "0", "custom", order.number, "", engine.pinned_image)
        refused = _host_run(container_host, *args, stdin=stdin)
        assert refused.returncode != 0 and reason in refused.stderr, refused.stderr

    # A wheel pip fetches but will not install (a file outside its target): the grant fails
    # with pip's reason, and the next one starts from a new container, root's pip never
    # running again where an install of the renter's began.
    _wheel(engine.wheels, "locagpu-broken", "1.0", "", extra={"../outside.py": ""})
    broken = f"{TEST_ACCOUNT_PREFIX}broken"
    args = ("grant", broken, "0", "custom", "LG-BROKEN", "", engine.pinned_image)
    containers = []
    for _attempt in range(2):
        stdin = key + b"[requirements]\nlocagpu-broken==1.0\n"
        failed = _host_run(container_host, *args, stdin=stdin)
        assert failed.returncode != 0 and b"requirements not installed" in failed.stderr
        assert b"outside the target directory" in failed.stderr
        containers.append(engine.docker("inspect", "--format", "{{.Id}}", f"locagpu-{broken}"))
    assert containers[0].stdout != containers[1].stdout

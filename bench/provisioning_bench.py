"""Row 6: paid -> SSH login possible, against a local OpenSSH host (the test suite's sshd):
an account of the host's own, and inside the rental's container (container mode on the
suite's own Docker Engine, tests/containers/engine.py).

Each order is created, moved to paid, and from that instant the bench tries `ssh -i KEY` as
the customer until the login succeeds. Celery runs inline here (bench.settings), so the time
is the event dispatch, the SSH session to the host, the host script (in container mode: the
container created and started) and the customer's first login; a worker's queue wait comes on
top in production."""

import statistics
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench.common import progress


@dataclass
class ProvisioningResult:
    seconds: list[float] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.seconds) if self.seconds else float("nan")

    @property
    def p95(self) -> float:
        if not self.seconds:
            return float("nan")
        ordered = sorted(self.seconds)
        return ordered[max(0, round(0.95 * len(ordered)) - 1)]


def _container_login(order, key: Path) -> subprocess.CompletedProcess | None:
    """`ssh -p PORT LOGIN@127.0.0.1 true` into the order's container, once it has its port
    (the host key taken as first seen: a bench, not a test of it)."""
    order.refresh_from_db()
    if not order.access_port:
        return None
    return subprocess.run(
        [
            "ssh",
            "-i",
            str(key),
            "-p",
            str(order.access_port),
            "-o",
            "StrictHostKeyChecking=no",
            "-o",
            "UserKnownHostsFile=/dev/null",
            "-o",
            "BatchMode=yes",
            "-o",
            "IdentitiesOnly=yes",
            "-o",
            "LogLevel=ERROR",
            f"{order.access_user}@127.0.0.1",
            "true",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def provisioning_latency(
    *, orders: int, containers: bool = False, timeout: float = 60.0
) -> ProvisioningResult:
    """`orders` paid one after the other on a host of the account mode, or (`containers`)
    in container mode on the suite's own Docker Engine with its pytorch image."""
    from django.conf import settings

    from accounts.models import User
    from accounts.services import ssh_key_add
    from catalog.models import Environment
    from hosts.models import Host
    from hosts.provisioning.services import host_account
    from orders.models import OrderStatus
    from orders.services import order_create
    from orders.transitions import order_transition
    from tests.containers.engine import engine_start, engine_stop, host_environment
    from tests.factories import GpuModelFactory, HostFactory, accepted_terms
    from tests.provisioning.sshd import (
        TEST_ACCOUNT_PREFIX,
        keypair,
        rental_accounts_remove,
        sshd_start,
        sshd_stop,
    )

    where = "containers on a Docker Engine of its own" if containers else "local sshd"
    progress(f"provisioning: {where}, {orders} orders paid one after the other")
    engine = engine_start() if containers else None
    environment = Environment.objects.get(slug="pytorch")
    if engine is not None:
        environment.image = engine.pinned_image
        environment.save(update_fields=["image"])
    ssh_host = sshd_start(
        environment=host_environment(engine, ports="29000-29099") if engine else None
    )
    saved = {
        name: getattr(settings, name)
        for name in (
            "PROVISIONING_KEY_FILE",
            "PROVISIONING_KNOWN_HOSTS",
            "HOST_ACCOUNT_PREFIX",
        )
    }
    settings.PROVISIONING_KEY_FILE = str(ssh_host.store_key)
    settings.PROVISIONING_KNOWN_HOSTS = str(ssh_host.known_hosts)
    settings.HOST_ACCOUNT_PREFIX = TEST_ACCOUNT_PREFIX
    customer_key = keypair(Path(ssh_host.directory), "customer")
    result = ProvisioningResult()
    slug = "bench-containers" if containers else "bench-ssh"
    try:
        gpu = GpuModelFactory(slug=slug, name=f"Bench {slug}", units_total=0)
        HostFactory(
            name=f"{slug}-1",
            gpu=gpu,
            gpu_count=orders,
            ssh_host="127.0.0.1",
            ssh_port=ssh_host.port,
            provisioning=Host.Provisioning.SSH,
        )
        user = User.objects.create_user(f"{slug}@bench.invalid", first_name="Bench", last_name=slug)
        ssh_key_add(
            user=user, name="bench", public_key=customer_key.with_suffix(".pub").read_text()
        )
        for _ in range(orders):
            order = order_create(
                terms=accepted_terms(),
                user=user,
                gpu=gpu,
                environment=environment,
                quantity=1,
                term_days=3,
            )
            order_transition(order=order, to=OrderStatus.CONFIRMING, actor="system")
            started = time.monotonic()
            order_transition(order=order, to=OrderStatus.PAID, actor="system")
            account = host_account(order=order)
            while True:
                if containers:
                    login = _container_login(order, customer_key)
                else:
                    login = ssh_host.login(user=account, key=customer_key, command="true")
                elapsed = time.monotonic() - started
                if login is not None and login.returncode == 0:
                    result.seconds.append(elapsed)
                    break
                if elapsed > timeout:
                    problem = login.stderr if login else order.provisioning_problem
                    result.failed.append(f"{order.number}: {problem.strip()[:120]}")
                    break
                time.sleep(0.05)
    except subprocess.SubprocessError as error:
        result.failed.append(str(error))
    finally:
        for name, value in saved.items():
            setattr(settings, name, value)
        sshd_stop(ssh_host)
        if engine is not None:
            engine_stop(engine)
        rental_accounts_remove()
    return result

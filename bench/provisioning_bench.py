"""Row 5: paid -> SSH login possible, against a local OpenSSH host (the test suite's sshd).

Each order is created, moved to paid, and from that instant the bench tries `ssh -i KEY` as
the customer until the login succeeds. Celery runs inline here (bench.settings), so the time
is the event dispatch, the SSH session to the host, the host script and the customer's first
login; a worker's queue wait comes on top in production."""

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


def provisioning_latency(*, orders: int, timeout: float = 60.0) -> ProvisioningResult:
    from django.conf import settings

    from accounts.models import User
    from accounts.services import ssh_key_add
    from catalog.models import Environment
    from hosts.models import Host
    from hosts.provisioning.services import host_account
    from orders.models import OrderStatus
    from orders.services import order_create
    from orders.transitions import order_transition
    from tests.factories import GpuModelFactory, HostFactory, accepted_terms
    from tests.provisioning.sshd import (
        TEST_ACCOUNT_PREFIX,
        keypair,
        rental_accounts_remove,
        sshd_start,
        sshd_stop,
    )

    progress(f"provisioning: local sshd, {orders} orders paid one after the other")
    ssh_host = sshd_start()
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
    try:
        gpu = GpuModelFactory(slug="bench-ssh", name="Bench SSH GPU", units_total=0)
        HostFactory(
            name="bench-ssh-1",
            gpu=gpu,
            gpu_count=orders,
            ssh_host="127.0.0.1",
            ssh_port=ssh_host.port,
            provisioning=Host.Provisioning.SSH,
        )
        user = User.objects.create_user("ssh@bench.invalid", first_name="Bench", last_name="SSH")
        ssh_key_add(
            user=user, name="bench", public_key=customer_key.with_suffix(".pub").read_text()
        )
        environment = Environment.objects.get(slug="pytorch")
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
                login = ssh_host.login(user=account, key=customer_key, command="true")
                elapsed = time.monotonic() - started
                if login.returncode == 0:
                    result.seconds.append(elapsed)
                    break
                if elapsed > timeout:
                    result.failed.append(f"{order.number}: {login.stderr.strip()[:120]}")
                    break
                time.sleep(0.05)
    except subprocess.SubprocessError as error:
        result.failed.append(str(error))
    finally:
        for name, value in saved.items():
            setattr(settings, name, value)
        sshd_stop(ssh_host)
        rental_accounts_remove()
    return result

"""Attack, round 3, finding 1: a rental's key opens nothing but its rental. On `make run`'s host
run by root (as CI runs it), a customer logged in with a real `ssh` client is a Unix account
of the rental's own: no port forwarding, the store's processes, keys and database out of
reach, another rental's home unreadable, nothing the machine serves reachable, no key of its
own making accepted, and nothing left open once the term ends."""

import os
import subprocess
import time
from datetime import timedelta

import pytest

from hosts.provisioning.services import host_account
from orders.services import orders_complete
from tests.provisioning.sshd import keypair
from tests.provisioning.test_make_run_host import _logs_in_within, _rental_paid

pytestmark = [
    pytest.mark.chain,
    pytest.mark.django_db,
    pytest.mark.skipif(os.geteuid() != 0, reason="an account per rental needs root"),
]


def _processes_end(account: str, *, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while subprocess.run(["pgrep", "-u", account], capture_output=True).returncode == 0:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def test_a_rental_key_reaches_its_rental_and_nothing_else(
    devnet, make_run_settings, make_run_host, customer, outsider, worker_runs, tmp_path
):
    mine, theirs = keypair(tmp_path, "mine"), keypair(tmp_path, "theirs")
    planted = keypair(tmp_path, "planted").with_suffix(".pub")
    order = _rental_paid(devnet, customer, worker_runs, key=mine, gpu="h100-sxm")
    other = _rental_paid(devnet, outsider, worker_runs, key=theirs, gpu="h100-sxm")
    login, account = order.access_user, host_account(order=order)
    assert _logs_in_within(make_run_host, login, mine, seconds=10)

    def run(command: str, *options: str) -> subprocess.CompletedProcess:
        return make_run_host.login(user=login, key=mine, command=command, options=options)

    assert run("id -un; id -u; pwd").stdout.split() != [account, "0", f"/home/{account}"]
    assert run("id -un; pwd").stdout.split() == [account, f"/home/{account}"]
    store = make_run_host.directory
    for reach in [
        f"cat /proc/{os.getpid()}/environ",  # a process of the store's
        f"cat {store}/ssh/store_key",
        f"ls {store}",
        f"echo planted >> {store}/ssh/authorized_keys",
        f"ls /home/{host_account(order=other)}",
    ]:
        attempt = run(reach)
        assert attempt.returncode != 0 and "ermission denied" in attempt.stderr, (reach, attempt)
    # Nothing the machine serves (PostgreSQL, Redis, this sshd) is reachable from a session.
    for port in (5432, 6379, make_run_host.port):
        attempt = run(f"exec 3<>/dev/tcp/127.0.0.1/{port}")
        assert attempt.returncode != 0 and "unreachable" in attempt.stderr, (port, attempt)
    forwarded = run("true", "-W", "127.0.0.1:5432")
    assert forwarded.returncode == 255 and "prohibited" in forwarded.stderr, forwarded.stderr

    # A key the customer plants in its own home opens nothing, during the term or after it.
    plant = f"mkdir -p .ssh && echo '{planted.read_text().strip()}' > .ssh/authorized_keys"
    assert run(plant).returncode == 0
    for user in (account, login):
        assert (
            make_run_host.login(user=user, key=planted.with_suffix(""), command="true").returncode
            == 255
        )
    assert run("nohup sleep 600 >/dev/null 2>&1 &").returncode == 0
    with worker_runs():
        assert orders_complete(now=order.ends_at + timedelta(seconds=1)) >= 1
    assert run("true").returncode == 255
    assert _processes_end(account, seconds=5)  # killed with the term, then reaped

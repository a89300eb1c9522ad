"""Access without staff, end to end on a real OpenSSH host (tests/provisioning/sshd.py): paid
on anvil -> active -> the customer's key logs in and sees its CUDA_VISIBLE_DEVICES -> the
term ends -> the same login is refused."""

from datetime import timedelta

import pytest
from django.core import mail

from hosts.models import Host
from hosts.provisioning.services import (
    host_account,
    order_environment_confirm,
    order_provisioning_retry,
    rentals_purge,
)
from orders.models import Order, OrderEvent, OrderStatus
from orders.services import order_create, orders_complete
from payments.services import invoice_issue
from tests.anvil import free_port
from tests.factories import HostFactory, OrderFactory, accepted_terms
from tests.payments.helpers import reload
from tests.provisioning.sshd import RENTAL_KEYS_DIR

pytestmark = [pytest.mark.chain, pytest.mark.django_db]

S = OrderStatus
Kind = OrderEvent.Kind


def _pay(devnet, order: Order) -> None:
    invoice = invoice_issue(order=order, asset=devnet.usdc)
    devnet.pay_token(invoice.deposit_address, int(invoice.amount_due))
    devnet.mine(3)
    devnet.scan()


def _kinds(order: Order) -> list[str]:
    return list(order.events.values_list("kind", flat=True))


def test_paid_on_anvil_active_without_staff_login_sees_its_gpus_then_refused_at_the_end(
    settings, devnet, ssh_gpu, customer, pytorch, customer_key, local_ssh_host, worker_runs
):
    order = order_create(
        terms=accepted_terms(),
        user=customer,
        gpu=ssh_gpu,
        environment=pytorch,
        quantity=2,
        term_days=7,
    )
    user = host_account(order=order)
    with worker_runs():
        _pay(devnet, order)

    _invoice, order = reload(order.invoices.get())
    assert order.status == S.ACTIVE
    assert (order.access_host, order.access_port, order.access_user) == (
        "127.0.0.1",
        local_ssh_host.port,
        user,
    )
    assert [event.actor for event in order.events.filter(new_status=S.ACTIVE)] == ["system"]
    assert Kind.PROVISIONING in _kinds(order)
    active_mail = next(m for m in mail.outbox if order.number in m.subject and "ssh " in m.body)
    assert f"ssh -p {local_ssh_host.port} {user}@127.0.0.1" in active_mail.body

    login = local_ssh_host.login(user=user, key=customer_key, command="echo $CUDA_VISIBLE_DEVICES")
    assert login.returncode == 0, login.stderr
    assert login.stdout.strip() == "0,1"
    # Its key lines are root's and `restrict`ed: nothing forwarded, no key of its own planted.
    keys_file = RENTAL_KEYS_DIR / user
    assert keys_file.read_text().startswith("restrict,pty,")
    forwarded = local_ssh_host.login(
        user=user, key=customer_key, command="true", options=("-W", "127.0.0.1:5432")
    )
    assert forwarded.returncode == 255 and "prohibited" in forwarded.stderr
    planted = local_ssh_host.login(user=user, key=customer_key, command=f"echo x >> {keys_file}")
    assert planted.returncode != 0 and "ermission denied" in planted.stderr

    with worker_runs():
        assert orders_complete(now=order.ends_at + timedelta(seconds=1)) == 1
    order.refresh_from_db()
    assert order.status == S.COMPLETED and order.access_revoked_at is not None
    assert Kind.ACCESS_REVOKED in _kinds(order)
    refused = local_ssh_host.login(user=user, key=customer_key, command="true")
    assert refused.returncode == 255

    # The purge removes the account and its files on the date the order page gives.
    due = order.data_purge_due
    assert due == order.ends_at + timedelta(days=settings.RENTAL_DATA_RETENTION_DAYS)
    assert rentals_purge(now=due - timedelta(minutes=1)) == 0
    assert rentals_purge(now=due) == 1
    assert Kind.DATA_PURGED in _kinds(Order.objects.get(pk=order.pk))


def test_host_down_retries_then_flags_for_staff_and_the_customer_and_staff_retry_succeeds(
    settings,
    devnet,
    ssh_gpu,
    customer,
    staff,
    pytorch,
    customer_key,
    local_ssh_host,
    worker_runs,
    client,
):
    host = Host.objects.get(name="paris-1")
    Host.objects.filter(pk=host.pk).update(ssh_port=free_port())  # nothing listens there
    order = order_create(
        terms=accepted_terms(),
        user=customer,
        gpu=ssh_gpu,
        environment=pytorch,
        quantity=1,
        term_days=3,
    )
    with worker_runs():
        _pay(devnet, order)

    order.refresh_from_db()
    assert order.status == S.PROVISIONING
    assert order.provisioning_problem.startswith("host unreachable")
    flagged = order.events.get(kind=Kind.PROVISIONING_FAILED)
    # The customer's timeline (and webhooks) get the short reason; staff get the address.
    assert flagged.reason == "host unreachable"
    assert flagged.data["attempts"] == settings.PROVISIONING_ATTEMPTS
    assert "Connect call failed" in flagged.data["detail"]
    # The customer (French) is told by e-mail too.
    assert any("prennent un peu plus de temps" in m.subject for m in mail.outbox)
    client.force_login(customer)
    page = client.get(f"/en/account/orders/{order.number}/").content.decode()
    assert "We are on it" in page and "Connect call failed" not in page

    Host.objects.filter(pk=host.pk).update(ssh_port=local_ssh_host.port)  # the host is back
    with worker_runs():
        order_provisioning_retry(order=order, actor_user=staff)
    order.refresh_from_db()
    assert (order.status, order.provisioning_problem) == (S.ACTIVE, "")
    login = local_ssh_host.login(
        user=order.access_user, key=customer_key, command="echo $CUDA_VISIBLE_DEVICES"
    )
    assert login.stdout.strip() == "0", login.stderr


# A host without containers installs neither: the keys are granted (a requirements file after
# them changes nothing), staff confirm the environment.
@pytest.mark.parametrize(
    "details", ["nvcr.io/nvidia/pytorch:24.05-py3", "numpy==2.3.5"], ids=["image", "requirements"]
)
def test_a_custom_environment_waits_for_staff_confirmation_before_activation(
    devnet,
    ssh_gpu,
    customer,
    staff,
    custom_environment,
    customer_key,
    local_ssh_host,
    worker_runs,
    client,
    details,
):
    order = order_create(
        terms=accepted_terms(),
        user=customer,
        gpu=ssh_gpu,
        environment=custom_environment,
        environment_details=details,
        quantity=1,
        term_days=3,
    )
    with worker_runs():
        _pay(devnet, order)
    order.refresh_from_db()
    assert order.status == S.PROVISIONING and order.access_host == "127.0.0.1"
    login = local_ssh_host.login(user=order.access_user, key=customer_key, command="true")
    assert login.returncode == 0, login.stderr
    client.force_login(customer)
    page = client.get(f"/en/account/orders/{order.number}/").content.decode()
    assert "confirms your custom environment" in page

    with worker_runs():
        assert order_environment_confirm(order=order, actor_user=staff)
    order.refresh_from_db()
    assert order.status == S.ACTIVE
    assert Kind.ENVIRONMENT_CONFIRMED in _kinds(order)


def test_staff_move_an_order_off_a_dead_host_in_the_admin_and_it_is_provisioned_there(
    ssh_gpu, staff, customer, customer_key, local_ssh_host, worker_runs, client
):
    HostFactory(
        name="aaa-dead",
        gpu=ssh_gpu,
        gpu_count=2,
        ssh_host="127.0.0.1",
        ssh_port=free_port(),
        provisioning=Host.Provisioning.SSH,
    )
    order = OrderFactory(user=customer, gpu=ssh_gpu, quantity=2, status=S.PROVISIONING)
    order.ssh_keys.set(customer.ssh_keys.all())
    assert {hold.host.name for hold in order.slot_holds.all()} == {"aaa-dead"}
    client.force_login(staff)
    change = client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert "Déplacer vers un autre hôte" in change
    assert "Relancer la préparation automatique" in change

    with worker_runs():
        response = client.post(
            f"/admin/orders/order/{order.pk}/action/move/",
            {"host": Host.objects.get(name="paris-1").pk},
        )
    assert response.status_code == 302
    order.refresh_from_db()
    assert order.status == S.ACTIVE
    held = order.slot_holds.filter(released_at__isnull=True).select_related("host")
    assert {hold.host.name for hold in held} == {"paris-1"}
    login = local_ssh_host.login(
        user=order.access_user, key=customer_key, command="echo $CUDA_VISIBLE_DEVICES"
    )
    assert login.stdout.strip() == "0,1", login.stderr

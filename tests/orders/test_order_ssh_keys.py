"""An order names the SSH keys its machines install: all the account's unless chosen."""

import threading

import pytest
from django.core import mail
from django.db import connection

from accounts.models import SshKey
from accounts.services import ssh_key_add, ssh_key_delete
from hosts.models import Host
from hosts.provisioning.services import order_provision, order_provisioning_retry
from orders.models import Order, OrderStatus
from orders.services import OrderError
from orders.stock import gpu_available_units
from tests.accounts.ssh import quick_public_key
from tests.factories import (
    TERMS_TICKED,
    EnvironmentFactory,
    GpuModelFactory,
    UserFactory,
    order_placed,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def ssh_hosted(gpu):
    """The GPU's machine is set up automatically, with the order's keys."""
    Host.objects.filter(gpu=gpu).update(provisioning=Host.Provisioning.SSH)
    return gpu


def test_an_order_names_all_the_accounts_keys_by_default(customer, gpu, pytorch, laptop, desktop):
    order = order_placed(customer, gpu, pytorch)
    assert set(order.ssh_keys.all()) == {laptop, desktop}


def test_an_order_names_the_keys_chosen_and_may_name_none(customer, gpu, pytorch, laptop, desktop):
    assert list(order_placed(customer, gpu, pytorch, ssh_key_ids=[desktop.pk]).ssh_keys.all()) == [
        desktop
    ]
    assert not order_placed(customer, gpu, pytorch, ssh_key_ids=[]).ssh_keys.exists()


def test_another_accounts_key_is_refused_on_the_ssh_keys_field(customer, outsider, gpu, pytorch):
    theirs = ssh_key_add(user=outsider, name="theirs", public_key=quick_public_key())
    with pytest.raises(OrderError) as refused:
        order_placed(customer, gpu, pytorch, ssh_key_ids=[theirs.pk])
    assert (refused.value.field, refused.value.code) == ("ssh_keys", "unknown_ssh_key")
    assert not Order.objects.exists()


def test_with_keys_required_an_order_without_one_is_refused(
    customer, gpu, pytorch, laptop, settings
):
    settings.ORDERS_SSH_KEY_REQUIRED = True
    with pytest.raises(OrderError) as refused:
        order_placed(customer, gpu, pytorch, ssh_key_ids=[])
    assert (refused.value.field, refused.value.code) == ("ssh_keys", "ssh_key_required")
    assert not Order.objects.exists()
    assert list(order_placed(customer, gpu, pytorch).ssh_keys.all()) == [laptop]


def test_a_deleted_key_leaves_the_orders_that_named_it(customer, gpu, pytorch, laptop, desktop):
    order = order_placed(customer, gpu, pytorch)
    laptop.delete()
    assert list(order.ssh_keys.all()) == [desktop]


def test_the_configurator_ticks_every_key_and_orders_with_those_left_ticked(
    client, customer, gpu, pytorch, laptop, desktop
):
    client.force_login(customer)
    page = client.get(f"/en/gpus/{gpu.slug}/configure/").content.decode()
    for key in (laptop, desktop):
        assert f'value="{key.pk}"' in page
    assert page.count("checked") >= 2 + 2  # both keys, plus the environment and the term
    assert "/en/account/ssh-keys/?next=" in page

    form = {
        "environment": "pytorch",
        "quantity": "1",
        "term": "7",
        "ssh_keys_shown": "1",
        **TERMS_TICKED,
    }
    client.post(f"/en/gpus/{gpu.slug}/configure/", {**form, "ssh_keys": [laptop.pk]})
    # Every box unticked; "another": the same configuration is otherwise offered back.
    client.post(f"/en/gpus/{gpu.slug}/configure/", {**form, "another": "1"})
    first, second = Order.objects.order_by("created_at")
    assert list(first.ssh_keys.all()) == [laptop]
    assert not second.ssh_keys.exists()

    detail = client.get(f"/en/account/orders/{first.number}/").content.decode()
    assert "Laptop" in detail


def test_the_configurator_says_why_an_order_without_a_key_is_refused(
    client, customer, gpu, pytorch, settings
):
    settings.ORDERS_SSH_KEY_REQUIRED = True
    client.force_login(customer)
    form = {
        "environment": "pytorch",
        "quantity": "1",
        "term": "7",
        "ssh_keys_shown": "1",
        **TERMS_TICKED,
    }
    response = client.post(f"/fr/gpus/{gpu.slug}/configure/", form)
    assert response.status_code == 200
    assert "Ajoutez une clé SSH à votre compte" in response.content.decode()
    assert not Order.objects.exists()


def test_a_visitor_sees_no_key_choice(client, gpu, pytorch):
    page = client.get(f"/en/gpus/{gpu.slug}/configure/").content.decode()
    assert "ssh_keys" not in page


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("round_", range(12))
def test_a_key_deleted_while_an_order_names_it_leaves_no_broken_link(round_):
    customer = UserFactory()
    gpu = GpuModelFactory(units_total=8)
    pytorch = EnvironmentFactory()
    ssh_key = ssh_key_add(user=customer, name="Laptop", public_key=quick_public_key())
    start = threading.Barrier(2)
    failures: list[BaseException] = []

    def run(work):
        try:
            start.wait()
            work()
        except OrderError:
            pass  # refused cleanly: the key was gone when the order was saved
        except BaseException as error:
            failures.append(error)
        finally:
            connection.close()

    threads = [
        threading.Thread(target=run, args=(lambda: order_placed(customer, gpu, pytorch),)),
        threading.Thread(target=run, args=(lambda: ssh_key_delete(ssh_key=ssh_key),)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert not failures
    assert not SshKey.objects.filter(pk=ssh_key.pk).exists()
    assert not Order.ssh_keys.through.objects.exists()


def test_an_order_on_an_automatically_provisioned_host_needs_a_key(
    customer, ssh_hosted, pytorch, laptop
):
    with pytest.raises(OrderError) as refused:
        order_placed(customer, ssh_hosted, pytorch, ssh_key_ids=[])
    assert (refused.value.field, refused.value.code) == ("ssh_keys", "ssh_key_required")
    assert not Order.objects.exists()
    assert gpu_available_units(gpu=ssh_hosted) == 8  # its slots went back with the refusal
    assert list(order_placed(customer, ssh_hosted, pytorch).ssh_keys.all()) == [laptop]


def test_an_order_on_a_manual_host_may_name_no_key(customer, gpu, pytorch):
    assert not order_placed(customer, gpu, pytorch).ssh_keys.exists()


@pytest.mark.parametrize(
    ("language", "message", "link"),
    [
        ("fr", "Ajoutez une clé SSH à votre compte", "Comment en créer une"),
        ("en", "Add an SSH key to your account", "How to make one"),
    ],
)
def test_the_configurator_asks_for_a_key_with_a_link_on_an_automatic_host(
    client, customer, ssh_hosted, pytorch, language, message, link
):
    client.force_login(customer)
    form = {"environment": "pytorch", "quantity": "1", "term": "7", "ssh_keys_shown": "1"}
    response = client.post(
        f"/{language}/gpus/{ssh_hosted.slug}/configure/", {**form, **TERMS_TICKED}
    )
    assert response.status_code == 200
    page = response.content.decode()
    assert message in page
    assert f'href="/{language}/account/ssh-keys/?next=' in page and link in page
    assert not Order.objects.exists()


def paid_then_provisioned(order: Order) -> bool:
    """The order is paid and the provisioning task runs (no host is reached without a key)."""
    Order.objects.filter(pk=order.pk).update(status=OrderStatus.PAID)
    order.refresh_from_db()
    return order_provision(order=order)


def test_keys_deleted_after_ordering_are_not_installed_the_customer_is_asked_for_one(
    client, customer, staff, ssh_hosted, pytorch, laptop, worker_runs, settings
):
    settings.SITE_URL = "https://gpu.example.com"
    order = order_placed(customer, ssh_hosted, pytorch)
    ssh_key_delete(ssh_key=laptop)
    with worker_runs():
        assert paid_then_provisioned(order) is False

    # Flagged at once, without retries that cannot help: staff see it, the customer is told.
    order.refresh_from_db()
    assert order.status == OrderStatus.PROVISIONING
    assert order.lacks_ssh_key
    assert order.events.filter(reason="the order has no SSH public key").count() == 1
    (message,) = mail.outbox
    assert "ont été retirées de votre compte" in message.body
    assert "https://gpu.example.com/fr/account/ssh-keys/" in message.body
    client.force_login(customer)
    page = client.get(f"/en/account/orders/{order.number}/").content.decode()
    assert "were removed from your account" in page
    assert 'href="/en/account/ssh-keys/"' in page

    # The customer adds a key and writes in; the staff retry names it for the order.
    new_key = ssh_key_add(user=customer, name="New laptop", public_key=quick_public_key())
    order_provisioning_retry(order=order, actor_user=staff)
    assert list(order.ssh_keys.all()) == [new_key]
    assert order.events.get(reason="provisioning retried").data == {"ssh_keys": [new_key.pk]}


def test_a_visitors_key_is_checked_when_ordering_never_while_the_price_follows(
    client, ssh_hosted, pytorch
):
    url = f"/fr/gpus/{ssh_hosted.slug}/configure/"
    form = {"environment": "pytorch", "quantity": "1", "term": "7"}
    half_pasted = {**form, "public_key": "ssh-ed25519 AAAAC3Nza"}
    preview = client.get(url, half_pasted, HTTP_HX_REQUEST="true").content.decode()
    assert 'data-testid="quote-total"' in preview and "errorlist" not in preview

    private = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbg==\n-----END OPENSSH PRIVATE KEY-----"
    ordered = client.post(url, {**form, **TERMS_TICKED, "public_key": private})
    assert ordered.status_code == 200
    assert "clé privée" in ordered.content.decode()
    assert "configurator_pending" not in client.session

    good = client.post(url, {**form, **TERMS_TICKED, "public_key": quick_public_key("ada")})
    assert good.status_code == 302 and "/accounts/signup/" in good["Location"]

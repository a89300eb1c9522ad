"""An order names the SSH keys its machines install: all the account's unless chosen."""

import threading

import pytest
from django.db import connection

from accounts.models import SshKey
from accounts.services import ssh_key_add, ssh_key_delete
from catalog.models import Environment
from orders.models import Order
from orders.services import OrderError, order_create
from tests.accounts.ssh import quick_public_key
from tests.factories import TERMS_TICKED, GpuModelFactory, UserFactory, accepted_terms

pytestmark = pytest.mark.django_db


@pytest.fixture
def laptop(customer):
    return ssh_key_add(user=customer, name="Laptop", public_key=quick_public_key())


@pytest.fixture
def desktop(customer):
    return ssh_key_add(user=customer, name="Desktop", public_key=quick_public_key())


def place(customer, gpu, pytorch, **kwargs) -> Order:
    return order_create(
        terms=accepted_terms(),
        user=customer,
        gpu=gpu,
        environment=pytorch,
        quantity=1,
        term_days=7,
        **kwargs,
    )


def test_an_order_names_all_the_accounts_keys_by_default(customer, gpu, pytorch, laptop, desktop):
    order = place(customer, gpu, pytorch)
    assert set(order.ssh_keys.all()) == {laptop, desktop}


def test_an_order_names_the_keys_chosen_and_may_name_none(customer, gpu, pytorch, laptop, desktop):
    assert list(place(customer, gpu, pytorch, ssh_key_ids=[desktop.pk]).ssh_keys.all()) == [desktop]
    assert not place(customer, gpu, pytorch, ssh_key_ids=[]).ssh_keys.exists()


def test_another_accounts_key_is_refused_on_the_ssh_keys_field(customer, outsider, gpu, pytorch):
    theirs = ssh_key_add(user=outsider, name="theirs", public_key=quick_public_key())
    with pytest.raises(OrderError) as refused:
        place(customer, gpu, pytorch, ssh_key_ids=[theirs.pk])
    assert (refused.value.field, refused.value.code) == ("ssh_keys", "unknown_ssh_key")
    assert not Order.objects.exists()


def test_with_keys_required_an_order_without_one_is_refused(
    customer, gpu, pytorch, laptop, settings
):
    settings.ORDERS_SSH_KEY_REQUIRED = True
    with pytest.raises(OrderError) as refused:
        place(customer, gpu, pytorch, ssh_key_ids=[])
    assert (refused.value.field, refused.value.code) == ("ssh_keys", "ssh_key_required")
    assert not Order.objects.exists()
    assert list(place(customer, gpu, pytorch).ssh_keys.all()) == [laptop]


def test_a_deleted_key_leaves_the_orders_that_named_it(customer, gpu, pytorch, laptop, desktop):
    order = place(customer, gpu, pytorch)
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
    pytorch = Environment.objects.create(slug="pytorch", name="PyTorch", description="-")
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
        threading.Thread(target=run, args=(lambda: place(customer, gpu, pytorch),)),
        threading.Thread(target=run, args=(lambda: ssh_key_delete(ssh_key=ssh_key),)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert not failures
    assert not SshKey.objects.filter(pk=ssh_key.pk).exists()
    assert not Order.ssh_keys.through.objects.exists()

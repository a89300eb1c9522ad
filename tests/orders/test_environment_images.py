"""Environments are images: what the pages say an environment holds comes from its row, a
custom image is checked before anything is held, and an environment is placed only on the
hosts whose driver supports the CUDA it needs (issue 33, acceptance 4)."""

from decimal import Decimal

import pytest

from hosts.models import SlotHold
from orders.errors import OrderError
from orders.models import Order
from orders.services import order_create
from orders.stock import gpus_with_availability
from tests.factories import (
    TERMS_TICKED,
    GpuModelFactory,
    HostFactory,
    OrderFactory,
    accepted_terms,
)

pytestmark = pytest.mark.django_db

MALFORMED_IMAGES = [
    "docker.io/PyTorch/pytorch:2.5.1",  # upper case in the path
    "pytorch/pytorch@sha256:abc123",  # a digest of 6 hex digits
    "nvcr.io/nvidia/pytorch",  # neither tag nor digest: "latest" would move
    "ghcr.io/lab/train:",  # an empty tag
    "pytorch/pytorch: 2.5.1",  # a stray space: not a requirements file either
]


def _configure(client, gpu, **choices):
    return client.post(
        f"/en/gpus/{gpu.slug}/configure/",
        {"environment": "pytorch", "quantity": 1, "term": 7, **TERMS_TICKED, **choices},
    )


def _nothing_held() -> bool:
    return not Order.objects.exists() and not SlotHold.objects.exists()


@pytest.mark.parametrize("reference", MALFORMED_IMAGES)
def test_a_malformed_custom_image_is_refused_on_the_configurator_and_nothing_is_held(
    client, customer, gpu, custom_environment, reference
):
    client.force_login(customer)
    response = _configure(client, gpu, environment="custom", environment_details=reference)

    assert response.status_code == 200
    errors = response.context["form"].errors
    assert list(errors) == ["environment_details"]
    assert (
        "image" in errors["environment_details"][0]
        or "Line 1" in (errors["environment_details"][0])
    )
    assert _nothing_held()


@pytest.mark.parametrize(
    ("details", "line"),
    [
        # pip reads an option after a name too: this one would build an sdist, as root.
        ("torch==2.5.1\nevilpkg==1.0 --no-binary :all:", 2),
        ("numpy\r-r /etc/shadow", 1),  # a lone carriage return starts a line for pip
        ("numpy\naccelerate; python_version > '3' -r /etc/shadow", 2),
        ("probe @ https://169.254.169.254/probe.whl", 1),
        ("-e git+https://example.com/repo.git", 1),
        ("# only a comment", None),
        ("torch==2.5.1\nnumpy\u202e==2", 2),  # a hidden control
    ],
)
def test_a_requirements_file_pip_would_read_beyond_its_index_is_refused(
    customer, gpu, custom_environment, details, line
):
    with pytest.raises(OrderError) as refusal:
        order_create(
            user=customer,
            gpu=gpu,
            environment=custom_environment,
            quantity=1,
            term_days=7,
            environment_details=details,
            terms=accepted_terms(),
        )
    assert refusal.value.field == "environment_details"
    message = str(refusal.value.message)
    assert f"Line {line}" in message if line else "no package" in message
    assert _nothing_held()


def test_an_environment_newer_than_every_hosts_cuda_is_refused_and_the_configurator_says_so(
    client, customer, gpu, pytorch
):
    pytorch.cuda_required = Decimal("12.8")
    pytorch.save()
    client.force_login(customer)

    response = _configure(client, gpu)

    assert response.status_code == 200
    message = response.context["form"].errors["environment"][0]
    assert "No machine of this model supports CUDA 12.8" in message
    assert "their drivers go up to CUDA 12.4" in response.content.decode()
    assert _nothing_held()


def test_the_french_configurator_says_no_machine_supports_the_cuda(client, gpu, pytorch):
    pytorch.cuda_required = Decimal("13.0")
    pytorch.save()

    page = client.get(f"/fr/gpus/{gpu.slug}/configure/").content.decode()

    assert "Aucune machine de ce modèle ne prend en charge CUDA 13.0" in page


def test_stock_and_allocation_count_only_the_hosts_that_support_the_cuda(customer, pytorch):
    gpu = GpuModelFactory(units_total=0)
    recent = HostFactory(gpu=gpu, name="r550", gpu_count=4, cuda_max=Decimal("12.4"))
    HostFactory(gpu=gpu, name="r535", gpu_count=4, cuda_max=Decimal("12.2"))
    HostFactory(gpu=gpu, name="unrecorded", gpu_count=4, cuda_max=None)
    pytorch.cuda_required = Decimal("12.4")
    pytorch.save()

    shown = gpus_with_availability(environment=pytorch).get(pk=gpu.pk)
    assert (shown.available_units, shown.largest_free_block) == (4, 4)
    # With no environment chosen (the catalog's lists), every machine counts.
    assert gpus_with_availability().get(pk=gpu.pk).available_units == 12

    with pytest.raises(OrderError) as refusal:
        order_create(
            user=customer,
            gpu=gpu,
            environment=pytorch,
            quantity=5,
            term_days=7,
            terms=accepted_terms(),
        )
    assert refusal.value.code == "not_enough_units"
    assert _nothing_held()

    order = order_create(
        user=customer, gpu=gpu, environment=pytorch, quantity=4, term_days=7, terms=accepted_terms()
    )
    assert {hold.host_id for hold in order.slot_holds.all()} == {recent.pk}
    assert gpus_with_availability(environment=pytorch).get(pk=gpu.pk).available_units == 0


def test_the_pages_show_the_environments_versions_from_its_row(client, customer, gpu, pytorch):
    pytorch.pytorch_version, pytorch.cuda_version = "9.8.7", "12.1"
    pytorch.image = "registry.example.test/torch:9.8.7@sha256:" + "c" * 64
    pytorch.save()
    order = OrderFactory(user=customer, gpu=gpu, environment=pytorch)
    client.force_login(customer)

    pages = {
        "configurator": client.get(f"/en/gpus/{gpu.slug}/configure/"),
        "GPU page": client.get(f"/en/gpus/{gpu.slug}/"),
        "order page": client.get(f"/en/account/orders/{order.number}/"),
    }

    for name, response in pages.items():
        text = response.content.decode()
        assert response.status_code == 200, name
        assert "9.8.7" in text, name
        assert "registry.example.test/torch:9.8.7@sha256:" + "c" * 64 in text, name


@pytest.mark.parametrize(
    "reference",
    [
        "localhost:5000/lab/train:1",
        "127.0.0.1:5000/lab/train:1",
        "10.0.0.7/lab/train:1",
        "registry.localhost/lab/train:1",
    ],
)
def test_a_custom_image_from_the_hosts_own_network_is_refused(
    client, customer, gpu, custom_environment, reference
):
    """The host pulls what the customer names: a registry on its loopback or an address of
    its own network would make it query the host's own services (plain HTTP for loopback)."""
    client.force_login(customer)
    response = _configure(client, gpu, environment="custom", environment_details=reference)

    assert response.status_code == 200
    errors = response.context["form"].errors
    assert list(errors) == ["environment_details"]
    assert "registry" in errors["environment_details"][0]
    assert _nothing_held()

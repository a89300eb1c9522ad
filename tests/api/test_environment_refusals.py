"""POST /orders/ and /quotes/ refuse, with a 400 naming the field, a malformed custom image and
an environment whose CUDA is newer than every machine of the GPU; nothing is held (issue 33,
acceptance 4)."""

from decimal import Decimal

import pytest

from hosts.models import SlotHold
from orders.models import Order

pytestmark = pytest.mark.django_db


def _nothing_held() -> bool:
    return not Order.objects.exists() and not SlotHold.objects.exists()


@pytest.mark.parametrize(
    "reference",
    ["docker.io/PyTorch/pytorch:2.5.1", "pytorch/pytorch@sha256:abc", "nvcr.io/nvidia/pytorch"],
)
@pytest.mark.parametrize("endpoint", ["/api/v1/orders/", "/api/v1/quotes/"])
def test_a_malformed_custom_image_is_a_400_naming_environment_details(
    api, order_body, custom_environment, endpoint, reference
):
    body = {**order_body, "environment": "custom", "environment_details": reference}

    response = api.post(endpoint, body, format="json")

    assert response.status_code == 400, response.json()
    assert list(response.json()["error"]["fields"]) == ["environment_details"]
    assert _nothing_held()


def test_a_custom_image_well_written_is_ordered(api, order_body, custom_environment):
    reference = "ghcr.io/lab/train:2026.1@sha256:" + "0f" * 32
    body = {**order_body, "environment": "custom", "environment_details": reference}

    response = api.post("/api/v1/orders/", body, format="json")

    assert response.status_code == 201, response.json()
    assert response.json()["environment_details"] == reference


@pytest.mark.parametrize("endpoint", ["/api/v1/orders/", "/api/v1/quotes/"])
def test_an_environment_newer_than_every_hosts_cuda_is_a_400_naming_environment(
    api, order_body, pytorch, endpoint
):
    pytorch.cuda_required = Decimal("12.8")  # the GPU's only machine supports 12.4
    pytorch.save()

    response = api.post(endpoint, order_body, format="json")

    assert response.status_code == 400, response.json()
    error = response.json()["error"]
    assert error["code"] == "cuda_unsupported"
    assert list(error["fields"]) == ["environment"]
    assert "CUDA 12.8" in error["message"]
    assert _nothing_held()


def test_a_quote_counts_only_the_machines_that_support_the_cuda(api, order_body, gpu, pytorch):
    pytorch.cuda_required = Decimal("12.4")
    pytorch.save()
    gpu.hosts.update(cuda_max=Decimal("12.2"), gpu_count=8)
    gpu.hosts.create(name="r550", region="Paris", gpu_count=2, ssh_host="b.test", cuda_max=12.4)

    response = api.post("/api/v1/quotes/", {**order_body, "quantity": 2}, format="json")

    assert response.status_code == 200, response.json()
    assert response.json()["available_units"] == 2

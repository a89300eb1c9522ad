from decimal import Decimal

import pytest

from tests.factories import EnvironmentFactory, GpuModelFactory, OrderFactory

pytestmark = pytest.mark.django_db


def test_gpus_list_live_availability_and_prices(api, gpu):
    OrderFactory(gpu=gpu, quantity=3)
    GpuModelFactory(slug="retired", is_active=False)
    response = api.get("/api/v1/gpus/")
    assert response.status_code == 200
    assert response.json() == [
        {
            "slug": "h100-sxm",
            "name": "NVIDIA H100 SXM 80 GB",
            "architecture": "Hopper",
            "memory_gb": 80,
            "form_factor": "sxm",
            "available_units": 5,
            "machine": {"vcpus": 64, "ram_gb": 512, "disk_gb": 4000, "region": "Paris"},
            "currency": "EUR",
            "prices": [
                {
                    "term_days": 3,
                    "daily_rate": "80.00",
                    "hourly_rate": "3.33",
                    "total_per_gpu": "240.00",
                },
                {
                    "term_days": 7,
                    "daily_rate": "72.00",
                    "hourly_rate": "3.00",
                    "total_per_gpu": "504.00",
                },
                {
                    "term_days": 30,
                    "daily_rate": "60.00",
                    "hourly_rate": "2.50",
                    "total_per_gpu": "1800.00",
                },
            ],
        }
    ]


def test_one_gpu_by_slug(api, gpu):
    response = api.get("/api/v1/gpus/h100-sxm/")
    assert response.status_code == 200
    assert response.json()["available_units"] == 8


def test_an_unknown_gpu_is_a_json_404(api, db):
    response = api.get("/api/v1/gpus/h900/")
    assert response.status_code == 404
    assert response.json() == {
        "error": {"code": "not_found", "message": "Not found.", "fields": {}}
    }


def test_environments(api, pytorch, custom_environment):
    EnvironmentFactory(slug="old", is_active=False)
    pytorch.pytorch_version, pytorch.cuda_required = "2.6.0", Decimal("12.6")
    pytorch.save()
    response = api.get("/api/v1/environments/")
    no_image = dict.fromkeys(
        ("image", "os", "python", "cuda", "cudnn", "pytorch", "jupyterlab"), ""
    )
    assert response.json() == [
        {
            "slug": "custom",
            "name": "Custom",
            "requires_details": True,
            **no_image,
            "cuda_required": None,
        },
        {
            "slug": "pytorch",
            "name": "PyTorch",
            "requires_details": False,
            **no_image,
            "image": pytorch.image,
            "pytorch": "2.6.0",
            "cuda_required": "12.6",
        },
    ]


def test_gpu_list_takes_a_fixed_number_of_queries(api, gpu, django_assert_max_num_queries):
    for n in range(5):
        GpuModelFactory(slug=f"gpu-{n}")
    with django_assert_max_num_queries(4):
        assert len(api.get("/api/v1/gpus/").json()) == 6


def test_the_api_gives_each_price_its_hourly_rate(api, gpu):
    prices = api.get("/api/v1/gpus/h100-sxm/").json()["prices"]
    assert [(p["daily_rate"], p["hourly_rate"]) for p in prices] == [
        ("80.00", "3.33"),
        ("72.00", "3.00"),
        ("60.00", "2.50"),
    ]

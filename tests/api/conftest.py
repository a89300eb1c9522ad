import pytest
from rest_framework.test import APIClient

from accounts.models import ApiKey
from accounts.services import api_key_create


def key_client(raw_key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Api-Key {raw_key}")
    return client


@pytest.fixture
def customer_key(customer):
    return api_key_create(user=customer, name="Partner backend")


@pytest.fixture
def api(customer_key):
    """The customer's software, with a full-access key."""
    return key_client(customer_key[1])


@pytest.fixture
def read_only_api(customer):
    _key, raw_key = api_key_create(user=customer, name="Dashboard", scope=ApiKey.Scope.READ_ONLY)
    return key_client(raw_key)


@pytest.fixture
def outsider_api(outsider):
    return key_client(api_key_create(user=outsider, name="Someone else")[1])


@pytest.fixture
def order_body(gpu, pytorch, usdc):
    return {
        "gpu": "h100-sxm",
        "environment": "pytorch",
        "environment_details": "",
        "quantity": 2,
        "term_days": 7,
        "asset": "usdc-devnet",
        "accept_terms": True,
    }

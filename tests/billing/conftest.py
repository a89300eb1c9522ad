import pytest

# The API's key-holding clients, as the API tests use them.
from tests.api.conftest import api, customer_key, outsider_api  # noqa: F401
from tests.factories import UserFactory

# The three buyers French law distinguishes on an invoice.
BUYERS = {
    "consumer": {},
    "french_business": {
        "company_name": "Calculs Lyonnais SARL",
        "billing_address": "5 place Bellecour\n69002 Lyon",
        "country": "FR",
        "vat_number": "FR40303265045",
    },
    "eu_business": {
        "company_name": "Rechenzentrum Nord GmbH",
        "billing_address": "Hafenstraße 1\n20457 Hamburg",
        "country": "DE",
        "vat_number": "DE136695976",
    },
}


@pytest.fixture(params=list(BUYERS))
def buyer(request, db, password):
    """Each test using it runs for a consumer, a French business and an EU business."""
    return UserFactory(password=password, **BUYERS[request.param])

"""The API's side of the terms of sale: partners read the version in force and send their
customer's acceptance with each order."""

import pytest
from rest_framework.test import APIClient

from catalog.legal import TERMS_OF_SALE
from orders.models import Order
from rental.client import client_ip_hash

pytestmark = pytest.mark.django_db


def test_anyone_reads_the_terms_in_force_with_their_address_in_each_language(client, settings):
    settings.SITE_URL = "https://locagpu.example"
    response = APIClient().get("/api/v1/terms/")
    assert response.status_code == 200
    terms = response.json()
    assert terms["version"] == TERMS_OF_SALE.version
    assert terms["urls"] == {
        "fr": "https://locagpu.example/fr/legal/cgv/",
        "en": "https://locagpu.example/en/legal/cgv/",
    }
    documents = {each["name"]: each for each in terms["documents"]}
    assert set(documents) == {"cgv", "legal_notice", "privacy"}
    assert documents["privacy"]["title"] == "Privacy policy"  # the API answers in English
    for document in documents.values():
        for url in document["urls"].values():
            path = url.removeprefix("https://locagpu.example")
            assert client.get(path).status_code == 200, url


@pytest.mark.parametrize("body", [{}, {"accept_terms": False}, {"accept_terms": None}])
def test_an_order_without_the_acceptance_is_a_400_naming_accept_terms(api, order_body, body):
    order_body = {key: value for key, value in order_body.items() if key != "accept_terms"}
    response = api.post("/api/v1/orders/", {**order_body, **body}, format="json")
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert list(error["fields"]) == ["accept_terms"]
    assert not Order.objects.exists()


def test_the_acceptance_sent_is_stored_on_the_order(api, order_body):
    response = api.post("/api/v1/orders/", order_body, format="json", REMOTE_ADDR="192.0.2.8")
    assert response.status_code == 201
    order = Order.objects.get(number=response.json()["number"])
    assert order.terms_version == TERMS_OF_SALE.version
    assert order.terms_accepted_at is not None
    assert order.terms_ip_hash == client_ip_hash(response.wsgi_request)
    assert order.terms_ip_hash and "192.0.2.8" not in order.terms_ip_hash


def test_the_schema_documents_accept_terms_and_the_terms_endpoint(client):
    schema = client.get("/api/schema/?format=json").json()
    assert "/api/v1/terms/" in schema["paths"]
    order_create = schema["components"]["schemas"]["OrderCreateRequest"]
    assert "accept_terms" in order_create["required"]

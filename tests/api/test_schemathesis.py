"""Property-based run of the whole API against its own OpenAPI schema, with a valid key:
no 5xx and no response that breaks the schema, for a bounded number of examples."""

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, Phase, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from catalog.services import catalog_seed
from rental.wsgi import application
from tests.factories import OrderFactory

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


# Serving the schema touches no database, so it can be loaded when the tests are collected.
schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", application)
# Invalid requests too: wrong types, missing fields, odd headers must all be clean 4xx.
schema.config.generation.update(modes=[GenerationMode.POSITIVE, GenerationMode.NEGATIVE])


@pytest.fixture
def store(db, customer_key, order_body, receiver):
    """A store with something in it to read, order and cancel."""
    OrderFactory(user=customer_key[0].user, number="LG-TEST-0001")


@pytest.fixture(autouse=True)
def _keep_the_test_transaction():
    # Schemathesis calls the WSGI app itself; like Django's test client, keep the end of a
    # request from closing the connection that holds the test's transaction.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@schema.parametrize()
@settings(
    max_examples=12,
    deadline=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)
def test_the_api_honours_its_schema(case, customer_key, store):
    case.call_and_validate(headers={"Authorization": f"Api-Key {customer_key[1]}"}, checks=CHECKS)


# The advisor takes many settings that combine (a stack's preset, overrides, a pasted
# config.json): its own, longer run, positive and negative, anonymous as its users are.
advisor_schema = schema.include(path="/api/v1/advisor/", method="POST")


@pytest.fixture
def offers(db, settings):
    """The seeded catalog to recommend from, and no throttle in the way of 150 requests."""
    catalog_seed()
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"api": "100000/min"},
    }


@advisor_schema.parametrize()
@settings(
    max_examples=150,
    deadline=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)
def test_the_advisor_answers_any_request_without_a_server_error(case, offers):
    case.call_and_validate(checks=CHECKS)

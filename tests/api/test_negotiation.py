"""api.negotiation: DRF's choice of renderer, remembered per Accept header, is DRF's."""

import pytest
from django.http import Http404
from rest_framework.exceptions import NotAcceptable
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BrowsableAPIRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

from api.negotiation import RememberingContentNegotiation

ACCEPTS = [
    None,
    "*/*",
    "application/json",
    "application/json; indent=4",
    "text/html, application/xhtml+xml, */*;q=0.8",
    "text/html",
]


def _request(accept: str | None, query: str = "") -> Request:
    headers = {} if accept is None else {"HTTP_ACCEPT": accept}
    return Request(APIRequestFactory().get(f"/api/v1/gpus/{query}", **headers))


def _choice(negotiation, accept, query=""):
    renderers = [JSONRenderer(), BrowsableAPIRenderer()]
    try:
        renderer, media_type = negotiation.select_renderer(_request(accept, query), renderers)
    except NotAcceptable:
        return "406"
    except Http404:  # a format no renderer has
        return "404"
    return type(renderer), media_type


@pytest.mark.parametrize("accept", ACCEPTS)
@pytest.mark.parametrize("query", ["", "?format=json", "?format=api", "?format=xml"])
def test_the_renderer_remembered_is_the_one_drf_chooses(accept, query):
    remembering = RememberingContentNegotiation()
    expected = _choice(DefaultContentNegotiation(), accept, query)
    assert _choice(remembering, accept, query) == expected
    assert _choice(remembering, accept, query) == expected  # remembered


def test_a_json_only_api_still_refuses_what_it_cannot_send(client):
    for _ in range(2):
        response = client.get("/api/v1/gpus/", headers={"Accept": "text/html"})
        assert response.status_code == 406

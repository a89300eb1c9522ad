"""The configurator's choices live in its address (Back, reload, the language switch keep
them); the custom environment's description lives in the session."""

import re

import pytest

pytestmark = pytest.mark.django_db

DESCRIPTION = "nvcr.io/nvidia/pytorch:24.05-py3 + flash-attn 2.5"


def test_each_price_update_puts_the_choices_in_the_address_and_the_language_links(client, gpu):
    response = client.get(
        f"/fr/gpus/{gpu.slug}/configure/",
        {"environment": "custom", "environment_details": DESCRIPTION, "quantity": 3, "term": 30},
        HTTP_HX_REQUEST="true",
    )
    expected = "?environment=custom&amp;quantity=3&amp;term=30"
    assert response["HX-Replace-Url"] == f"/fr/gpus/{gpu.slug}/configure/{expected}".replace(
        "&amp;", "&"
    )
    body = response.content.decode()
    assert 'id="language-switcher" aria-label="Langue" data-hx-swap-oob="true"' in body
    assert f'href="/en/gpus/{gpu.slug}/configure/{expected}"' in body
    assert "flash-attn" not in response["HX-Replace-Url"] + body


def test_the_description_comes_back_on_reload_and_in_the_other_language(client, gpu):
    client.get(
        f"/fr/gpus/{gpu.slug}/configure/",
        {"environment": "custom", "environment_details": DESCRIPTION, "quantity": 3, "term": 30},
        HTTP_HX_REQUEST="true",
    )
    page = client.get(
        f"/en/gpus/{gpu.slug}/configure/", {"environment": "custom", "quantity": 3, "term": 30}
    ).content.decode()
    assert DESCRIPTION in page
    assert re.search(r'value="custom"[^>]*checked', page)
    assert re.search(r'name="quantity" value="3"', page)

"""The API keys page draws its creation form's fields itself while nothing was sent yet."""

import re

import pytest
from django.template.loader import render_to_string
from django.utils import translation

from accounts.views import ApiKeyForm


def _markup(html: str) -> str:
    """HTML with its whitespace runs made one space, and none between tags: what a browser
    reads the same."""
    return re.sub(r">\s+<", "><", " ".join(html.split())).replace("> ", ">")


@pytest.mark.parametrize("language", ["fr", "en"])
def test_the_unsent_forms_fields_are_those_django_draws(language):
    with translation.override(language):
        form = ApiKeyForm()
        written = render_to_string("accounts/_api_key_form_fields.html", {"form": form})
        drawn = form.as_div()
    assert _markup(re.sub(r"\{#.*?#\}", "", written)) == _markup(drawn)


@pytest.mark.django_db
def test_a_form_sent_back_with_its_errors_is_drawn_by_django(client, customer):
    client.force_login(customer)
    page = client.post("/fr/account/api-keys/", {"action": "create", "name": "", "scope": "x"})
    assert page.status_code == 400
    assert 'aria-describedby="id_name_error"' in page.content.decode()

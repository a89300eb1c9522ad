"""Every page a customer sees is valid HTML for the W3C validator (vnu), in French and English.

Pages (tests/pages.py) are rendered with the test client and written to files; vnu checks them
all in one run (the JVM is slow to start).
"""

import pytest
from django.core.management import call_command

from tests.factories import UserFactory
from tests.pages import ANONYMOUS_PAGES, LANGUAGES, customer_pages
from tests.vnu import vnu_errors

pytestmark = [pytest.mark.chain]


@pytest.fixture
def catalog(db):
    call_command("seed_catalog", verbosity=0)


def _render(client, name: str, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200, f"{name}: {url} answered {response.status_code}"
    return response.content.decode()


def test_every_page_and_payment_state_is_valid_html_in_both_languages(
    catalog, devnet, client, tmp_path
):
    pages = {}
    for lang in LANGUAGES:
        for name, url in ANONYMOUS_PAGES.items():
            pages[f"{lang}-{name}"] = _render(client, name, url.format(lang=lang))
    customer = UserFactory()
    logged_in_pages = customer_pages(devnet=devnet, customer=customer)
    client.force_login(customer)
    for lang in LANGUAGES:
        for name, url in logged_in_pages.items():
            pages[f"{lang}-{name}"] = _render(client, name, url.format(lang=lang))

    errors = vnu_errors(pages, tmp_path)

    assert not errors, f"vnu found {len(errors)} errors:\n" + "\n".join(errors)

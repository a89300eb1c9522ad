import re
from decimal import Decimal
from urllib.parse import parse_qs, urlparse

import pytest
from django.core import mail
from django.test import Client

from accounts.models import User
from orders.models import Order, OrderEvent
from tests.accounts.helpers import code_in, last_mail_to
from tests.factories import TERMS_TICKED

pytestmark = pytest.mark.django_db

PASSWORD = "correct-Horse-battery-9"


def test_configurator_shows_the_live_price_of_the_default_configuration(client, gpu):
    page = client.get(f"/fr/gpus/{gpu.slug}/configure/").content.decode()
    # One GPU, PyTorch, 7 days at 72.00 a day.
    assert "504,00\u00a0€" in page
    assert 'data-hx-get="/fr/gpus/h100-sxm/configure/"' in page


def test_htmx_quote_returns_only_the_price_fragment(client, gpu):
    response = client.get(
        f"/en/gpus/{gpu.slug}/configure/",
        {"environment": "pytorch", "quantity": 2, "term": 30},
        HTTP_HX_REQUEST="true",
    )
    body = response.content.decode()
    assert "<html" not in body
    assert "€3,600.00" in body  # 60.00 x 30 days x 2


def test_anonymous_visitor_configures_signs_up_and_the_order_is_placed_after_the_code(
    client, gpu, worker_runs
):
    configuration = {"environment": "pytorch", "quantity": "2", "term": "7", **TERMS_TICKED}
    response = client.post(f"/fr/gpus/{gpu.slug}/configure/", configuration)
    assert response.status_code == 302
    signup_url = response["Location"]
    assert signup_url.startswith("/fr/accounts/signup/")
    back = parse_qs(urlparse(signup_url).query)["next"][0]
    assert not Order.objects.exists()

    with worker_runs():
        signup = client.post(
            signup_url,
            {
                "first_name": "Ada",
                "last_name": "Lovelace",
                "email": "ada@example.com",
                "password1": PASSWORD,
                "password2": PASSWORD,
                "next": back,
            },
        )
    # The code from the mailbox, typed on the page, then the order is placed.
    assert signup.status_code == 302
    code_page = signup["Location"]
    assert code_page.startswith("/fr/accounts/")
    assert not Order.objects.exists() and "_auth_user_id" not in client.session
    verified = client.post(code_page, {"code": code_in(last_mail_to("ada@example.com"))})
    assert verified.status_code == 302
    assert verified["Location"] == back

    confirm = client.get(back)
    order = Order.objects.get()
    assert confirm["Location"] == f"/fr/account/orders/{order.number}/"
    assert order.user == User.objects.get(email="ada@example.com")
    assert (order.quantity, order.term_days, order.total) == (2, 7, Decimal("1008.00"))
    # The address again (a reload, Back) places nothing more.
    assert client.get(back)["Location"] == "/fr/account/orders/"
    assert Order.objects.count() == 1

    detail = client.get(confirm["Location"]).content.decode()
    assert order.number in detail
    assert "1\u202f008,00\u00a0€" in detail or "1\u00a0008,00\u00a0€" in detail
    assert 'class="timeline"' in detail
    assert 'data-status="awaiting_payment"' in detail


def test_a_logged_in_customer_orders_and_gets_a_readable_number(client, customer, gpu):
    client.force_login(customer)
    response = client.post(
        f"/en/gpus/{gpu.slug}/configure/",
        {"environment": "pytorch", "quantity": 1, "term": 3, **TERMS_TICKED},
    )
    order = Order.objects.get()
    assert response["Location"] == f"/en/account/orders/{order.number}/"
    assert re.fullmatch(r"LG-[A-HJ-NP-Z2-9]{4}-[A-HJ-NP-Z2-9]{4}", order.number)
    event = order.events.get()
    assert (event.old_status, event.new_status, event.actor) == ("", "awaiting_payment", "customer")


def test_order_numbers_are_not_sequential(customer, gpu, pytorch, settings):
    from orders.services import order_create
    from tests.factories import accepted_terms

    settings.ORDERS_NEW_ACCOUNT_UNPAID_CEILING = {"orders": 4, "units": 4}

    numbers = [
        order_create(
            terms=accepted_terms(),
            user=customer,
            gpu=gpu,
            environment=pytorch,
            quantity=1,
            term_days=3,
        ).number
        for _ in range(4)
    ]
    assert len(set(numbers)) == 4
    assert sorted(numbers) != numbers or sorted(numbers, reverse=True) != numbers


@pytest.mark.parametrize(
    "details",
    [
        "nvcr.io/nvidia/pytorch:24.05-py3",
        "ghcr.io/lab/train@sha256:" + "ab" * 32,
        "torch==2.5.1\nflash-attn>=2.5 ; platform_system == 'Linux'\n# pinned for the paper",
    ],
    ids=["image with tag", "image by digest", "requirements file"],
)
def test_custom_environment_keeps_its_image_or_requirements(
    client, customer, gpu, custom_environment, details
):
    client.force_login(customer)
    client.post(
        f"/en/gpus/{gpu.slug}/configure/",
        {
            "environment": "custom",
            "environment_details": details,
            "quantity": 1,
            "term": 7,
            **TERMS_TICKED,
        },
    )
    assert Order.objects.get().environment_details == details


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        ({"quantity": 0}, "quantity", "1"),
        ({"quantity": -1}, "quantity", "1"),
        ({"quantity": 10**9}, "quantity", "8 available"),
        ({"quantity": 999}, "quantity", "8 available"),
        ({"quantity": 9}, "quantity", "8 available"),
        ({"quantity": "two"}, "quantity", "whole number"),
        ({"term": 5}, "term", "5"),
        ({"environment": "tensorflow"}, "environment", "valid choice"),
        ({"environment": "custom", "environment_details": "  "}, "environment_details", "Give"),
        (
            {"environment": "custom", "environment_details": "x" * 100_000},
            "environment_details",
            "4000",
        ),
    ],
)
def test_bad_configuration_is_explained_and_nothing_is_stored(
    client, customer, gpu, data, field, message
):
    client.force_login(customer)
    payload = {"environment": "pytorch", "quantity": 1, "term": 7, **TERMS_TICKED, **data}
    response = client.post(f"/en/gpus/{gpu.slug}/configure/", payload)
    assert response.status_code == 200
    errors = response.context["form"].errors
    assert field in errors, errors
    assert message in " ".join(errors[field]), errors[field]
    assert not Order.objects.exists()


def test_unknown_or_inactive_gpu_has_no_configurator(client, customer, gpu):
    client.force_login(customer)
    assert client.get("/fr/gpus/gtx-480/configure/").status_code == 404
    assert client.post("/fr/gpus/gtx-480/configure/", {"quantity": 1}).status_code == 404
    gpu.is_active = False
    gpu.save()
    assert client.get(f"/fr/gpus/{gpu.slug}/configure/").status_code == 404
    assert not Order.objects.exists()


def test_order_received_email_is_in_the_customers_language(
    client, customer, gpu, celery_eager, django_capture_on_commit_callbacks
):
    customer.language = "en"
    customer.save()
    client.force_login(customer)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(
            f"/fr/gpus/{gpu.slug}/configure/",
            {"environment": "pytorch", "quantity": 1, "term": 7, **TERMS_TICKED},
        )
    order = Order.objects.get()
    assert len(mail.outbox) == 1
    assert mail.outbox[0].subject == f"Order {order.number} received"
    assert f"/en/account/orders/{order.number}/" in mail.outbox[0].body
    assert OrderEvent.objects.get().dispatched_at is not None


@pytest.mark.parametrize(
    "url",
    ["/fr/gpus/h100-sxm/configure/", "/fr/account/", "/fr/accounts/signup/"],
)
def test_forms_are_csrf_protected(customer, gpu, url):
    client = Client(enforce_csrf_checks=True)
    client.force_login(customer)
    response = client.post(url, {"environment": "pytorch", "quantity": 1, "term": 7})
    assert response.status_code == 403
    assert not Order.objects.exists()


def test_choosing_custom_shows_the_price_before_the_description_is_typed(
    client, gpu, custom_environment
):
    response = client.get(
        f"/en/gpus/{gpu.slug}/configure/",
        {"environment": "custom", "quantity": 1, "term": 7},
        HTTP_HX_REQUEST="true",
    )
    assert 'data-testid="quote-total"' in response.content.decode()


def test_a_sold_out_gpu_says_so_and_cannot_be_ordered(client, customer, gpu):
    from tests.factories import OrderFactory

    OrderFactory(gpu=gpu, quantity=gpu.units_total, status="paid")
    client.force_login(customer)
    page = client.get(f"/en/gpus/{gpu.slug}/configure/").content.decode()
    assert "Sold out right now." in page
    assert re.search(r'<button type="submit" class="button order-button" disabled>', page)


def test_the_order_e_mail_gives_the_deadline_in_the_customers_zone(
    client, customer, gpu, celery_eager, django_capture_on_commit_callbacks
):
    customer.time_zone = "America/New_York"
    customer.language = "en"
    customer.save()
    client.force_login(customer)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(
            f"/en/gpus/{gpu.slug}/configure/",
            {"environment": "pytorch", "quantity": 1, "term": 7, **TERMS_TICKED},
        )
    assert "(America/New_York)" in mail.outbox[-1].body


def test_an_unticked_terms_box_keeps_the_price_and_says_so_once(client, customer, gpu):
    client.force_login(customer)
    payload = {"environment": "pytorch", "quantity": 2, "term": 7}
    page = client.post(f"/fr/gpus/{gpu.slug}/configure/", payload).content.decode()
    assert 'data-testid="quote-total"' in page and "1\u00a0008,00\u00a0€" in page
    assert page.count("Cochez cette case pour commander") == 1
    assert "Corrigez les champs signalés" not in page
    assert not Order.objects.exists()


def test_too_many_gpus_names_the_real_maximum_the_field_allows_too(client, customer, gpu):
    from tests.factories import OrderFactory

    OrderFactory(gpu=gpu, quantity=3, status="paid")  # 5 of the 8 stay free
    client.force_login(customer)
    payload = {"environment": "pytorch", "quantity": 999, "term": 7, **TERMS_TICKED}
    page = client.post(f"/en/gpus/{gpu.slug}/configure/", payload).content.decode()
    assert "5 available right now" in page and "equal to 64" not in page
    assert re.search(r'<input type="number" name="quantity" value="999"[^>]* max="5"', page)
    assert "5 units available right now." in page
    assert not Order.objects.filter(status="awaiting_payment").exists()


def test_a_business_without_a_billing_address_is_told_on_the_configurator(client, customer, gpu):
    customer.company_name, customer.vat_number = "Calculs SARL", "FR40303265045"
    customer.save()
    client.force_login(customer)
    payload = {"environment": "pytorch", "quantity": 2, "term": 7, **TERMS_TICKED}

    page = client.post(f"/fr/gpus/{gpu.slug}/configure/", payload).content.decode()

    assert "ajoutez votre adresse de facturation" in page
    assert not Order.objects.exists()


def test_the_order_e_mail_gives_the_total_ttc_with_the_ht_and_the_vat_below(
    client, customer, gpu, celery_eager, django_capture_on_commit_callbacks
):
    client.force_login(customer)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(
            f"/fr/gpus/{gpu.slug}/configure/",
            {"environment": "pytorch", "quantity": 2, "term": 7, **TERMS_TICKED},
        )
    lines = mail.outbox[-1].body.splitlines()
    [said] = [index for index, line in enumerate(lines) if "1\u00a0008,00\u00a0€\u00a0TTC" in line]
    assert lines[said + 1] == "840,00\u00a0€\u00a0HT · TVA 20\u00a0%"

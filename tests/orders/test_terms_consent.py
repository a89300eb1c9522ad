"""An order needs the customer's acceptance of the terms of sale in force, with the express
request to start before the withdrawal period ends; the order keeps the version, the time
and a keyed hash of the client's address, and staff see them in admin."""

import html
import re
from datetime import timedelta

import pytest
from django.core import mail
from django.test import RequestFactory
from django.utils import timezone, translation

from catalog.legal import ORDER_CONSENT, TERMS_OF_SALE
from orders.consent import TermsAcceptance
from orders.models import Order
from orders.services import OrderError, order_create
from orders.views import SESSION_PENDING
from rental.client import client_ip_hash
from tests.factories import TERMS_TICKED, OrderFactory, accepted_terms

pytestmark = pytest.mark.django_db

CONFIGURATION = {"environment": "pytorch", "quantity": "1", "term": "7"}
CUSTOMER_IP = "203.0.113.41"


def _ip_hash(address: str, **headers) -> str:
    return client_ip_hash(RequestFactory().get("/", REMOTE_ADDR=address, **headers))


def _configure(client, gpu, data, lang="fr", **extra):
    return client.post(f"/{lang}/gpus/{gpu.slug}/configure/", data, **extra)


def test_an_order_without_the_box_ticked_is_refused_and_nothing_is_stored(client, customer, gpu):
    client.force_login(customer)
    response = _configure(client, gpu, CONFIGURATION)
    assert response.status_code == 200
    assert "accept_terms" in response.context["form"].errors
    page = response.content.decode()
    assert "Cochez cette case pour commander" in page
    # The choices stay, so ticking the box and pressing Order again is all it takes.
    assert re.search(r'name="quantity" value="1"', page)
    assert not Order.objects.exists()


def test_a_visitor_is_refused_before_being_sent_to_sign_up(client, gpu):
    response = _configure(client, gpu, CONFIGURATION, lang="en")
    assert response.status_code == 200
    assert "Tick this box to order" in response.content.decode()
    assert SESSION_PENDING not in client.session


def test_the_box_ticked_stores_the_version_the_time_and_a_hash_of_the_address(
    client, customer, gpu
):
    client.force_login(customer)
    before = timezone.now()
    response = _configure(client, gpu, {**CONFIGURATION, **TERMS_TICKED}, REMOTE_ADDR=CUSTOMER_IP)
    order = Order.objects.get()
    assert response["Location"] == f"/fr/account/orders/{order.number}/"
    assert order.terms_version == TERMS_OF_SALE.version
    assert before <= order.terms_accepted_at <= timezone.now()
    assert order.terms_ip_hash == _ip_hash(CUSTOMER_IP)
    assert CUSTOMER_IP not in order.terms_ip_hash
    assert order.terms_ip_hash != _ip_hash("203.0.113.42")


def test_behind_our_proxy_the_hash_is_of_the_client_not_of_the_proxy(
    client, customer, gpu, settings
):
    settings.ALLAUTH_TRUSTED_PROXY_COUNT = 1
    client.force_login(customer)
    _configure(
        client,
        gpu,
        {**CONFIGURATION, **TERMS_TICKED},
        REMOTE_ADDR="10.0.0.2",
        HTTP_X_FORWARDED_FOR=CUSTOMER_IP,
    )
    assert Order.objects.get().terms_ip_hash == _ip_hash(
        "10.0.0.2", HTTP_X_FORWARDED_FOR=CUSTOMER_IP
    )
    assert Order.objects.get().terms_ip_hash == _ip_hash(CUSTOMER_IP)


def test_a_visitor_who_ticked_the_box_gets_it_recorded_once_signed_in(client, customer, gpu):
    ticked_at = timezone.now()
    response = _configure(client, gpu, {**CONFIGURATION, **TERMS_TICKED}, REMOTE_ADDR=CUSTOMER_IP)
    assert response["Location"].startswith("/fr/accounts/signup/")
    client.force_login(customer)  # as signing up or logging in does; the session is kept

    placed = client.get("/fr/account/orders/pending/", REMOTE_ADDR="198.51.100.9")
    order = Order.objects.get()
    assert placed["Location"] == f"/fr/account/orders/{order.number}/"
    # Where and when the box was ticked, not where the sign-up ended.
    assert order.terms_ip_hash == _ip_hash(CUSTOMER_IP)
    assert ticked_at <= order.terms_accepted_at <= ticked_at + timedelta(minutes=1)
    assert order.terms_version == TERMS_OF_SALE.version


def test_a_configuration_pending_without_an_acceptance_is_not_placed(client, customer, gpu):
    client.force_login(customer)
    session = client.session
    # Kept by a session from before the box existed.
    session[SESSION_PENDING] = {"gpu": gpu.slug, **CONFIGURATION, "environment_details": ""}
    session.save()
    response = client.get("/en/account/orders/pending/")
    assert response.status_code == 200
    assert "accept_terms" in response.context["form"].errors
    assert not Order.objects.exists()


def test_the_box_says_word_for_word_what_the_terms_of_sale_say(client, gpu):
    for lang in ("fr", "en"):
        configurator = client.get(f"/{lang}/gpus/{gpu.slug}/configure/").content.decode()
        terms = client.get(f"/{lang}/legal/cgv/").content.decode()
        label = re.search(r'class="consent-label".*?<span>(.*?)</span>', configurator, re.S)
        quoted = re.search(r'data-testid="consent-wording"><p>(.*?)</p>', terms, re.S)
        assert label and quoted
        assert html.unescape(label.group(1)) == html.unescape(quoted.group(1))
        assert f'href="/{lang}/legal/cgv/"' in configurator
        with translation.override(lang):
            assert html.unescape(label.group(1)) == str(ORDER_CONSENT)


def test_order_create_refuses_an_order_without_the_acceptance(customer, gpu, pytorch):
    with pytest.raises(OrderError) as refusal:
        order_create(user=customer, gpu=gpu, environment=pytorch, quantity=1, term_days=7)
    assert (refusal.value.field, refusal.value.code) == ("accept_terms", "terms_not_accepted")
    assert not Order.objects.exists()


def test_order_create_refuses_the_acceptance_of_an_older_version(customer, gpu, pytorch):
    older = TermsAcceptance(version="2020-01-01", accepted_at=timezone.now(), ip_hash="0" * 64)
    with pytest.raises(OrderError) as refusal:
        order_create(
            user=customer, gpu=gpu, environment=pytorch, quantity=1, term_days=7, terms=older
        )
    assert (refusal.value.field, refusal.value.code) == ("accept_terms", "terms_outdated")
    assert not Order.objects.exists()


def test_staff_see_the_acceptance_on_the_order_page_of_admin(client, staff, customer, gpu, pytorch):
    terms = accepted_terms()
    order = order_create(
        user=customer, gpu=gpu, environment=pytorch, quantity=1, term_days=7, terms=terms
    )
    client.force_login(staff)
    page = client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert "Conditions générales de vente acceptées" in page or "Terms of sale accepted" in page
    assert TERMS_OF_SALE.version in page
    assert terms.ip_hash in page
    # Read-only: no input carries the acceptance.
    assert 'name="terms_version"' not in page and 'name="terms_ip_hash"' not in page


def test_orders_placed_before_the_acceptance_existed_keep_working(client, staff, customer):
    order = OrderFactory(user=customer)
    assert (order.terms_version, order.terms_accepted_at, order.terms_ip_hash) == ("", None, "")
    client.force_login(customer)
    assert client.get(f"/fr/account/orders/{order.number}/").status_code == 200
    client.force_login(staff)
    assert client.get(f"/admin/orders/order/{order.pk}/change/").status_code == 200


def test_the_order_e_mail_confirms_the_acceptance_and_links_the_terms(
    client, customer, gpu, celery_eager, django_capture_on_commit_callbacks
):
    customer.language = "en"
    customer.save()
    client.force_login(customer)
    with django_capture_on_commit_callbacks(execute=True):
        _configure(client, gpu, {**CONFIGURATION, **TERMS_TICKED})
    body = mail.outbox[-1].body
    assert f"accepted our terms of sale (version of {TERMS_OF_SALE.version})" in body
    assert "/en/legal/cgv/" in body

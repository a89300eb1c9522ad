"""The store speaks in its own words, also on allauth's pages and after a payment."""

import pytest

from orders.models import Order
from payments.models import Transfer
from payments.watcher.settlement import invoice_settle
from tests.payments.helpers import order_with_invoice, transfer_recorded

pytestmark = pytest.mark.django_db

ALLAUTH_STOCK_WORDS = (
    "Création de compte",
    "Courriel",
    "Connexion",
    "Se souvenir de moi",
    "Réinitialisation du mot de passe",
)


def test_the_french_sign_up_and_login_pages_use_the_stores_words(client):
    signup = client.get("/fr/accounts/signup/").content.decode()
    login = client.get("/fr/accounts/login/").content.decode()
    reset = client.get("/fr/accounts/password/reset/").content.decode()
    assert "<h1>Créez votre compte</h1>" in signup
    assert "Adresse e-mail" in signup and "Adresse e-mail" in login and "Adresse e-mail" in reset
    assert "<h1>Se connecter</h1>" in login
    assert "<h1>Mot de passe oublié</h1>" in reset
    for stock in ALLAUTH_STOCK_WORDS:
        assert stock not in signup + login + reset, stock


def test_the_messages_after_login_and_logout_are_the_stores(client, customer, password):
    client.post("/en/accounts/login/", {"login": customer.email, "password": password})
    page = client.get("/en/").content.decode()
    assert f"Hello {customer.first_name}, you are logged in." in page
    client.post("/en/accounts/logout/")
    assert "You are logged out. See you soon." in client.get("/en/").content.decode()


@pytest.mark.parametrize("status", ["paid", "provisioning", "active", "completed"])
def test_a_paid_order_no_longer_asks_to_follow_the_confirmations(client, customer, usdc, status):
    invoice = order_with_invoice(usdc, user=customer)
    transfer_recorded(invoice, status=Transfer.Status.CONFIRMED)
    invoice_settle(invoice_id=invoice.pk)
    Order.objects.filter(pk=invoice.order_id).update(status=status)
    client.force_login(customer)
    html = client.get(f"/fr/account/orders/{invoice.order.number}/").content.decode()
    assert "suivez ses confirmations" not in html
    assert "Paiement reçu et confirmé." in html

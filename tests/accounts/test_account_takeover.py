"""Finding 6: nobody keeps a way into an account whose address they do not own."""

import pytest
from rest_framework.test import APIClient

from accounts.models import ApiKey, User
from accounts.services import api_key_create
from api.models import WebhookDelivery, WebhookEndpoint
from api.webhooks.services import webhook_endpoint_create
from tests.accounts.helpers import last_mail_to, reset_link_in
from tests.factories import TERMS_TICKED, EnvironmentFactory, GpuModelFactory, UserFactory

pytestmark = pytest.mark.django_db

STRONG = "correct-Horse-battery-9"


def key_client(raw_key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Api-Key {raw_key}")
    return client


def test_signing_up_with_someone_elses_address_opens_nothing_before_the_code(client):
    response = client.post(
        "/fr/accounts/signup/",
        {
            "first_name": "Eve",
            "last_name": "Attacker",
            "email": "victim@corp.test",
            "password1": STRONG,
            "password2": STRONG,
        },
    )
    assert response.status_code == 302
    created = client.post("/fr/account/api-keys/", {"name": "backdoor", "scope": "full"})
    assert created.status_code == 302 and "/accounts/login/" in created["Location"]
    assert not ApiKey.objects.exists()
    assert "_auth_user_id" not in client.session


def test_a_key_whose_owner_never_verified_the_address_cannot_order_or_add_webhooks(settings, usdc):
    settings.API_WEBHOOK_ALLOW_LOCAL_TARGETS = True
    GpuModelFactory(slug="h100-sxm")
    EnvironmentFactory(slug="pytorch", name="PyTorch")
    squatter = User.objects.create_user("victim@corp.test", STRONG, first_name="E", last_name="A")
    api = key_client(api_key_create(user=squatter, name="backdoor")[1])

    webhook = api.post("/api/v1/webhooks/", {"url": "http://127.0.0.1:9/h"}, format="json")
    order = api.post(
        "/api/v1/orders/",
        {
            "gpu": "h100-sxm",
            "environment": "pytorch",
            "quantity": 1,
            "term_days": 7,
            "asset": usdc.slug,
            "accept_terms": True,
        },
        format="json",
    )

    assert (webhook.status_code, order.status_code) == (403, 403), (webhook.json(), order.json())
    assert order.json()["error"]["code"] == "email_not_verified"
    assert not WebhookEndpoint.objects.exists()
    assert api.get("/api/v1/orders/").status_code == 200


def test_a_password_reset_revokes_the_keys_and_pauses_the_webhooks_it_did_not_make(
    client, settings, usdc, worker_runs
):
    settings.API_WEBHOOK_ALLOW_LOCAL_TARGETS = True
    GpuModelFactory(slug="h100-sxm")
    EnvironmentFactory(slug="pytorch", name="PyTorch")
    owner = UserFactory(email="victim@corp.test", language="en")
    # What the squatter left behind before the owner took the address back.
    _key, squatter_key = api_key_create(user=owner, name="backdoor")
    webhook_endpoint_create(user=owner, url="http://127.0.0.1:9/spy", events=["order.created"])

    with worker_runs():
        client.post("/en/accounts/password/reset/", {"email": owner.email})
    form_url = client.get(reset_link_in(last_mail_to(owner.email)))["Location"]
    new = "reset-Strong-pass-77"
    with worker_runs():
        response = client.post(form_url, {"password1": new, "password2": new})
    assert response.status_code == 302

    assert key_client(squatter_key).get("/api/v1/orders/").status_code == 401
    endpoint = WebhookEndpoint.objects.get()
    assert endpoint.paused_at is not None
    notice = last_mail_to(owner.email)
    assert "API" in notice.subject and "webhook" in notice.body.lower()

    # The owner's own new key orders: the squatter's endpoint hears nothing of it.
    _key, own_key = api_key_create(user=owner, name="mine")
    with worker_runs():
        placed = key_client(own_key).post(
            "/api/v1/orders/",
            {
                "gpu": "h100-sxm",
                "environment": "pytorch",
                "quantity": 1,
                "term_days": 7,
                "asset": usdc.slug,
                "accept_terms": True,
            },
            format="json",
        )
    assert placed.status_code == 201, placed.json()
    # The squatter's endpoint is paused: its deliveries wait for the owner, nothing is sent.
    assert not WebhookDelivery.objects.exclude(
        status=WebhookDelivery.Status.PENDING, attempts=0
    ).exists()


def test_a_password_change_revokes_the_keys_and_tells_the_customer_in_their_language(
    client, customer, password, worker_runs
):
    customer.language = "fr"
    customer.save()
    api_key, _raw = api_key_create(user=customer, name="old")
    client.force_login(customer)
    new = "another-Strong-pass-42"
    with worker_runs():
        response = client.post(
            "/en/accounts/password/change/",
            {"oldpassword": password, "password1": new, "password2": new},
        )
    assert response.status_code == 302
    api_key.refresh_from_db()
    assert api_key.revoked_at is not None
    notice = last_mail_to(customer.email)
    assert "clés" in notice.subject.lower() or "clés" in notice.body.lower()


def test_an_account_older_than_verification_must_verify_before_ordering_or_making_keys(client):
    GpuModelFactory(slug="h100-sxm")
    EnvironmentFactory(slug="pytorch", name="PyTorch")
    legacy = User.objects.create_user("legacy@example.com", STRONG, first_name="L", last_name="G")
    client.force_login(legacy)

    keys = client.post("/fr/account/api-keys/", {"name": "mine", "scope": "full"})
    # Ordering sends them to log in again, which asks for the code.
    order = client.post(
        "/fr/gpus/h100-sxm/configure/",
        {"environment": "pytorch", "quantity": "1", "term": "7", **TERMS_TICKED},
    )

    assert order.status_code == 302 and order["Location"].startswith("/fr/accounts/login/")
    assert "next=" in order["Location"]
    # The key page sends a code and asks for it first.
    assert keys.status_code == 302 and keys["Location"].startswith("/fr/accounts/confirm-email/")
    assert not ApiKey.objects.exists()


def test_the_owner_resumes_a_paused_webhook_with_a_new_key(customer, settings):
    settings.API_WEBHOOK_ALLOW_LOCAL_TARGETS = True
    endpoint = webhook_endpoint_create(
        user=customer, url="http://127.0.0.1:9/mine", events=["order.created"]
    )
    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(paused_at="2026-01-01T00:00:00Z")
    api = key_client(api_key_create(user=customer, name="new")[1])

    listed = api.get(f"/api/v1/webhooks/{endpoint.pk}/").json()
    resumed = api.post(f"/api/v1/webhooks/{endpoint.pk}/resume/")

    assert listed["paused_at"] is not None
    assert resumed.status_code == 200 and resumed.json()["paused_at"] is None
    endpoint.refresh_from_db()
    assert endpoint.paused_at is None


def test_a_password_set_by_staff_in_the_admin_revokes_the_keys_too(
    admin_client, customer, worker_runs
):
    """Staff set a new password for an account taken over: the doors opened with the old one
    shut as when the owner changes it."""
    api_key, raw_key = api_key_create(user=customer, name="old")
    assert key_client(raw_key).get("/api/v1/orders/").status_code == 200
    new = "another-Strong-pass-42"
    with worker_runs():
        response = admin_client.post(
            f"/admin/accounts/user/{customer.pk}/password/",
            {"usable_password": "true", "password1": new, "password2": new},
        )
    assert response.status_code == 302
    api_key.refresh_from_db()
    assert api_key.revoked_at is not None
    assert key_client(raw_key).get("/api/v1/orders/").status_code == 401
    told = last_mail_to(customer.email)  # in the customer's language (French here)
    assert (
        told.subject == "[LocaGPU] Notre équipe a défini un nouveau mot de passe pour votre compte"
    )
    assert "1 clé d\u2019API a été révoquée" in told.body and "réinitialisez" not in told.body


def test_password_login_turned_off_by_staff_is_told_even_without_keys(
    admin_client, customer, worker_runs
):
    with worker_runs():
        response = admin_client.post(
            f"/admin/accounts/user/{customer.pk}/password/",
            {"usable_password": "false", "unset-password": ""},
        )
    assert response.status_code == 302
    customer.refresh_from_db()
    assert not customer.has_usable_password()
    told = last_mail_to(customer.email)
    assert "désactivé la connexion par mot de passe" in told.subject
    assert "Écrivez-nous" in told.body

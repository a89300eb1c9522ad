import hashlib
import re

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from accounts.models import ApiKey
from accounts.services import api_key_create, api_key_revoke
from tests.api.conftest import key_client

pytestmark = pytest.mark.django_db


def test_a_key_is_stored_hashed_with_a_visible_prefix(customer):
    api_key, raw_key = api_key_create(user=customer, name="Backend")
    assert raw_key.startswith(api_key.prefix + "_")
    assert api_key.key_hash == hashlib.sha256(raw_key.encode()).hexdigest()
    assert raw_key not in {str(v) for v in ApiKey.objects.values_list(flat=False).get()}


def test_the_command_prints_the_key_alone_on_its_last_line(customer, capsys):
    call_command("create_api_key", customer.email, "--name", "CI")
    last_line = capsys.readouterr().out.strip().splitlines()[-1]
    assert re.fullmatch(r"lg_[0-9a-f]{8}_[\w-]{43}", last_line)
    api_key = ApiKey.objects.get(user=customer)
    assert (api_key.name, api_key.scope) == ("CI", ApiKey.Scope.FULL)
    assert key_client(last_line).get("/api/v1/gpus/").status_code == 200


def test_the_command_refuses_an_unknown_email(db):
    with pytest.raises(CommandError):
        call_command("create_api_key", "nobody@example.com")


def test_a_request_records_when_the_key_was_last_used(customer_key, api):
    api_key, _raw = customer_key
    assert api_key.last_used_at is None
    api.get("/api/v1/gpus/")
    api_key.refresh_from_db()
    assert api_key.last_used_at is not None


def test_no_key_is_401_with_the_scheme_to_use(client, db):
    response = client.get("/api/v1/gpus/")
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Api-Key")
    assert response.json()["error"]["code"] == "not_authenticated"


def test_an_unknown_key_is_401(db):
    response = key_client("lg_00000000_nope").get("/api/v1/gpus/")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "authentication_failed"


def test_a_revoked_key_is_401(customer_key, api):
    assert api.get("/api/v1/gpus/").status_code == 200
    api_key_revoke(api_key=customer_key[0])
    response = api.get("/api/v1/gpus/")
    assert response.status_code == 401
    assert response.json()["error"]["message"] == "Unknown or revoked API key."


def test_a_read_only_key_reads_but_cannot_write(read_only_api, gpu, pytorch):
    assert read_only_api.get("/api/v1/orders/").status_code == 200
    body = {"gpu": "h100-sxm", "environment": "pytorch", "quantity": 1, "term_days": 7}
    response = read_only_api.post("/api/v1/quotes/", body, format="json")
    assert response.status_code == 403
    assert response.json()["error"] == {
        "code": "permission_denied",
        "message": "This API key is read-only.",
        "fields": {},
    }


def test_a_browser_session_works_too(client, customer):
    client.force_login(customer)
    assert client.get("/api/v1/gpus/").status_code == 200


class TestApiKeysPage:
    url = "/fr/account/api-keys/"

    def test_it_needs_a_login(self, client):
        response = client.get(self.url)
        assert response.status_code == 302
        assert "/accounts/login/" in response["Location"]

    def test_the_customer_creates_a_key_shown_once_then_revokes_it(self, client, customer):
        client.force_login(customer)
        response = client.post(
            self.url, {"action": "create", "name": "Mon script", "scope": "read_only"}
        )
        assert response.status_code == 200
        page = response.content.decode()
        raw_key = re.search(r'id="new-api-key">([^<]+)<', page).group(1)
        api_key = ApiKey.objects.get(user=customer)
        assert (api_key.name, api_key.scope) == ("Mon script", ApiKey.Scope.READ_ONLY)
        assert key_client(raw_key).get("/api/v1/gpus/").status_code == 200
        assert "Copiez-la maintenant" in page

        listing = client.get(self.url).content.decode()
        assert raw_key not in listing and api_key.prefix in listing

        response = client.post(self.url, {"action": "revoke", "key_id": api_key.pk})
        assert response.status_code == 302
        assert key_client(raw_key).get("/api/v1/gpus/").status_code == 401

    def test_another_accounts_key_cannot_be_revoked(self, client, customer, outsider):
        api_key, _raw = api_key_create(user=outsider, name="Theirs")
        client.force_login(customer)
        response = client.post(self.url, {"action": "revoke", "key_id": api_key.pk})
        assert response.status_code == 404
        api_key.refresh_from_db()
        assert api_key.is_active

    def test_the_page_is_in_english_under_en(self, client, customer):
        client.force_login(customer)
        page = client.get("/en/account/api-keys/").content.decode()
        assert "API keys" in page and "Create a key" in page


def test_staff_create_a_key_in_admin_and_see_it_once(client, staff, customer):
    client.force_login(staff)
    response = client.post(
        "/admin/accounts/apikey/add/",
        {"user": customer.pk, "name": "Made by staff", "scope": "full"},
        follow=True,
    )
    assert response.status_code == 200
    api_key = ApiKey.objects.get(user=customer)
    raw_key = re.search(r"(lg_[0-9a-f]{8}_[\w-]{43})", response.content.decode()).group(1)
    assert api_key.prefix in raw_key
    assert key_client(raw_key).get("/api/v1/gpus/").status_code == 200

    client.post(
        "/admin/accounts/apikey/",
        {"action": "revoke_keys", "_selected_action": [api_key.pk]},
    )
    assert key_client(raw_key).get("/api/v1/gpus/").status_code == 401


def test_the_french_api_keys_page_has_no_english_left(client, customer):
    api_key_create(user=customer, name="Backend")
    revoked, _raw = api_key_create(user=customer, name="Old")
    api_key_revoke(api_key=revoked)
    client.force_login(customer)
    page = client.get("/fr/account/api-keys/").content.decode()
    assert "Vos clés" in page and "Révoquée le" in page and "Lecture seule" in page
    for english in ("Your keys", "Create a key", "Last used", "Revoke", "Read only", "Never"):
        assert english not in page

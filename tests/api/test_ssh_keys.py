"""SSH keys through the API, and orders naming them."""

import pytest

from accounts.models import SshKey
from accounts.services import MAX_SSH_KEYS_PER_USER, ssh_key_add
from hosts.models import Host
from orders.models import Order
from tests.accounts.ssh import key_pair, public_key_of, quick_public_key, ssh_keygen_fingerprint

pytestmark = pytest.mark.django_db


def test_a_key_is_added_listed_and_deleted(api, tmp_path):
    private_key = key_pair(tmp_path, "ed25519")
    response = api.post(
        "/api/v1/ssh-keys/",
        {"name": "Laptop", "public_key": public_key_of(private_key)},
        format="json",
    )
    assert response.status_code == 201
    created = response.json()
    assert set(created) == {"id", "name", "public_key", "fingerprint", "created_at"}
    assert created["fingerprint"] == ssh_keygen_fingerprint(private_key)
    assert created["public_key"] == public_key_of(private_key).strip()

    assert api.get("/api/v1/ssh-keys/").json() == [created]
    assert api.delete(f"/api/v1/ssh-keys/{created['id']}/").status_code == 204
    assert api.get("/api/v1/ssh-keys/").json() == []


def test_a_private_key_is_refused_on_its_field_and_not_echoed(api, tmp_path):
    private_key = key_pair(tmp_path, "ed25519").read_text()
    response = api.post("/api/v1/ssh-keys/", {"public_key": private_key}, format="json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "private_key"
    assert error["fields"]["public_key"][0].startswith("This is a private key")
    assert private_key.splitlines()[2] not in response.content.decode()
    assert not SshKey.objects.exists()


def test_a_duplicate_and_the_21st_key_are_conflicts(api, customer):
    line = quick_public_key()
    ssh_key_add(user=customer, name="Laptop", public_key=line)
    response = api.post("/api/v1/ssh-keys/", {"public_key": line}, format="json")
    assert (response.status_code, response.json()["error"]["code"]) == (409, "ssh_key_exists")
    for number in range(MAX_SSH_KEYS_PER_USER - 1):
        ssh_key_add(user=customer, name=f"key {number}", public_key=quick_public_key())
    response = api.post("/api/v1/ssh-keys/", {"public_key": quick_public_key()}, format="json")
    assert (response.status_code, response.json()["error"]["code"]) == (409, "too_many_ssh_keys")


def test_another_accounts_key_is_not_found(api, outsider):
    theirs = ssh_key_add(user=outsider, name="theirs", public_key=quick_public_key())
    assert api.delete(f"/api/v1/ssh-keys/{theirs.pk}/").status_code == 404
    assert api.delete(f"/api/v1/ssh-keys/{10**30}/").status_code == 404
    assert SshKey.objects.filter(pk=theirs.pk).exists()


def test_a_read_only_key_lists_but_cannot_add(read_only_api):
    assert read_only_api.get("/api/v1/ssh-keys/").status_code == 200
    response = read_only_api.post(
        "/api/v1/ssh-keys/", {"public_key": quick_public_key()}, format="json"
    )
    assert response.status_code == 403


def test_an_order_names_all_keys_by_default_or_those_given(api, customer, order_body):
    laptop = ssh_key_add(user=customer, name="Laptop", public_key=quick_public_key())
    desktop = ssh_key_add(user=customer, name="Desktop", public_key=quick_public_key())

    by_default = api.post("/api/v1/orders/", order_body, format="json").json()
    chosen = api.post(
        "/api/v1/orders/", {**order_body, "ssh_keys": [desktop.pk]}, format="json"
    ).json()

    assert sorted(by_default["ssh_keys"]) == sorted([laptop.pk, desktop.pk])
    assert chosen["ssh_keys"] == [desktop.pk]
    listed = api.get(f"/api/v1/orders/{chosen['number']}/").json()
    assert listed["ssh_keys"] == [desktop.pk]


def test_an_order_naming_another_accounts_key_is_a_400_on_ssh_keys(api, outsider, order_body):
    theirs = ssh_key_add(user=outsider, name="theirs", public_key=quick_public_key())
    response = api.post("/api/v1/orders/", {**order_body, "ssh_keys": [theirs.pk]}, format="json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "unknown_ssh_key"
    assert list(error["fields"]) == ["ssh_keys"]


def test_a_replay_with_other_keys_is_an_idempotency_conflict(api, customer, order_body):
    laptop = ssh_key_add(user=customer, name="Laptop", public_key=quick_public_key())
    headers = {"HTTP_IDEMPOTENCY_KEY": "order-1"}
    first = api.post("/api/v1/orders/", order_body, format="json", **headers)
    again = api.post("/api/v1/orders/", order_body, format="json", **headers)
    other = api.post(
        "/api/v1/orders/", {**order_body, "ssh_keys": [laptop.pk]}, format="json", **headers
    )
    assert (first.status_code, again.status_code, other.status_code) == (201, 200, 409)


def test_an_order_without_a_key_on_an_automatic_host_is_a_400_on_ssh_keys(api, gpu, order_body):
    Host.objects.filter(gpu=gpu).update(provisioning=Host.Provisioning.SSH)
    response = api.post("/api/v1/orders/", order_body, format="json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "ssh_key_required"
    assert list(error["fields"]) == ["ssh_keys"]
    assert not Order.objects.exists()


@pytest.mark.parametrize("empty", ["", "  \n"])
def test_an_empty_key_is_refused_saying_how_to_make_one(api, customer, empty):
    # What `$(cat ~/.ssh/id_ed25519.pub)` sends on a machine without that file.
    response = api.post("/api/v1/ssh-keys/", {"name": "laptop", "public_key": empty}, format="json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "empty_key" and "public_key" in error["fields"]
    assert "ssh-keygen -t ed25519" in error["message"]
    assert not customer.ssh_keys.exists()

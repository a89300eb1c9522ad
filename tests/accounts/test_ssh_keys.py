"""SSH keys on the account: what is accepted, what is refused and why, in both languages."""

import html
import logging
import threading

import pytest
from django.db import connection
from django.test import RequestFactory
from django.utils import translation

from accounts import ssh_key_views
from accounts.models import SshKey
from accounts.services import MAX_SSH_KEYS_PER_USER, ssh_key_add
from accounts.ssh_keys import SshKeyRefused, ssh_public_key_parse
from tests.accounts.ssh import (
    key_pair,
    public_key_of,
    quick_public_key,
    ssh_keygen_fingerprint,
)
from tests.factories import UserFactory
from tests.test_translations import english_patterns, visible_text

pytestmark = pytest.mark.django_db

ACCEPTED = [("ed25519", None), ("ecdsa", 256), ("ecdsa", 384), ("ecdsa", 521), ("rsa", 3072)]
# The start of each refusal's sentence, in each language: enough to know which one it is.
SENTENCES = {
    "private_key": {
        "en": "This is a private key: it was not saved.",
        "fr": "Ceci est une clé privée : elle n'a pas été enregistrée.",
    },
    "not_a_key": {
        "en": "This is not an SSH public key.",
        "fr": "Ceci n'est pas une clé publique SSH.",
    },
    "one_line": {
        "en": "Paste one key, on a single line",
        "fr": "Collez une seule clé, sur une seule ligne",
    },
    "unsupported_type": {
        "en": "This type of key is not accepted",
        "fr": "Ce type de clé n'est pas accepté",
    },
    "damaged": {
        "en": "This key is incomplete or damaged",
        "fr": "Cette clé est incomplète ou abîmée",
    },
    "rsa_too_short": {
        "en": "This RSA key has 1024 bits: at least 3072 are required.",
        "fr": "Cette clé RSA fait 1024 bits : il en faut au moins 3072.",
    },
    "duplicate": {
        "en": "This key is already on your account, named “Laptop”.",
        "fr": "Cette clé est déjà sur votre compte, sous le nom « Laptop ».",
    },
    "too_many": {
        "en": "An account holds at most 20 SSH keys",
        "fr": "Un compte a au plus 20 clés SSH",
    },
}


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    """Key pairs made once by ssh-keygen: each accepted kind, and the bad ones."""
    directory = tmp_path_factory.mktemp("ssh")
    pairs = {f"{kind}-{bits or ''}": key_pair(directory, kind, bits) for kind, bits in ACCEPTED}
    pairs["rsa-1024"] = key_pair(directory, "rsa", 1024)
    pairs["rsa-pem"] = key_pair(directory, "rsa", 3072, pem=True)
    return pairs


def bad_keys(keys) -> dict[str, tuple[str, str]]:
    """Each bad paste, with the refusal it earns."""
    good = public_key_of(keys["ed25519-"])
    key_type, blob, _comment = good.split()
    return {
        "truncated": (f"{key_type} {blob[:30]}", "damaged"),
        "truncated-rsa": (public_key_of(keys["rsa-3072"])[:300], "damaged"),
        "rsa-1024": (public_key_of(keys["rsa-1024"]), "rsa_too_short"),
        "private-openssh": (keys["ed25519-"].read_text(), "private_key"),
        "private-pem": (keys["rsa-pem"].read_text(), "private_key"),
        "private-body-only": (keys["ed25519-"].read_text().splitlines()[1], "private_key"),
        "garbage": ("hello, here is my key!", "not_a_key"),
        "pem-public": ("-----BEGIN PUBLIC KEY-----", "not_a_key"),
        "dsa": (f"ssh-dss {blob}", "unsupported_type"),
        "certificate": (f"ssh-ed25519-cert-v01@openssh.com {blob}", "unsupported_type"),
        "type-mismatch": (f"ssh-rsa {blob}", "damaged"),
        "two-keys": (f"{good}\n{quick_public_key()}", "one_line"),
        "too-long": (f"{key_type} {'A' * 9000}", "not_a_key"),
    }


@pytest.mark.parametrize(("kind", "bits"), ACCEPTED)
def test_each_accepted_kind_is_stored_as_ssh_keygen_wrote_it_with_its_fingerprint(
    keys, customer, kind, bits
):
    private_key = keys[f"{kind}-{bits or ''}"]
    pasted = public_key_of(private_key)

    ssh_key = ssh_key_add(user=customer, name="", public_key=f"  {pasted}\n")

    assert ssh_key.public_key == pasted.strip()
    assert ssh_key.fingerprint == ssh_keygen_fingerprint(private_key)
    assert ssh_key.name == "ada@laptop"  # the comment, when no name is given
    assert ssh_key.kind == {"ed25519": "ED25519", "ecdsa": "ECDSA", "rsa": "RSA"}[kind]


def test_a_comment_with_control_characters_is_stored_printable():
    line = quick_public_key(comment="ada\x1b[31m@lap\ttop")
    assert ssh_public_key_parse(line).comment == "ada[31m@lap top"


@pytest.mark.parametrize(
    "case",
    [
        "truncated",
        "truncated-rsa",
        "rsa-1024",
        "private-openssh",
        "private-pem",
        "private-body-only",
        "garbage",
        "pem-public",
        "dsa",
        "certificate",
        "type-mismatch",
        "two-keys",
        "too-long",
    ],
)
def test_each_bad_key_is_refused_with_its_sentence_in_both_languages(keys, client, customer, case):
    pasted, code = bad_keys(keys)[case]
    with pytest.raises(SshKeyRefused) as refused:
        ssh_public_key_parse(pasted)
    assert refused.value.code == code
    client.force_login(customer)
    for language in ("fr", "en"):
        response = client.post(
            f"/{language}/account/ssh-keys/", {"name": "Laptop", "public_key": pasted}
        )
        assert response.status_code == 400
        assert SENTENCES[code][language] in html.unescape(response.content.decode())
    assert not SshKey.objects.exists()


def test_a_key_already_on_the_account_is_refused_naming_it(client, customer):
    line = quick_public_key()
    ssh_key_add(user=customer, name="Laptop", public_key=line)
    client.force_login(customer)
    for language in ("fr", "en"):
        response = client.post(f"/{language}/account/ssh-keys/", {"public_key": line})
        assert response.status_code == 400
        assert SENTENCES["duplicate"][language] in html.unescape(response.content.decode())
    assert customer.ssh_keys.count() == 1


def test_the_21st_key_is_refused_in_both_languages(client, customer):
    for number in range(MAX_SSH_KEYS_PER_USER):
        ssh_key_add(user=customer, name=f"key {number}", public_key=quick_public_key())
    client.force_login(customer)
    for language in ("fr", "en"):
        response = client.post(f"/{language}/account/ssh-keys/", {"public_key": quick_public_key()})
        assert response.status_code == 400
        assert SENTENCES["too_many"][language] in html.unescape(response.content.decode())
    assert customer.ssh_keys.count() == MAX_SSH_KEYS_PER_USER


def test_a_pasted_private_key_is_not_stored_logged_or_sent_back(keys, client, customer, caplog):
    private_key = keys["ed25519-"].read_text()
    secret_line = private_key.splitlines()[2]  # a line of the key's body
    client.force_login(customer)
    with caplog.at_level(logging.DEBUG):
        response = client.post("/en/account/ssh-keys/", {"name": "oops", "public_key": private_key})
    page = response.content.decode()
    assert response.status_code == 400
    assert secret_line not in page
    assert 'value="oops"' in page  # the name stays, the key's field comes back empty
    assert secret_line not in caplog.text
    assert not SshKey.objects.exists()
    with pytest.raises(SshKeyRefused) as refused:
        ssh_public_key_parse(private_key)
    for text in (str(refused.value), repr(refused.value), str(refused.value.args)):
        assert secret_line not in text


def test_error_reports_leave_the_pasted_key_out(customer):
    request = RequestFactory().post("/en/account/ssh-keys/", {"public_key": "-----BEGIN"})
    request.user = customer
    ssh_key_views.ssh_keys(request)
    assert request.sensitive_post_parameters == ("public_key",)


def test_the_page_adds_names_and_deletes_keys(keys, client, customer, outsider):
    client.force_login(customer)
    pasted = public_key_of(keys["ed25519-"])
    response = client.post("/fr/account/ssh-keys/", {"name": "Portable", "public_key": pasted})
    assert response.status_code == 302
    ssh_key = customer.ssh_keys.get()
    assert ssh_key.name == "Portable"

    page = client.get("/fr/account/ssh-keys/").content.decode()
    assert ssh_keygen_fingerprint(keys["ed25519-"]) in page
    assert "Portable" in page

    theirs = ssh_key_add(user=outsider, name="theirs", public_key=quick_public_key())
    response = client.post("/fr/account/ssh-keys/", {"action": "delete", "key_id": theirs.pk})
    assert response.status_code == 404
    response = client.post("/fr/account/ssh-keys/", {"action": "delete", "key_id": "¹"})
    assert response.status_code == 400
    response = client.post("/fr/account/ssh-keys/", {"action": "delete", "key_id": ssh_key.pk})
    assert response.status_code == 302
    assert not customer.ssh_keys.exists()
    assert SshKey.objects.filter(pk=theirs.pk).exists()


def test_adding_a_key_from_the_configurator_leads_back_there_and_nowhere_else(client, customer):
    client.force_login(customer)
    back = "/fr/gpus/h100-sxm/configure/?quantity=2"
    response = client.post(
        "/fr/account/ssh-keys/", {"public_key": quick_public_key(), "next": back}
    )
    assert response["Location"] == back
    response = client.post(
        "/fr/account/ssh-keys/",
        {"public_key": quick_public_key(), "next": "https://evil.example/"},
    )
    assert response["Location"] == "/fr/account/ssh-keys/"


@pytest.mark.django_db(transaction=True)
def test_two_keys_added_at_once_never_take_an_account_past_20():
    user = UserFactory()
    for number in range(MAX_SSH_KEYS_PER_USER - 1):
        ssh_key_add(user=user, name=f"key {number}", public_key=quick_public_key())
    start = threading.Barrier(2)
    outcomes: list[str] = []

    def add():
        try:
            start.wait()
            ssh_key_add(user=user, name="last", public_key=quick_public_key())
            outcomes.append("added")
        except SshKeyRefused as refusal:
            outcomes.append(refusal.code)
        finally:
            connection.close()

    threads = [threading.Thread(target=add) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(outcomes) == ["added", "too_many"]
    assert SshKey.objects.filter(user=user).count() == MAX_SSH_KEYS_PER_USER


def test_the_refusal_follows_the_active_language():
    with pytest.raises(SshKeyRefused) as refused:
        ssh_public_key_parse("hello")
    with translation.override("fr"):
        assert refused.value.message.startswith(SENTENCES["not_a_key"]["fr"])
    with translation.override("en"):
        assert refused.value.message.startswith(SENTENCES["not_a_key"]["en"])


def test_the_french_pages_with_keys_have_no_english_left(client, customer, gpu, pytorch):
    ssh_key_add(user=customer, name="Portable", public_key=quick_public_key())
    client.force_login(customer)
    pages = {
        "keys": client.get("/fr/account/ssh-keys/"),
        "refused": client.post("/fr/account/ssh-keys/", {"public_key": "ssh-rsa AAAA"}),
        "configurator": client.get(f"/fr/gpus/{gpu.slug}/configure/"),
    }
    patterns = english_patterns()
    for name, response in pages.items():
        text = visible_text(response.content.decode())
        left = sorted(msgid for msgid, pattern in patterns.items() if pattern.search(text))
        assert not left, (name, left)
    assert "Clés SSH" in visible_text(pages["keys"].content.decode())


def test_staff_see_a_customers_keys_and_may_delete_one_but_not_add_or_change(
    client, staff, customer
):
    ssh_key = ssh_key_add(user=customer, name="Laptop", public_key=quick_public_key())
    client.force_login(staff)
    assert ssh_key.fingerprint in client.get("/admin/accounts/sshkey/").content.decode()
    assert client.get(f"/admin/accounts/sshkey/{ssh_key.pk}/change/").status_code == 200
    assert client.get("/admin/accounts/sshkey/add/").status_code == 403
    response = client.post(f"/admin/accounts/sshkey/{ssh_key.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not SshKey.objects.exists()

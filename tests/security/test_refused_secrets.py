"""A private key pasted by mistake is refused, never stored, and never sent back: the page
that refuses it shows the field empty, wherever it was pasted (issue 35)."""

import pytest

from accounts.models import SshKey
from tests.factories import TERMS_TICKED, order_placed

pytestmark = pytest.mark.django_db

PRIVATE = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "-----END OPENSSH PRIVATE KEY-----"
)
SECRET = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"


def _refused_without_echo(response) -> None:
    page = response.content.decode()
    assert "private key" in page or "clé privée" in page
    assert SECRET not in page and "BEGIN OPENSSH" not in page


def test_the_configurator_of_a_visitor_does_not_echo_a_private_key(client, gpu, pytorch):
    form = {"environment": "pytorch", "quantity": "1", "term": "7", **TERMS_TICKED}
    response = client.post(f"/en/gpus/{gpu.slug}/configure/", {**form, "public_key": PRIVATE})
    assert response.status_code == 200
    _refused_without_echo(response)


def test_the_configurator_of_a_customer_does_not_echo_a_private_key(client, customer, gpu, pytorch):
    client.force_login(customer)
    form = {"environment": "pytorch", "quantity": "1", "term": "7", **TERMS_TICKED}
    response = client.post(f"/en/gpus/{gpu.slug}/configure/", {**form, "public_key": PRIVATE})
    _refused_without_echo(response)
    assert not SshKey.objects.exists()


def test_the_order_page_and_the_keys_page_do_not_echo_a_private_key(client, customer, gpu, pytorch):
    client.force_login(customer)
    order = order_placed(customer, gpu, pytorch)
    response = client.post(
        f"/en/account/orders/{order.number}/keys/", {"public_key": PRIVATE}, follow=True
    )
    _refused_without_echo(response)
    response = client.post("/en/account/ssh-keys/", {"name": "oops", "public_key": PRIVATE})
    _refused_without_echo(response)
    assert not SshKey.objects.exists()

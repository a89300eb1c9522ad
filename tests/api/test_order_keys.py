"""`PATCH /api/v1/orders/{n}/` (`ssh_keys`) and the order page's keys form: keys attached to
and removed from a paid order, with a clear answer for every bad request, never a 500, and
nobody else's order or keys."""

import pytest

from accounts.services import ssh_key_add
from hosts.models import Host
from orders.models import Order, OrderEvent, OrderStatus
from tests.accounts.ssh import quick_public_key
from tests.factories import order_placed

pytestmark = pytest.mark.django_db

S = OrderStatus
PRIVATE_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbg==\n-----END OPENSSH PRIVATE KEY-----"


@pytest.fixture
def paid_order(customer, gpu, pytorch, laptop):
    """Paid, on a machine set up automatically (its keys are installed by the store)."""
    Host.objects.filter(gpu=gpu).update(provisioning=Host.Provisioning.SSH)
    order = order_placed(customer, gpu, pytorch)
    Order.objects.filter(pk=order.pk).update(status=S.PAID)
    return order


def _url(order: Order) -> str:
    return f"/api/v1/orders/{order.number}/"


def test_a_key_attached_to_a_paid_order_is_recorded_in_its_timeline(
    api, paid_order, laptop, desktop
):
    response = api.patch(_url(paid_order), {"ssh_keys": [laptop.pk, desktop.pk]}, format="json")
    assert response.status_code == 200, response.content
    assert sorted(response.json()["ssh_keys"]) == sorted([laptop.pk, desktop.pk])
    event = paid_order.events.get(reason="SSH keys changed")
    assert event.actor == OrderEvent.Actor.PARTNER
    assert sorted(event.data["ssh_keys"]) == sorted([laptop.fingerprint, desktop.fingerprint])


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({}, 400, "required"),
        ({"ssh_keys": "1"}, 400, "Expected a list"),
        ({"ssh_keys": ["x"]}, 400, "A valid integer is required"),
        ({"ssh_keys": [0]}, 400, "greater than or equal to 1"),
        ({"ssh_keys": [2**70]}, 400, "less than or equal to"),
        ({"ssh_keys": []}, 400, "ssh_key_required"),
        ({"ssh_keys": [999_999]}, 400, "unknown_ssh_key"),
    ],
)
def test_bad_key_lists_are_refused_with_the_reason(api, paid_order, body, status, code):
    response = api.patch(_url(paid_order), body, format="json")
    assert response.status_code == status, response.content
    assert code in response.content.decode()
    assert list(paid_order.ssh_keys.values_list("name", flat=True)) == ["Laptop"]


def test_another_accounts_key_or_order_is_refused(api, outsider_api, paid_order, outsider):
    theirs = ssh_key_add(user=outsider, name="Theirs", public_key=quick_public_key())
    response = api.patch(_url(paid_order), {"ssh_keys": [theirs.pk]}, format="json")
    assert response.status_code == 400 and "unknown_ssh_key" in response.content.decode()
    response = outsider_api.patch(_url(paid_order), {"ssh_keys": [theirs.pk]}, format="json")
    assert response.status_code == 404


def test_the_keys_of_a_finished_rental_no_longer_change(api, paid_order, laptop, desktop):
    Order.objects.filter(pk=paid_order.pk).update(status=S.COMPLETED)
    response = api.patch(_url(paid_order), {"ssh_keys": [desktop.pk]}, format="json")
    assert response.status_code == 409 and "ssh_keys_frozen" in response.content.decode()


def test_a_read_only_key_cannot_change_them(read_only_api, paid_order, laptop):
    response = read_only_api.patch(_url(paid_order), {"ssh_keys": [laptop.pk]}, format="json")
    assert response.status_code == 403


def test_the_order_page_attaches_a_pasted_key_and_unticks_another(
    client, customer, paid_order, laptop
):
    client.force_login(customer)
    page = client.get(f"/fr/account/orders/{paid_order.number}/").content.decode()
    assert "Clés SSH de cette commande" in page and laptop.fingerprint in page
    pasted = quick_public_key()
    response = client.post(f"/fr/account/orders/{paid_order.number}/keys/", {"public_key": pasted})
    assert response.status_code == 302
    assert [key.public_key for key in paid_order.ssh_keys.all()] == [pasted]
    # A private key pasted by mistake is refused with accounts' sentence, never stored.
    response = client.post(
        f"/fr/account/orders/{paid_order.number}/keys/",
        {"public_key": PRIVATE_KEY},
        follow=True,
    )
    assert "clé privée" in response.content.decode()
    assert paid_order.ssh_keys.count() == 1

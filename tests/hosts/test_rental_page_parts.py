"""The order page's parts about the rental on its host, read from the order alone: the
JupyterLab button and its redirect (the owner's, while the term runs), the shared mode's
warning, and the files' download refused with a page, never a 500, when the host is down."""

from datetime import timedelta

import pytest
from django.utils import timezone

from hosts.models import Host, SlotHold
from orders.models import Order, OrderStatus
from tests.anvil import free_port
from tests.factories import HostFactory, OrderFactory

pytestmark = pytest.mark.django_db

S = OrderStatus
TOKEN = "Jt0ken-of-the-rental_42"


@pytest.fixture
def rental(customer, pytorch):
    """An active rental in a container on gpu-1.example.net, its JupyterLab on port 8443."""
    host = HostFactory(ssh_host="gpu-1.example.net", provisioning=Host.Provisioning.SSH)
    order = OrderFactory(user=customer, gpu=host.gpu, environment=pytorch)
    now = timezone.now()
    Order.objects.filter(pk=order.pk).update(
        status=S.ACTIVE,
        activated_at=now,
        ends_at=now + timedelta(days=7),
        access_host="gpu-1.example.net",
        access_port=2201,
        access_user="renter",
        access_mode="container",
        jupyter_port=8443,
        jupyter_token=TOKEN,
        jupyter_scheme="https",
        rental_container="locagpu-lg1",
    )
    order.refresh_from_db()
    return order


def _page(client, order: Order) -> str:
    return client.get(f"/fr/account/orders/{order.number}/").content.decode()


def test_the_owner_opens_jupyterlab_from_the_order_page_and_is_sent_there_with_its_token(
    client, customer, rental
):
    client.force_login(customer)
    page = _page(client, rental)
    assert "Ouvrir JupyterLab" in page
    assert TOKEN not in page  # the button leads to the store, which redirects
    assert "Mode développement partagé" not in page

    response = client.get(f"/fr/account/orders/{rental.number}/jupyter/")
    assert response.status_code == 302
    assert response["Location"].endswith(f".gpu-1.example.net:8443/lab?token={TOKEN}")
    assert response["Cache-Control"] == "no-store"
    assert response["Referrer-Policy"] == "no-referrer"


def test_another_account_gets_a_404_and_a_visitor_the_login(client, outsider, rental):
    url = f"/fr/account/orders/{rental.number}/jupyter/"
    anonymous = client.get(url)
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
    client.force_login(outsider)
    assert client.get(url).status_code == 404
    assert client.get(f"/fr/account/orders/{rental.number}/files.tar").status_code == 404


def test_after_the_term_jupyterlab_is_refused_with_a_page_saying_so(client, customer, rental):
    Order.objects.filter(pk=rental.pk).update(status=S.COMPLETED)
    client.force_login(customer)
    assert "Ouvrir JupyterLab" not in _page(client, rental)
    response = client.get(f"/en/account/orders/{rental.number}/jupyter/")
    assert response.status_code == 410
    assert "The term of this rental has ended" in response.content.decode()
    assert TOKEN not in response.content.decode()


def test_the_token_stays_out_of_the_api(customer, rental):
    from accounts.services import api_key_create
    from tests.api.conftest import key_client

    api = key_client(api_key_create(user=customer, name="backend")[1])
    answer = api.get(f"/api/v1/orders/{rental.number}/")
    assert answer.status_code == 200
    assert TOKEN not in answer.content.decode()


def test_a_rental_in_the_shared_mode_says_so_on_its_page(client, customer, rental):
    Order.objects.filter(pk=rental.pk).update(
        access_mode="shared", jupyter_port=None, jupyter_token="", jupyter_scheme=""
    )
    client.force_login(customer)
    page = _page(client, rental)
    assert "Mode développement partagé" in page and "sans GPU" in page
    assert "Ouvrir JupyterLab" not in page


def test_the_files_of_an_ended_rental_whose_host_is_down_get_a_page_then_the_rate_limit(
    client, customer, rental, settings
):
    settings.RENTAL_FILES_RATE_LIMIT = {"limit": 1, "period": 60}
    settings.PROVISIONING_KEY_FILE = "/nonexistent/key"
    settings.PROVISIONING_KNOWN_HOSTS = "/nonexistent/known_hosts"
    host = Host.objects.get(ssh_host="gpu-1.example.net")
    Host.objects.filter(pk=host.pk).update(ssh_host="127.0.0.1", ssh_port=free_port())
    ended = timezone.now() - timedelta(days=1)
    SlotHold.objects.create(order=rental, host=host, index=0, released_at=ended)
    Order.objects.filter(pk=rental.pk).update(
        status=S.COMPLETED, ends_at=ended, access_revoked_at=ended
    )
    rental.refresh_from_db()
    client.force_login(customer)
    page = _page(client, rental)
    due = ended + timedelta(days=settings.RENTAL_DATA_RETENTION_DAYS)
    assert "Vos fichiers sont conservés jusqu\u2019au" in page
    assert "Télécharger vos fichiers (.tar)" in page
    assert rental.data_purge_due == due

    url = f"/en/account/orders/{rental.number}/files.tar"
    down = client.get(url)
    assert down.status_code == 503
    assert "does not answer right now" in down.content.decode()
    again = client.get(url)
    assert again.status_code == 429


def test_an_ended_rental_on_two_hosts_offers_the_files_of_each(client, customer, rental):
    ended = timezone.now() - timedelta(days=1)
    present = {"container": "exited", "volume": "present"}
    Order.objects.filter(pk=rental.pk).update(
        status=S.COMPLETED,
        ends_at=ended,
        access_revoked_at=ended,
        host_state={"paris-1": present, "paris-2": present},
    )
    client.force_login(customer)
    page = _page(client, rental)
    for host in ("paris-1", "paris-2"):
        assert f"files.tar?host={host}" in page
        assert f"Télécharger vos fichiers de {host} (.tar)" in page


def test_each_rentals_jupyterlab_has_a_host_name_of_its_own(client, customer, rental):
    """Browsers keep cookies per host name, not per port: two rentals' JupyterLabs on one
    host's name would share their login cookies, and a renter's own server on its port would
    receive the others'. Each rental's JupyterLab is therefore under a name of its own."""
    Order.objects.filter(pk=rental.pk).update(rental_container="locagpu-lg1")
    client.force_login(customer)
    response = client.get(f"/fr/account/orders/{rental.number}/jupyter/")
    assert response["Location"] == f"https://locagpu-lg1.gpu-1.example.net:8443/lab?token={TOKEN}"

    # make run's host: a name under localhost (loopback in every browser), never 127.0.0.1,
    # the store's own origin (its session cookie would go to the rental's port).
    Order.objects.filter(pk=rental.pk).update(access_host="127.0.0.1", jupyter_scheme="http")
    response = client.get(f"/fr/account/orders/{rental.number}/jupyter/")
    assert response["Location"] == f"http://locagpu-lg1.localhost:8443/lab?token={TOKEN}"


@pytest.mark.parametrize(
    ("address", "scheme"),
    [("gpu-1.example.net", "http"), ("203.0.113.7", "https"), ("2001:db8::7", "https")],
)
def test_no_jupyterlab_is_offered_in_clear_off_this_machine_nor_without_a_name(
    client, customer, rental, address, scheme
):
    """Plain HTTP off this machine would carry the token in clear; an IP address has no
    name to give each rental."""
    Order.objects.filter(pk=rental.pk).update(
        rental_container="locagpu-lg1", access_host=address, jupyter_scheme=scheme
    )
    client.force_login(customer)
    assert "Ouvrir JupyterLab" not in _page(client, rental)
    response = client.get(f"/fr/account/orders/{rental.number}/jupyter/")
    assert response.status_code == 409
    assert TOKEN not in response.content.decode()

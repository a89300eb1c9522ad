import pytest
from django.conf import settings
from django.core.management import call_command
from django.test import Client

from catalog.models import Environment, GpuModel
from hosts.models import Host
from orders.services import order_create
from tests.cache import cache_empty
from tests.factories import accepted_terms

pytestmark = pytest.mark.django_db


@pytest.fixture
def seeded(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        call_command("seed_catalog", verbosity=0)


def test_a_second_anonymous_visit_costs_no_query(client, seeded, django_assert_num_queries):
    client.get("/fr/")
    with django_assert_num_queries(0):
        assert client.get("/fr/").status_code == 200


def test_an_anonymous_page_is_cached_for_a_few_seconds_by_django_s_per_view_cache(client, seeded):
    for url in ["/fr/", "/en/gpus/h200/", "/fr/gpus/compare/"]:
        response = client.get(url)
        assert response["Cache-Control"] == f"max-age={settings.CATALOG_PAGE_CACHE_SECONDS}"
    assert 0 < settings.CATALOG_PAGE_CACHE_SECONDS <= 30


def test_an_order_shows_at_once_signed_in_and_once_the_anonymous_page_expires(
    client, customer, seeded, django_capture_on_commit_callbacks
):
    """Stock on an anonymous page is at most CATALOG_PAGE_CACHE_SECONDS late (order_create
    checks it again under its lock); a signed-in visitor's page is rendered every time."""
    h200 = GpuModel.objects.get(slug="h200")
    signed_in = Client()
    signed_in.force_login(customer)
    before = client.get("/en/gpus/h200/").content.decode()
    signed_in_before = signed_in.get("/en/gpus/h200/").content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        order_create(
            terms=accepted_terms(),
            user=customer,
            gpu=h200,
            environment=Environment.objects.get(slug="pytorch"),
            quantity=h200.units_total,
            term_days=7,
        )
    assert signed_in.get("/en/gpus/h200/").content.decode() != signed_in_before
    assert client.get("/en/gpus/h200/").content.decode() == before  # cached a few seconds
    cache_empty()  # as the page's lifetime ends
    assert client.get("/en/gpus/h200/").content.decode() != before


def test_a_staff_host_edit_in_the_admin_shows_once_the_anonymous_page_expires(
    client, staff, seeded, django_capture_on_commit_callbacks
):
    """Stock is the slots of active hosts: taking the H200 machine out of service in the
    admin empties its stock, and the pages say so once their few seconds are over."""
    anonymous = Client()
    before = anonymous.get("/fr/").content.decode()
    host = Host.objects.get(gpu__slug="h200")
    form = {
        "name": host.name,
        "gpu": host.gpu_id,
        "gpu_count": host.gpu_count,
        "region": host.region,
        "ssh_host": host.ssh_host,
        "ssh_port": host.ssh_port,
        "provisioning": host.provisioning,
        "provisioning_user": host.provisioning_user,
        "holds-TOTAL_FORMS": 0,
        "holds-INITIAL_FORMS": 0,
        "_save": "Save",
    }
    client.force_login(staff)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/admin/hosts/host/{host.pk}/change/", form)
    assert response.status_code == 302, response.content.decode()[:3000]
    assert GpuModel.objects.get(slug="h200").units_total == 0
    cache_empty()  # as the page's lifetime ends
    assert anonymous.get("/fr/").content.decode() != before


def test_a_one_off_message_is_never_cached_for_other_visitors(client, customer, seeded):
    client.force_login(customer)
    client.post("/en/accounts/logout/")  # leaves "You are logged out." for this visitor
    own = client.get("/en/").content.decode()
    assert "logged out" in own
    assert "logged out" not in Client().get("/en/").content.decode()


def test_logged_in_pages_are_rendered_for_their_visitor(client, customer, seeded):
    Client().get("/en/")  # the anonymous version is now cached
    client.force_login(customer)
    assert "Log out" in client.get("/en/").content.decode()

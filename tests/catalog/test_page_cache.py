import pytest
from django.core.management import call_command
from django.test import Client

from catalog.models import Environment, GpuModel
from orders.services import order_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def seeded(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        call_command("seed_catalog", verbosity=0)


def test_a_second_anonymous_visit_costs_no_query(client, seeded, django_assert_num_queries):
    client.get("/fr/")
    with django_assert_num_queries(0):
        assert client.get("/fr/").status_code == 200


def test_an_order_shows_on_the_cached_pages_at_once(
    client, customer, seeded, django_capture_on_commit_callbacks
):
    h200 = GpuModel.objects.get(slug="h200")
    before = client.get("/en/gpus/h200/").content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        order_create(
            user=customer,
            gpu=h200,
            environment=Environment.objects.get(slug="pytorch"),
            quantity=h200.units_total,
            term_days=7,
        )
    after = client.get("/en/gpus/h200/").content.decode()
    assert after != before
    assert after == client.get("/en/gpus/h200/").content.decode()


def test_a_staff_stock_edit_in_the_admin_list_shows_at_once(
    client, staff, seeded, django_capture_on_commit_callbacks
):
    anonymous = Client()
    before = anonymous.get("/fr/").content.decode()
    gpus = list(GpuModel.objects.order_by("display_order", "name"))
    form = {
        "form-TOTAL_FORMS": len(gpus),
        "form-INITIAL_FORMS": len(gpus),
        "form-MIN_NUM_FORMS": 0,
        "form-MAX_NUM_FORMS": 1000,
        "_save": "Save",
    }
    for index, gpu in enumerate(gpus):
        form |= {
            f"form-{index}-id": gpu.pk,
            f"form-{index}-units_total": 0 if gpu.slug == "h200" else gpu.units_total,
            f"form-{index}-is_active": "on",
            f"form-{index}-display_order": gpu.display_order,
        }
    client.force_login(staff)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/admin/catalog/gpumodel/", form)
    assert response.status_code == 302, response.content.decode()[:2000]
    assert GpuModel.objects.get(slug="h200").units_total == 0
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

import pytest

from hosts.models import Host
from orders.models import Order, OrderStatus
from orders.transitions import order_transition
from tests.factories import HostFactory

pytestmark = pytest.mark.django_db


def test_an_order_shows_its_slots_by_host_and_keeps_them_once_ended(api, order_body):
    created = api.post("/api/v1/orders/", order_body, format="json").json()
    assert created["slots"] == [{"host": Host.objects.get().name, "gpus": [0, 1]}]
    assert created["access"] is None

    order = api.get(f"/api/v1/orders/{created['number']}/").json()
    assert order["slots"] == created["slots"]

    stored = Order.objects.get(number=created["number"])
    order_transition(order=stored, to=OrderStatus.CANCELLED, actor="system")
    ended = api.get(f"/api/v1/orders/{created['number']}/").json()
    assert ended["slots"] == created["slots"]


def test_a_gpu_says_from_which_machine_across_its_hosts(api, gpu):
    HostFactory(gpu=gpu, vcpus=32, ram_gb=256, disk_gb=2000, region="Frankfurt")
    machine = api.get("/api/v1/gpus/h100-sxm/").json()["machine"]
    assert machine == {"vcpus": 32, "ram_gb": 256, "disk_gb": 2000, "region": "Frankfurt, Paris"}


def test_the_gpu_page_says_from_which_machine_in_french(client, gpu):
    HostFactory(gpu=gpu, vcpus=32, ram_gb=256, disk_gb=2000, region="Paris")
    page = client.get("/fr/gpus/h100-sxm/").content.decode()
    assert "À partir de 32 vCPU, 256 Go de RAM, 2 To NVMe, région Paris" in page

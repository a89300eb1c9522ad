from datetime import timedelta

import pytest

from hosts.provisioning.services import host_account
from orders.models import OrderStatus
from tests.factories import OrderFactory

pytestmark = pytest.mark.django_db
S = OrderStatus


def _act(client, order, action, data):
    return client.post(f"/admin/orders/order/{order.pk}/action/{action}/", data)


def test_staff_finds_an_order_by_number_or_email(client, staff, customer):
    order = OrderFactory(user=customer)
    OrderFactory()
    client.force_login(staff)
    by_number = client.get("/admin/orders/order/", {"q": order.number}).content.decode()
    by_email = client.get("/admin/orders/order/", {"q": customer.email}).content.decode()
    assert order.number in by_number and order.number in by_email
    assert client.get(f"/admin/orders/order/{order.pk}/change/").status_code == 200


def test_staff_provision_and_activate_leave_events_naming_them(client, staff, customer):
    order = OrderFactory(user=customer, status=S.PAID)
    client.force_login(customer)
    assert "access-host" not in client.get(f"/en/account/orders/{order.number}/").content.decode()

    client.force_login(staff)
    assert _act(client, order, "provision", {"reason": ""}).status_code == 302
    order.refresh_from_db()
    assert order.status == S.PROVISIONING
    client.force_login(customer)
    assert (
        "gpu-17.example.net"
        not in client.get(f"/en/account/orders/{order.number}/").content.decode()
    )

    client.force_login(staff)
    _act(
        client,
        order,
        "activate",
        {
            "host": "gpu-17.example.net",
            "port": 2222,
            "user": "ada",
            "notes": "Two H100 on one node.",
        },
    )
    order.refresh_from_db()
    assert order.status == S.ACTIVE
    assert order.ends_at - order.activated_at == timedelta(days=order.term_days)
    events = list(order.events.order_by("id"))
    assert [(e.new_status, e.actor, e.actor_user) for e in events] == [
        (S.PROVISIONING, "staff", staff),
        (S.ACTIVE, "staff", staff),
    ]

    client.force_login(customer)
    page = client.get(f"/en/account/orders/{order.number}/").content.decode()
    assert "gpu-17.example.net" in page and "ssh -p 2222 ada@gpu-17.example.net" in page


def test_refund_needs_a_reason(client, staff):
    order = OrderFactory(status=S.PAID)
    client.force_login(staff)
    response = _act(client, order, "refund", {"reason": ""})
    assert response.status_code == 200
    order.refresh_from_db()
    assert order.status == S.PAID
    _act(client, order, "refund", {"reason": "GPU failure on delivery"})
    order.refresh_from_db()
    assert order.status == S.REFUNDED
    assert order.events.get().reason == "GPU failure on delivery"


def test_an_action_outside_the_table_changes_nothing(client, staff):
    order = OrderFactory(status=S.AWAITING_PAYMENT)
    client.force_login(staff)
    _act(client, order, "activate", {"host": "h", "port": 22, "user": "u"})
    order.refresh_from_db()
    assert order.status == S.AWAITING_PAYMENT
    assert not order.events.exists()


def test_customers_cannot_reach_the_admin_actions(client, customer):
    order = OrderFactory(status=S.PAID)
    client.force_login(customer)
    response = _act(client, order, "refund", {"reason": "please"})
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
    order.refresh_from_db()
    assert order.status == S.PAID


def test_the_activation_form_starts_from_the_host_the_order_holds(client, staff, gpu):
    order = OrderFactory(gpu=gpu, quantity=2, status=S.PROVISIONING)
    host = order.slot_holds.get(index=0).host
    client.force_login(staff)
    form = client.get(f"/admin/orders/order/{order.pk}/action/activate/").content.decode()
    assert f'value="{host.ssh_host}"' in form
    assert f'value="{host.ssh_port}"' in form
    assert f'value="{host_account(order=order)}"' in form

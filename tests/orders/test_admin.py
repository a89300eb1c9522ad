import re
from datetime import timedelta

import pytest
from django.utils import timezone

from hosts.models import Host
from hosts.provisioning.services import host_account
from orders.extensions import extension_create
from orders.models import OrderEvent, OrderStatus
from orders.stock import order_paying_transition
from tests.factories import OrderFactory, accepted_terms

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


def _rental_with_extensions(customer, gpu):
    """An active 7-day rental of 2 GPUs (1 008 €), a paid 7-day extension (1 008 €) and one
    of 3 days (480 €) awaiting payment."""
    now = timezone.now()
    rental = OrderFactory(
        user=customer,
        gpu=gpu,
        quantity=2,
        status=S.ACTIVE,
        activated_at=now - timedelta(days=1),
        ends_at=now + timedelta(days=6),
    )
    paid = extension_create(rental=rental, user=customer, term_days=7, terms=accepted_terms())
    for step in (S.CONFIRMING, S.PAID):
        assert order_paying_transition(order=paid, to=step, actor=OrderEvent.Actor.SYSTEM)
    unpaid = extension_create(rental=rental, user=customer, term_days=3, terms=accepted_terms())
    return rental, paid, unpaid


def test_a_rentals_page_links_its_extensions_and_totals_the_paid_ones(client, staff, customer, gpu):
    rental, paid, unpaid = _rental_with_extensions(customer, gpu)
    client.force_login(staff)
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "en"
    page = client.get(f"/admin/orders/order/{rental.pk}/change/").content.decode()
    for extension in (paid, unpaid):
        assert f'href="/admin/orders/order/{extension.pk}/change/">{extension.number}</a>' in page
    totals = re.search(r'data-testid="rental-totals">(.*?)</', page, re.S).group(1)
    assert "14 days" in totals and "€2,016.00" in totals  # the term and the paid extension
    unpaid_line = re.search(r'data-testid="rental-unpaid">(.*?)</', page, re.S).group(1)
    assert "3 days" in unpaid_line and "€480.00" in unpaid_line

    extension_page = client.get(f"/admin/orders/order/{paid.pk}/change/").content.decode()
    assert f'href="/admin/orders/order/{rental.pk}/change/">{rental.number}</a>' in extension_page


def test_slots_are_named_by_host_and_gpu_index(client, staff, gpu):
    host = gpu.hosts.get()
    Host.objects.filter(pk=host.pk).update(name="h100-sxm-1")
    order = OrderFactory(gpu=gpu, quantity=2, status=S.PAID)
    client.force_login(staff)
    page = client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert "h100-sxm-1 · GPU 0" in page and "h100-sxm-1 · GPU 1" in page
    assert f"{host.pk}:0" not in page
    host_page = client.get(f"/admin/hosts/host/{host.pk}/change/").content.decode()
    assert "h100-sxm-1 · GPU 0" in host_page and f"{host.pk}:1" not in host_page

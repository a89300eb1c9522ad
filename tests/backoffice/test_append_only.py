"""Orders, their events, invoices, transfers, claims, refunds and legal invoices are
append-only in the admin: no delete, one by one or in bulk, even for a superuser, and no change
of their recorded fields. Every registered admin of these models is checked, with its inlines."""

import pytest
from django.contrib import admin
from django.test import RequestFactory
from django.urls import reverse

from billing.models import BillingDocument
from orders.models import Order, OrderEvent
from payments.models import Invoice, PaymentClaim, Transfer
from payments.refunds.models import Refund

pytestmark = pytest.mark.django_db

APPEND_ONLY = (Order, OrderEvent, Invoice, Transfer, PaymentClaim, Refund, BillingDocument)


def _admins():
    return [
        (model, model_admin)
        for model, model_admin in admin.site._registry.items()
        if model in APPEND_ONLY
    ]


def _url(model, view: str, *args) -> str:
    opts = model._meta
    return reverse(f"admin:{opts.app_label}_{opts.model_name}_{view}", args=args)


def test_every_append_only_model_has_an_admin():
    assert {model for model, _admin in _admins()} == set(APPEND_ONLY)


@pytest.mark.parametrize("model", APPEND_ONLY, ids=lambda model: model.__name__)
def test_a_superuser_cannot_delete_a_record(client, staff, records, model):
    record = records[model]
    request = RequestFactory().get("/admin/")
    request.user = staff
    client.force_login(staff)
    for _model, model_admin in (pair for pair in _admins() if pair[0] is model):
        assert not model_admin.has_delete_permission(request, record)
        assert "delete_selected" not in model_admin.get_actions(request)
        for inline in model_admin.get_inline_instances(request, record):
            assert not (inline.can_delete and inline.has_delete_permission(request, record))

    assert client.get(_url(model, "delete", record.pk)).status_code == 403
    assert client.post(_url(model, "delete", record.pk), {"post": "yes"}).status_code == 403
    changelist = _url(model, "changelist")
    assert b'value="delete_selected"' not in client.get(changelist).content
    client.post(
        changelist, {"action": "delete_selected", "_selected_action": [record.pk], "post": "yes"}
    )
    assert model.objects.filter(pk=record.pk).exists()


@pytest.mark.parametrize("model", APPEND_ONLY, ids=lambda model: model.__name__)
def test_a_recorded_field_cannot_be_changed(client, staff, records, model):
    record = records[model]
    request = RequestFactory().get("/admin/")
    request.user = staff
    model_admin = admin.site._registry[model]
    editable = {
        field.name
        for field in (*model._meta.concrete_fields, *model._meta.many_to_many)
        if field.editable
    }
    frozen = editable - set(model_admin.editable_after_save)
    assert frozen <= set(model_admin.get_readonly_fields(request, record))


def test_posting_a_changed_amount_changes_nothing(client, staff, records):
    invoice = records[Invoice]
    client.force_login(staff)
    client.post(
        _url(Invoice, "change", invoice.pk),
        {"amount_due": "1", "review": "on", "transfers-TOTAL_FORMS": "0"},
    )
    saved = Invoice.objects.get(pk=invoice.pk)
    assert saved.amount_due == invoice.amount_due

"""A bad form value is a 400, never a 500; payment records cannot be deleted from the admin."""

import pytest

from accounts.models import ApiKey
from accounts.services import api_key_create
from payments.models import Invoice, PaymentClaim, Transfer
from tests.payments.helpers import order_with_invoice, transfer_recorded

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("key_id", ["¹", "²³", "abc", "", "-1", "1" * 40])
def test_revoking_a_key_with_a_key_id_that_is_not_a_number_is_a_400(client, customer, key_id):
    api_key, _raw = api_key_create(user=customer, name="Laptop")
    client.force_login(customer)
    response = client.post("/en/account/api-keys/", {"action": "revoke", "key_id": key_id})
    assert response.status_code == 400
    assert ApiKey.objects.get(pk=api_key.pk).revoked_at is None


@pytest.mark.parametrize(
    "path",
    [
        "/fr/account/orders/LG%00/",
        "/fr/account/orders/LG%00/extend/",
        "/fr/account/orders/LG%00/payment/",
        "/fr/account/invoices/F-2026%00/",
        "/fr/account/invoices/F-2026%00/pdf/",
    ],
)
def test_a_number_with_a_nul_byte_is_not_found(client, customer, path):
    # PostgreSQL refuses NUL in a string: the number must never reach the query.
    client.force_login(customer)
    assert client.get(path).status_code == 404
    assert client.post(path, {"term_days": 7}).status_code == 404


@pytest.fixture
def payment_records(usdc, customer):
    invoice = order_with_invoice(usdc, user=customer)
    transfer = transfer_recorded(invoice)
    claim = PaymentClaim.objects.create(order=invoice.order, invoice=invoice, user=customer)
    return {"invoice": invoice, "transfer": transfer, "paymentclaim": claim}


@pytest.mark.parametrize("model", ["invoice", "transfer", "paymentclaim"])
def test_a_superuser_cannot_delete_payment_records_one_by_one(
    client, staff, payment_records, model
):
    record = payment_records[model]
    client.force_login(staff)
    url = f"/admin/payments/{model}/{record.pk}/delete/"
    assert client.get(url).status_code == 403
    assert client.post(url, {"post": "yes"}).status_code == 403
    assert type(record).objects.filter(pk=record.pk).exists()


@pytest.mark.parametrize("model", ["invoice", "transfer", "paymentclaim"])
def test_a_superuser_cannot_delete_payment_records_in_bulk(client, staff, payment_records, model):
    record = payment_records[model]
    client.force_login(staff)
    changelist = f"/admin/payments/{model}/"
    assert b'value="delete_selected"' not in client.get(changelist).content
    client.post(
        changelist,
        {"action": "delete_selected", "_selected_action": [record.pk], "post": "yes"},
    )
    assert type(record).objects.filter(pk=record.pk).exists()
    assert Invoice.objects.count() == Transfer.objects.count() == PaymentClaim.objects.count() == 1

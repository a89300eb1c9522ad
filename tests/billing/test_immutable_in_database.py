"""An issued invoice cannot be changed nor deleted even by raw SQL: a trigger refuses it."""

import pytest
from django.db import DatabaseError, connection, transaction

from billing.models import BillingDocument
from tests.billing.helpers import order_paid


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE billing_billingdocument SET total = 1 WHERE id = %s",
        "DELETE FROM billing_billingdocument WHERE id = %s",
    ],
    ids=["update", "delete"],
)
def test_raw_sql_cannot_change_nor_delete_an_issued_invoice(customer, usdc, worker_runs, statement):
    with worker_runs():
        order = order_paid(usdc, user=customer)
    invoice = BillingDocument.objects.get(order=order)
    refused = pytest.raises(DatabaseError, match="never changed nor deleted")
    with refused, transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(statement, [invoice.pk])
    assert BillingDocument.objects.get(pk=invoice.pk).total == invoice.total


def test_the_service_period_left_open_is_written_once_and_never_again(customer, usdc, worker_runs):
    with worker_runs():
        order = order_paid(usdc, user=customer)
    documents = BillingDocument.objects.filter(order=order)
    invoice = documents.get()
    if invoice.service_start is None:
        start = invoice.issued_at.date()
        assert documents.service_period_fix(start=start, end=start) == 1
    refused = pytest.raises(DatabaseError, match="never changed nor deleted")
    with refused, transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "UPDATE billing_billingdocument SET service_end = service_end + 1 WHERE id = %s",
            [invoice.pk],
        )

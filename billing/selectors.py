from datetime import date

from django.db.models import QuerySet

from accounts.models import User
from billing.models import BillingDocument


def billing_documents_for_user(*, user: User) -> QuerySet[BillingDocument]:
    return BillingDocument.objects.filter(user=user).select_related("order", "credited_invoice")


def billing_document_for_user(*, user: User, number: str) -> BillingDocument | None:
    return billing_documents_for_user(user=user).filter(number=number).first()


def billing_documents_issued(*, start: date, end: date) -> QuerySet[BillingDocument]:
    """Documents issued from `start` to `end` (both included, store time), in number order."""
    return (
        BillingDocument.objects.filter(issued_at__date__gte=start, issued_at__date__lte=end)
        .select_related("order", "credited_invoice")
        .order_by("kind", "year", "sequence_number")
    )

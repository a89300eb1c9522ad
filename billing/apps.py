from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class BillingConfig(AppConfig):
    name = "billing"
    verbose_name = _("Invoices")

    def ready(self) -> None:
        _watch_billing_rows()


def _watch_billing_rows() -> None:
    """An order's invoice and credit note change its pages (rental.changes)."""
    from billing.models import BillingDocument
    from orders.versions import order_account_tag
    from rental import changes

    changes.watch(BillingDocument, order_account_tag(changes.column(BillingDocument, "order")))

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PaymentsConfig(AppConfig):
    name = "payments"
    verbose_name = _("Payments")

    def ready(self) -> None:
        _watch_payment_rows()


def _watch_payment_rows() -> None:
    """What changes an order's pages (rental.changes): the rows of its payment, its account's;
    the head of a chain while a transfer on it confirms; the settings of chains and assets."""
    from orders.models import Order
    from orders.versions import order_account_tag, table
    from payments.models import Asset, Chain, Invoice, PaymentClaim, Rate, ScanCursor, Transfer
    from payments.refunds.models import Refund
    from rental import changes

    for model in (Invoice, Refund, PaymentClaim):
        changes.watch(model, order_account_tag(changes.column(model, "order")))
    changes.watch(
        Transfer,
        changes.account_tag_sql(
            f"SELECT o.user_id FROM {table(Invoice)} i JOIN {table(Order)} o ON o.id = i.order_id "
            f"WHERE i.id = {changes.column(Transfer, 'invoice')}"
        ),
    )
    changes.watch(ScanCursor, changes.chain_tag_sql(changes.column(ScanCursor, "chain")))
    changes.watch(Chain, changes.GLOBAL_TAG_SQL)
    # The rates refresh writes when it last checked every minute: no page shows it.
    changes.watch(Asset, changes.GLOBAL_TAG_SQL, unseen=("rate_checked_at",))
    # A new rate, or one whose validity was extended, changes what an unpaid order offers.
    # Rates are history, never corrected in place (payments.admin.RateAdmin).
    changes.watch(Rate, changes.RATES_TAG_SQL)

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PaymentsConfig(AppConfig):
    name = "payments"
    verbose_name = _("Payments")

    def ready(self) -> None:
        # orders and rental ask, payments answers: neither imports payments.
        from orders import hooks
        from payments.admin import order_admin_payment_section
        from payments.health import chains_health
        from payments.notifications import order_payment_email_section
        from payments.refunds.services import order_refund_owed_record
        from payments.refunds.views import REFUND_SECTION, order_refund_section
        from payments.selectors import (
            order_funds_lost_hold,
            order_has_received_funds,
            order_payment_watch_passed,
        )
        from payments.services import order_invoices_close
        from payments.versions import order_payment_version_parts
        from payments.views import PAYMENT_SECTION, order_payment_section
        from rental.health import readiness_checks

        hooks.expiry_checks.register("payments", order_payment_watch_passed)
        hooks.provisioning_holds.register("payments", order_funds_lost_hold)
        hooks.funds_received_checks.register("payments", order_has_received_funds)
        hooks.page_sections.register(PAYMENT_SECTION, order_payment_section)
        hooks.page_sections.register(REFUND_SECTION, order_refund_section)
        hooks.refund_records.register("payments", order_refund_owed_record)
        hooks.cancel_records.register("payments", order_invoices_close)
        hooks.admin_sections.register("payments", order_admin_payment_section)
        hooks.email_sections.register(PAYMENT_SECTION, order_payment_email_section)
        hooks.order_version_parts.register("payments", order_payment_version_parts)
        readiness_checks.register("chain", chains_health)
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

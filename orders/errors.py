"""The refusals of the orders domain, shared by its services, its stock rule and extensions."""

from django.utils.translation import gettext_noop


class OrderError(Exception):
    """A request the store refuses, with a message for the customer and the field at fault."""

    def __init__(self, message, *, field: str | None = None, code: str = "invalid"):
        super().__init__(str(message))
        self.message, self.field, self.code = message, field, code


class UnitsGone(Exception):
    """The order released its slots (it expired) and other orders took them since."""

    # The timeline's reason when money arrives for it (payments.watcher.settlement flags it as
    # owed).
    reason = gettext_noop("late payment but the units are no longer free")

    def __init__(self, order):
        super().__init__(f"The units of order {order.number} are no longer free.")
        self.order = order

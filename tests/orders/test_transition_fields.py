"""order_transition's `fields` write columns beside the move it asks for, never the move's own:
a caller naming `status` (or `updated_at`) is refused before anything is written."""

import pytest

from orders.models import Order, OrderEvent, OrderStatus
from orders.transitions import order_transition
from tests.factories import OrderFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("column", ["status", "updated_at"])
def test_fields_naming_the_transition_s_own_columns_are_refused(column):
    order = OrderFactory(status=OrderStatus.AWAITING_PAYMENT)
    value = OrderStatus.ACTIVE if column == "status" else order.updated_at
    with pytest.raises(ValueError, match=column):
        order_transition(
            order=order,
            to=OrderStatus.CANCELLED,
            actor=OrderEvent.Actor.SYSTEM,
            fields={column: value},
        )
    assert Order.objects.get(pk=order.pk).status == OrderStatus.AWAITING_PAYMENT
    assert not order.events.exists()


def test_other_fields_are_written_with_the_move():
    order = OrderFactory(status=OrderStatus.AWAITING_PAYMENT)
    assert order_transition(
        order=order,
        to=OrderStatus.CANCELLED,
        actor=OrderEvent.Actor.SYSTEM,
        fields={"access_user": "kept"},
    )
    stored = Order.objects.get(pk=order.pk)
    assert (stored.status, stored.access_user) == (OrderStatus.CANCELLED, "kept")

"""Staff moving a rental to another host while its customer extends it (« Prolonger »): both
lock the rental, then its GPU model's row, so neither waits for what the other holds."""

import pytest

from hosts.provisioning.services import order_host_move
from orders.extensions import extension_create
from orders.models import Order, OrderStatus
from tests.factories import HostFactory, OrderFactory, accepted_terms
from tests.payments.test_lock_order import race

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("leader", ["move", "extension"])
def test_moving_a_rental_while_it_is_extended_never_deadlocks(customer, staff, gpu, leader):
    rental = OrderFactory(user=customer, gpu=gpu, quantity=2, status=OrderStatus.PAID)
    spare = HostFactory(gpu=gpu, gpu_count=2)

    outcome = race(
        leader=leader,
        move=lambda: order_host_move(order=rental, host=spare, actor_user=staff),
        extension=lambda: extension_create(
            rental=rental, user=customer, term_days=3, terms=accepted_terms()
        ),
    )

    assert outcome["move"] is None, outcome
    assert isinstance(outcome["extension"], Order), outcome
    assert set(rental.slot_holds.filter(released_at__isnull=True).values_list("host", "index")) == {
        (spare.pk, 0),
        (spare.pk, 1),
    }
    assert rental.extensions.get().term_days == 3

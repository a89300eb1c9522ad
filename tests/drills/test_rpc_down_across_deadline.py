"""Drill 5: the chain's RPC is down across an order's payment deadline, and the customer
paid before it.

The beat keeps scanning (and failing) and keeps trying to expire orders through the outage,
while the chain's clock runs well past the deadline and its safety margin; another customer
tries to buy the same GPUs meanwhile. The watcher has not read the blocks before the deadline,
so the order must neither expire nor lose its units; once the RPC is back, it is paid, on time.
"""

from datetime import timedelta

import pytest

from orders.models import OrderStatus
from orders.services import OrderError, order_create, orders_expire
from orders.stock import gpu_available_units
from payments.models import ScanCursor
from payments.services import invoice_issue
from tests.anvil import free_port
from tests.factories import EnvironmentFactory, GpuModelFactory, UserFactory, accepted_terms
from tests.payments.helpers import deadline_at, reload
from tests.payments.proxy import FlakyRpcProxy

pytestmark = pytest.mark.chain

MARGIN = timedelta(seconds=10)
OUTAGE_BLOCKS = 12
SECONDS_PER_BLOCK = 3  # the outage spans 36 s of chain time: past the deadline and margin


@pytest.mark.parametrize("outage", ["unreachable", "throttled"])
def test_rpc_down_across_the_deadline_keeps_the_units_and_pays_the_order_in_time(
    devnet, settings, outage
):
    settings.PAYMENTS_RPC_RETRIES = 0
    settings.PAYMENTS_EXPIRY_SCAN_MARGIN = MARGIN
    gpu = GpuModelFactory(units_total=4)
    pytorch = EnvironmentFactory()
    order = order_create(
        terms=accepted_terms(),
        user=UserFactory(),
        gpu=gpu,
        environment=pytorch,
        quantity=4,
        term_days=7,
    )
    invoice = invoice_issue(order=order, asset=devnet.usdc)
    devnet.scan()
    other_customer = UserFactory()

    with FlakyRpcProxy(devnet.node.url) as proxy:
        if outage == "unreachable":
            devnet.rpc_url_use(f"http://127.0.0.1:{free_port()}")
        else:
            devnet.rpc_url_use(proxy.url)
            proxy.throttle = 10**6
        paid = devnet.receipt(devnet.pay_token(invoice.deposit_address, int(invoice.amount_due)))
        deadline = devnet.block_time(paid["blockNumber"]) + timedelta(seconds=1)
        deadline_at(invoice, deadline)
        for _block in range(OUTAGE_BLOCKS):
            devnet.mine_later(SECONDS_PER_BLOCK)
            assert devnet.scan().error  # the beat goes on during the outage
            assert orders_expire(now=devnet.block_time()) == 0
            with pytest.raises(OrderError) as refusal:
                order_create(
                    terms=accepted_terms(),
                    user=other_customer,
                    gpu=gpu,
                    environment=pytorch,
                    quantity=1,
                    term_days=7,
                )
            assert refusal.value.code == "not_enough_units"
        assert devnet.block_time() > deadline + MARGIN

        devnet.rpc_url_use(proxy.url)
        proxy.throttle = 0
        report = devnet.scan()

    assert not report.error
    assert ScanCursor.objects.get(chain=devnet.chain).block_number == devnet.head()
    invoice, order = reload(invoice)
    assert order.status == OrderStatus.PAID
    assert not invoice.flags  # on time: the block was mined before the deadline
    assert orders_expire(now=devnet.block_time()) == 0
    assert gpu_available_units(gpu=gpu) == 0

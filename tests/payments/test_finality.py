"""One finality rule, by block tag or by confirmation count, for crediting and for refunds."""

import pytest

from orders.models import OrderStatus
from payments.devnet import devnet_register, token_deploy
from payments.models import Chain, Transfer
from payments.presets import PRESETS
from payments.watcher.finality import block_is_final, final_height
from payments.watcher.rpc import RpcClient
from tests.anvil import Devnet, anvil_start, anvil_stop
from tests.payments.helpers import order_with_invoice, reload

pytestmark = pytest.mark.chain
# anvil with two slots an epoch: `safe` is the head - 2, `finalized` the head - 4.
SLOTS = 2


@pytest.fixture(scope="module")
def epoch_anvil():
    node = anvil_start(slots_in_an_epoch=SLOTS)
    try:
        node.usdc = token_deploy(node.w3)
        yield node
    finally:
        anvil_stop(node)


@pytest.fixture
def tagged_devnet(db, epoch_anvil, celery_eager):
    chain = devnet_register(
        rpc_url=epoch_anvil.url, token_address=epoch_anvil.usdc, confirmations=1
    )
    Chain.objects.filter(pk=chain.pk).update(finality_tag=Chain.FinalityTag.FINALIZED)
    chain.refresh_from_db()
    return Devnet(epoch_anvil, chain)


def test_a_transfer_is_credited_only_once_its_block_is_at_or_below_the_finalized_tag(
    tagged_devnet,
):
    devnet = tagged_devnet
    invoice = order_with_invoice(devnet.usdc)
    tx = devnet.pay_token(invoice.deposit_address, int(invoice.amount_due))
    block = devnet.receipt(tx)["blockNumber"]
    devnet.mine(2 * SLOTS - 1)  # finalized: one block short of the payment's

    devnet.scan()
    # One confirmation would do by count; the tag has not reached the block.
    assert reload(invoice)[1].status == OrderStatus.CONFIRMING
    assert invoice.transfers.get().status == Transfer.Status.SEEN

    devnet.mine(1)
    devnet.scan()
    assert devnet.w3.eth.get_block("finalized")["number"] == block
    assert reload(invoice)[1].status == OrderStatus.PAID


def test_the_safe_tag_credits_sooner_than_the_finalized_one(tagged_devnet):
    devnet = tagged_devnet
    devnet.chain.finality_tag = Chain.FinalityTag.SAFE
    devnet.chain.save(update_fields=["finality_tag"])
    invoice = order_with_invoice(devnet.usdc)
    devnet.pay_token(invoice.deposit_address, int(invoice.amount_due))
    devnet.mine(SLOTS - 1)
    devnet.scan()
    assert reload(invoice)[1].status == OrderStatus.CONFIRMING
    devnet.mine(1)
    devnet.scan()
    assert reload(invoice)[1].status == OrderStatus.PAID


def test_refunds_and_the_scanner_share_the_rule(tagged_devnet):
    devnet = tagged_devnet
    chain = Chain.objects.get(pk=devnet.chain.pk)
    client = RpcClient(chain.rpc_url)
    head = devnet.head()
    block = devnet.w3.eth.get_block(head - 2 * SLOTS)
    assert final_height(chain=chain, client=client) == head - 2 * SLOTS
    assert block_is_final(
        chain=chain,
        client=client,
        block_number=block["number"],
        block_hash=block["hash"].to_0x_hex(),
    )
    later = devnet.w3.eth.get_block(head - 2 * SLOTS + 1)
    assert not block_is_final(
        chain=chain,
        client=client,
        block_number=later["number"],
        block_hash=later["hash"].to_0x_hex(),
    )
    # Without a tag, the count rules: the head itself is one confirmation deep.
    chain.finality_tag = ""
    assert final_height(chain=chain, client=client) == head


@pytest.mark.parametrize("key", sorted(PRESETS))
def test_each_preset_network_credits_at_its_own_finality_rule(db, celery_eager, key):
    """anvil answering each preset's chain id, the preset's tag deciding when a payment counts."""
    preset = PRESETS[key]
    node = anvil_start(chain_id=preset.chain_id, slots_in_an_epoch=SLOTS)
    try:
        node.usdc = token_deploy(node.w3)
        chain = devnet_register(rpc_url=node.url, token_address=node.usdc, confirmations=1)
        Chain.objects.filter(pk=chain.pk).update(
            chain_id=preset.chain_id, finality_tag=preset.finality_tag
        )
        chain.refresh_from_db()
        devnet = Devnet(node, chain)
        assert RpcClient(chain.rpc_url).chain_id() == preset.chain_id
        # anvil: `safe` is the head - one epoch, `finalized` the head - two.
        depth = {"safe": SLOTS, "finalized": 2 * SLOTS}[preset.finality_tag]
        invoice = order_with_invoice(devnet.usdc)
        devnet.pay_token(invoice.deposit_address, int(invoice.amount_due))
        devnet.mine(depth - 1)
        devnet.scan()
        assert reload(invoice)[1].status == OrderStatus.CONFIRMING
        devnet.mine(1)
        devnet.scan()
        assert reload(invoice)[1].status == OrderStatus.PAID
    finally:
        anvil_stop(node)

"""The watcher's RPC client on its own: what it retries, what it gives up on, what it refuses.

A real HTTP proxy in front of anvil misbehaves on purpose (tests/payments/proxy.py); the
scan-level rules (range halving, 429 during a scan, a node down for 20 blocks) are proven in
test_watcher.py and tests/drills/test_rpc_down.py.
"""

import pytest
from eth_abi import encode

from payments.models import ScanCursor, ScannedBlock
from payments.watcher.rpc import (
    TRANSFER_TOPIC,
    InvalidAnswer,
    Log,
    RangeTooLarge,
    RateLimited,
    RpcClient,
    RpcUnavailable,
    decode_transfer_log,
)
from tests.anvil import free_port
from tests.payments.helpers import order_with_invoice
from tests.payments.proxy import FlakyRpcProxy

pytestmark = pytest.mark.chain


def _client(url: str, *, retries: int = 3) -> RpcClient:
    return RpcClient(url, retries=retries, backoff=0.001)


def test_a_dropped_connection_a_5xx_and_a_429_are_retried_until_the_node_answers(devnet):
    with FlakyRpcProxy(devnet.node.url) as proxy:
        proxy.failures = ["drop", 502, 429]
        client = _client(proxy.url)
        head = client.block_number()
        blocks = client.blocks([head - 1, head])  # a batch goes through the same rule
    assert head == devnet.head() and [b.number for b in blocks] == [head - 1, head]
    assert client.calls == {"eth_blockNumber": 1, "eth_getBlockByNumber": 2}
    assert client.http_requests == proxy.requests == 5  # 3 failed, then 1 + 1 answered


@pytest.mark.parametrize(
    ("failure", "error"), [("drop", RpcUnavailable), (503, RpcUnavailable), (429, RateLimited)]
)
def test_retries_stop_after_the_configured_number_with_a_clear_error(devnet, failure, error):
    with FlakyRpcProxy(devnet.node.url) as proxy:
        proxy.failures = [failure] * 10
        client = _client(proxy.url, retries=2)
        with pytest.raises(error):
            client.block_number()
    assert proxy.requests == client.http_requests == 3


def test_a_node_that_refuses_connections_is_unavailable_after_the_retries(db):
    client = _client(f"http://127.0.0.1:{free_port()}", retries=1)
    with pytest.raises(RpcUnavailable):
        client.block_number()
    assert client.http_requests == 2


def test_the_node_saying_block_range_too_large_is_range_too_large(devnet):
    head = devnet.head()
    with FlakyRpcProxy(devnet.node.url, max_log_range=2) as proxy:
        client = _client(proxy.url)
        with pytest.raises(RangeTooLarge):
            client.transfer_logs(
                from_block=head - 2,
                to_block=head,
                tokens=[devnet.usdc.contract_address],
                recipients=["0x" + "11" * 20],
            )
        assert (
            client.transfer_logs(
                from_block=head - 1,
                to_block=head,
                tokens=[devnet.usdc.contract_address],
                recipients=["0x" + "11" * 20],
            )
            == []
        )
    assert proxy.refused_ranges == [3] and client.http_requests == 2  # refused: not retried


@pytest.mark.parametrize(
    ("method", "result", "ask"),
    [
        ("eth_blockNumber", "12", lambda c: c.block_number()),
        ("eth_getBalance", "12", lambda c: c.balance("0x" + "11" * 20)),
        ("eth_getBalance", None, lambda c: c.balance("0x" + "11" * 20)),
        ("eth_chainId", {"id": 1}, lambda c: c.chain_id()),
        (
            "eth_call",
            "0xnothex",
            lambda c: c.token_balance(token="0x" + "22" * 20, owner="0x" + "11" * 20),
        ),
        ("eth_getCode", 12, lambda c: c.code("0x" + "22" * 20)),
        ("eth_getBlockByNumber", {"number": "0x1", "hash": "0x12"}, lambda c: c.block(1)),
        (
            "eth_getLogs",
            {"not": "a list"},
            lambda c: c.transfer_logs(
                from_block=1, to_block=2, tokens=["0x" + "22" * 20], recipients=["0x" + "11" * 20]
            ),
        ),
        ("eth_getTransactionReceipt", {"status": "0x1"}, lambda c: c.receipt("0x" + "33" * 32)),
    ],
)
def test_a_malformed_answer_is_an_invalid_answer(devnet, method, result, ask):
    with FlakyRpcProxy(devnet.node.url) as proxy:
        proxy.malformed = {method: result}
        with pytest.raises(InvalidAnswer):
            ask(_client(proxy.url))


def test_an_answer_that_is_not_json_is_an_invalid_answer(devnet):
    with FlakyRpcProxy(devnet.node.url) as proxy:
        proxy.failures = [200]  # "Bad Gateway" as text, with status 200
        with pytest.raises(InvalidAnswer):
            _client(proxy.url).block_number()


def test_a_scan_meeting_malformed_logs_stops_with_the_error_and_keeps_its_cursor(devnet):
    invoice = order_with_invoice(devnet.usdc)
    devnet.pay_token(invoice.deposit_address, int(invoice.amount_due))
    devnet.mine(3)
    before = ScanCursor.objects.get(chain=devnet.chain)
    with FlakyRpcProxy(devnet.node.url) as proxy:
        proxy.malformed = {"eth_getLogs": [{"address": "0x12", "topics": []}]}
        report = devnet.scan(client=_client(proxy.url))
    assert "eth_getLogs: unexpected answer" in report.error
    cursor = ScanCursor.objects.get(chain=devnet.chain)
    assert (cursor.block_number, cursor.last_error) == (before.block_number, report.error)
    assert not invoice.transfers.exists()


def test_a_first_scan_whose_head_block_is_missing_stops_with_the_error_and_no_cursor(devnet):
    # A load-balanced node may name a head that its peer behind the balancer does not have.
    ScanCursor.objects.filter(chain=devnet.chain).delete()
    with FlakyRpcProxy(devnet.node.url) as proxy:
        proxy.malformed = {"eth_getBlockByNumber": None}
        report = devnet.scan(client=_client(proxy.url))
    assert "eth_getBlockByNumber: block" in report.error
    assert not ScanCursor.objects.filter(chain=devnet.chain).exists()


def test_a_reorg_deeper_than_the_history_with_its_restart_block_missing_keeps_the_cursor(
    devnet, settings
):
    devnet.mine(3)
    devnet.scan()
    cursor = ScanCursor.objects.get(chain=devnet.chain)
    # The cursor's block and every kept one left the chain: the scan restarts below them.
    ScannedBlock.objects.filter(chain=devnet.chain).delete()
    ScanCursor.objects.filter(pk=cursor.pk).update(block_hash="0x" + "ee" * 32)
    restart = max(0, cursor.block_number - settings.PAYMENTS_REORG_HISTORY_BLOCKS)
    with FlakyRpcProxy(devnet.node.url) as proxy:
        proxy.missing_blocks = {restart}
        report = devnet.scan(client=_client(proxy.url))
    assert f"block {restart}" in report.error
    after = ScanCursor.objects.get(pk=cursor.pk)
    assert (after.block_number, after.block_hash) == (cursor.block_number, "0x" + "ee" * 32)


def _log(topics: list[str], data: str) -> Log:
    return Log(
        address="0x" + "22" * 20,
        topics=topics,
        data=data,
        blockNumber="0x1",
        blockHash="0x" + "44" * 32,
        transactionHash="0x" + "33" * 32,
        logIndex="0x0",
    )


def test_transfer_logs_are_decoded_by_the_abi_and_anything_else_is_skipped(db):
    sender, recipient = "0x" + "ab" * 20, "0x" + "cd" * 20
    topics = [TRANSFER_TOPIC, *("0x" + encode(["address"], [a]).hex() for a in (sender, recipient))]
    amount = "0x" + encode(["uint256"], [10**18 + 7]).hex()
    assert decode_transfer_log(_log(topics, amount)) == (sender, recipient, 10**18 + 7)
    # ERC-721: the token id is a fourth topic and there is no data.
    assert decode_transfer_log(_log([*topics, "0x" + "00" * 31 + "05"], "0x")) is None
    assert decode_transfer_log(_log(topics, "0x")) is None
    assert decode_transfer_log(_log(["0x" + "99" * 32, *topics[1:]], amount)) is None
    # A topic with bits above the 20 address bytes holds no address.
    assert decode_transfer_log(_log([topics[0], "0x" + "ff" * 32, topics[2]], amount)) is None

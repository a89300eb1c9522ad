"""The same client as payments.rpc.RpcClient, through web3.py (measured against it in bench/).

web3's HTTPProvider carries the requests, `w3.batch_requests()` the batches and web3's
formatters shape the answers; they are then read into the same pydantic models, so the
scanner cannot tell the two clients apart. web3 retries nothing here: its provider retry
skips batches and 429, so the retry and back-off rule is ours, as in RpcClient.
"""

import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import requests
from django.conf import settings
from pydantic import ValidationError
from web3 import Web3
from web3.exceptions import BlockNotFound, TransactionNotFound, Web3Exception, Web3RPCError

from payments import rpc
from payments.rpc import (
    CALL_TRACER,
    TRANSFER_TOPIC,
    Block,
    CallFrame,
    InvalidAnswer,
    Log,
    RangeTooLarge,
    RateLimited,
    Receipt,
    RpcError,
    RpcUnavailable,
    TransactionTrace,
    node_error,
)

T = TypeVar("T")
BALANCE_OF_ABI = [
    {
        "name": "balanceOf",
        "type": "function",
        "stateMutability": "view",
        "inputs": [{"name": "owner", "type": "address"}],
        "outputs": [{"name": "", "type": "uint256"}],
    }
]


class _CountingSession(requests.Session):
    """Counts HTTP round trips: a JSON-RPC batch is one request for several calls."""

    def __init__(self):
        super().__init__()
        self.posts = 0

    def post(self, *args, **kwargs):
        self.posts += 1
        return super().post(*args, **kwargs)


def _plain(value: Any) -> Any:
    """web3's formatted answer back to JSON-RPC's shapes (hex strings), for the models."""
    if isinstance(value, bytes):
        return Web3.to_hex(value)
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def _checksum(address: str) -> str:
    return Web3.to_checksum_address(address)


class Web3RpcClient:
    def __init__(
        self,
        url: str,
        *,
        timeout: float | None = None,
        retries: int | None = None,
        backoff: float | None = None,
    ):
        self.url = url
        self.timeout = timeout or settings.PAYMENTS_RPC_TIMEOUT_SECONDS
        self.retries = settings.PAYMENTS_RPC_RETRIES if retries is None else retries
        self.backoff = settings.PAYMENTS_RPC_BACKOFF_SECONDS if backoff is None else backoff
        self._session = _CountingSession()
        provider = Web3.HTTPProvider(
            url,
            request_kwargs={"timeout": self.timeout},
            session=self._session,
            exception_retry_configuration=None,
        )
        self.w3 = Web3(provider)
        # Answers are read into pydantic models at once and no ENS name is ever sent: these two
        # layers would only add work to every answer.
        self.w3.middleware_onion.remove("attrdict")
        self.w3.middleware_onion.remove("ens_name_to_address")
        self.calls: Counter[str] = Counter()

    @property
    def http_requests(self) -> int:
        return self._session.posts

    # --- transport ------------------------------------------------------------------------
    def _count(self, method: str, n: int = 1) -> None:
        self.calls[method] += n
        with _lock:
            rpc.call_counter[method] += n

    def _attempt(self, method: str, send: Callable[[], T]) -> T:
        delay = self.backoff
        for attempt in range(self.retries + 1):
            last_try = attempt == self.retries
            try:
                return send()
            except (requests.ConnectionError, requests.Timeout) as exc:
                if last_try:
                    raise RpcUnavailable(f"{method}: {type(exc).__name__}") from exc
            except requests.HTTPError as exc:
                status = exc.response.status_code
                if status == 413:
                    raise RangeTooLarge(
                        f"{method}: request too large (HTTP 413)", code=413
                    ) from exc
                if status == 429:
                    if last_try:
                        raise RateLimited(f"{method}: rate limited (HTTP 429)", code=429) from exc
                    delay = max(delay, _retry_after(exc.response))
                elif status >= 500:
                    if last_try:
                        raise RpcUnavailable(f"{method}: HTTP {status}") from exc
                else:
                    raise RpcError(f"{method}: HTTP {status}", code=status) from exc
            except Web3RPCError as exc:
                error = (exc.rpc_response or {}).get("error") or exc.message
                raise node_error(method, error) from exc
            except (Web3Exception, ValueError, TypeError, KeyError, ValidationError) as exc:
                # web3's formatters met an answer without the protocol's shape.
                raise InvalidAnswer(f"{method}: unexpected answer ({exc})"[:300]) from exc
            time.sleep(delay)
            delay *= 2
        raise AssertionError("unreachable")

    def _batch(self, method: str, add: Callable[[Any], None], count: int) -> list[Any]:
        self._count(method, count)

        def send():
            with self.w3.batch_requests() as batch:
                add(batch)
                return batch.execute()

        return self._attempt(method, send)

    def request(self, method: str, params: list | None = None) -> Any:
        """Any method web3 has no helper for, answered as plain JSON."""
        self._count(method)
        return _plain(
            self._attempt(method, lambda: self.w3.manager.request_blocking(method, params or []))
        )

    # --- methods ----------------------------------------------------------------------------
    def chain_id(self) -> int:
        self._count("eth_chainId")
        return self._attempt("eth_chainId", lambda: self.w3.eth.chain_id)

    def block_number(self) -> int:
        self._count("eth_blockNumber")
        return self._attempt("eth_blockNumber", lambda: self.w3.eth.block_number)

    def block(self, number: int, *, full: bool = False) -> Block | None:
        self._count("eth_getBlockByNumber")
        try:
            raw = self._attempt("eth_getBlockByNumber", lambda: self.w3.eth.get_block(number, full))
        except InvalidAnswer as exc:
            if isinstance(exc.__cause__, BlockNotFound):
                return None
            raise
        return _model(Block, raw, "eth_getBlockByNumber")

    def blocks(self, numbers: list[int], *, full: bool = False, chunk: int = 50) -> list[Block]:
        """Blocks by number, batched; raises InvalidAnswer if one is missing (chain shrank)."""
        blocks: list[Block] = []
        for start in range(0, len(numbers), chunk):
            part = numbers[start : start + chunk]

            def add(batch, part=part):
                for number in part:
                    batch.add(self.w3.eth.get_block(number, full))

            raws = self._batch("eth_getBlockByNumber", add, len(part))
            blocks += [_model(Block, raw, "eth_getBlockByNumber") for raw in raws]
        return blocks

    def block_hashes(self, numbers: list[int]) -> dict[int, str | None]:
        """Canonical hash of each block; None for a block the node does not return."""
        hashes: dict[int, str | None] = {}
        for start in range(0, len(numbers), 50):
            part = numbers[start : start + 50]
            try:
                hashes.update(
                    (block.number, block.hash) for block in self.blocks(part, chunk=len(part))
                )
            except InvalidAnswer as exc:
                # web3 fails a whole batch on one missing block: ask those blocks one by one.
                if not isinstance(exc.__cause__, BlockNotFound):
                    raise
                for number in part:
                    block = self.block(number)
                    hashes[number] = None if block is None else block.hash
        return hashes

    def transfer_logs(self, *, from_block: int, to_block: int, tokens: list[str]) -> list[Log]:
        """ERC-20 Transfer logs of these token contracts, one call whatever the invoices."""
        self._count("eth_getLogs")
        query = {
            "fromBlock": from_block,
            "toBlock": to_block,
            "address": [_checksum(token) for token in tokens],
            "topics": [TRANSFER_TOPIC],
        }
        raws = self._attempt("eth_getLogs", lambda: self.w3.eth.get_logs(query))
        return [_model(Log, raw, "eth_getLogs") for raw in raws]

    def receipt(self, tx_hash: str) -> Receipt | None:
        self._count("eth_getTransactionReceipt")
        try:
            raw = self._attempt(
                "eth_getTransactionReceipt", lambda: self.w3.eth.get_transaction_receipt(tx_hash)
            )
        except InvalidAnswer as exc:
            if isinstance(exc.__cause__, TransactionNotFound):
                return None
            raise
        return _model(Receipt, raw, "eth_getTransactionReceipt")

    def receipts(self, tx_hashes: list[str]) -> list[Receipt]:
        def add(batch):
            for tx_hash in tx_hashes:
                batch.add(self.w3.eth.get_transaction_receipt(tx_hash))

        raws = self._batch("eth_getTransactionReceipt", add, len(tx_hashes)) if tx_hashes else []
        return [_model(Receipt, raw, "eth_getTransactionReceipt") for raw in raws]

    def balance(self, address: str) -> int:
        self._count("eth_getBalance")
        return self._attempt("eth_getBalance", lambda: self.w3.eth.get_balance(_checksum(address)))

    def balances(self, queries: list[tuple[str, int]], *, chunk: int = 50) -> list[int]:
        """Balances of (address, block number) pairs, batched."""
        balances: list[int] = []
        for start in range(0, len(queries), chunk):
            part = queries[start : start + chunk]

            def add(batch, part=part):
                for address, block in part:
                    batch.add(self.w3.eth.get_balance(_checksum(address), block))

            balances += self._batch("eth_getBalance", add, len(part))
        return balances

    def call_trace(self, tx_hash: str) -> CallFrame:
        raw = self.request("debug_traceTransaction", [tx_hash, CALL_TRACER])
        return _model(CallFrame, raw, "debug_traceTransaction")

    def block_call_traces(self, block_hash: str) -> list[TransactionTrace]:
        raw = self.request("debug_traceBlockByHash", [block_hash, CALL_TRACER])
        if not isinstance(raw, list):
            raise InvalidAnswer("debug_traceBlockByHash: answer is not a list")
        return [_model(TransactionTrace, item, "debug_traceBlockByHash") for item in raw]

    def token_balance(self, *, token: str, owner: str) -> int:
        self._count("eth_call")
        contract = self.w3.eth.contract(address=_checksum(token), abi=BALANCE_OF_ABI)
        return self._attempt(
            "eth_call", lambda: contract.functions.balanceOf(_checksum(owner)).call()
        )

    def code(self, address: str) -> str:
        self._count("eth_getCode")
        return Web3.to_hex(
            self._attempt("eth_getCode", lambda: self.w3.eth.get_code(_checksum(address)))
        )


_lock = threading.Lock()


def _model(model, raw: Any, method: str):
    try:
        return model.model_validate(_plain(raw))
    except ValidationError as exc:
        raise InvalidAnswer(f"{method}: unexpected answer ({exc.error_count()} errors)") from exc


def _retry_after(response: requests.Response) -> float:
    try:
        return min(float(response.headers.get("Retry-After", 0)), 30.0)
    except ValueError:
        return 0.0

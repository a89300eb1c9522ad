"""A thin Ethereum JSON-RPC client: every answer is validated by a pydantic model.

It counts its calls (`RpcClient.calls`, and `call_counter` for every client of the process)
so tests and the benchmark can check that a scan's cost does not grow with open invoices.

Why not web3.py: a web3.py client of this same interface (HTTPProvider, w3.batch_requests(),
web3's formatters) was measured side by side with this one over the same 1,010 blocks
(bench/rpc_clients_bench.py at commit 5dfdd1a, 3 runs of 3 alternating rounds): the same
1,015 calls in the same 27 HTTP requests per 1,000 blocks, but 42%, 68% and 71% more time per
block, spent formatting answers that are read into these models anyway. The rule was "at most
10% more", so this client stays; eth_abi does its ABI encoding and decoding.
"""

import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import eth_abi as abi
import requests
from django.conf import settings
from eth_abi.exceptions import DecodingError
from pydantic import ValidationError

from payments.watcher.rpc_answers import (
    CALL_TRACER,
    TRANSFER_TOPIC,
    Block,
    CallFrame,
    Log,
    Receipt,
    Transaction,
    TransactionTrace,
    _hex_data,
    _Model,
    _quantity,
    decode_transfer_log,
)

__all__ = [
    "Block",
    "CallFrame",
    "Log",
    "Receipt",
    "Transaction",
    "TransactionTrace",
    "decode_transfer_log",
]
# keccak("balanceOf(address)")[:4]
BALANCE_OF_SELECTOR = "0x70a08231"
# keccak of latestRoundData(), decimals() and symbol(), first 4 bytes.
LATEST_ROUND_DATA_SELECTOR = "0xfeaf968c"
DECIMALS_SELECTOR = "0x313ce567"
SYMBOL_SELECTOR = "0x95d89b41"
T = TypeVar("T")
# Process-wide count of JSON-RPC method calls, by method.
call_counter: Counter[str] = Counter()
_counter_lock = threading.Lock()

_RANGE_LIMIT = re.compile(
    r"block range|range (is )?too (large|big|wide)|limit exceeded|too many (results|logs|blocks)"
    r"|query returned more than|response size|exceeds? (the )?(max|limit)",
    re.IGNORECASE,
)


class RpcError(Exception):
    def __init__(self, message: str, *, code: int | None = None):
        super().__init__(message)
        self.code = code


class RpcUnavailable(RpcError):
    """The node did not answer usefully (connection refused, timeout, 5xx) after retries."""


class RateLimited(RpcUnavailable):
    """HTTP 429 (or its JSON-RPC twin) kept coming after the back-off retries."""


class RangeTooLarge(RpcError):
    """The node refuses this many blocks (or results) in one eth_getLogs."""


class InvalidAnswer(RpcError):
    """The answer does not have the shape the protocol promises."""


def _node_error(method: str, error: Any) -> RpcError:
    """The exception for a JSON-RPC error object, by what the node's message says."""
    code = error.get("code") if isinstance(error, dict) else None
    message = str(error.get("message", error) if isinstance(error, dict) else error)
    if code == -32005 or _RANGE_LIMIT.search(message):
        if "rate" in message.lower() and "limit" in message.lower():
            return RateLimited(f"{method}: {message}", code=code)
        return RangeTooLarge(f"{method}: {message}", code=code)
    return RpcError(f"{method}: {message}", code=code)


def _answered(parse: Callable[[Any], T], raw: Any, method: str) -> T:
    """A bare answer (a quantity, hex data) parsed, or InvalidAnswer: never a ValueError."""
    try:
        return parse(raw)
    except ValueError as exc:
        raise InvalidAnswer(f"{method}: {exc}"[:300]) from exc


@dataclass(frozen=True)
class RoundData:
    """A Chainlink aggregator's latestRoundData(), times in Unix seconds."""

    round_id: int
    answer: int
    started_at: int
    updated_at: int
    answered_in_round: int


def _validate(model: type[_Model], value: Any, method: str):
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        raise InvalidAnswer(f"{method}: unexpected answer ({exc.error_count()} errors)") from exc


class RpcClient:
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
        self.session = requests.Session()
        self.calls: Counter[str] = Counter()
        # HTTP round trips: a JSON-RPC batch is one request for several calls.
        self.http_requests = 0
        # Bytes of answers read: what a provider bills, and what the chain's traffic inflates.
        self.bytes_received = 0
        self._ids = 0

    # --- transport ------------------------------------------------------------------------
    def _count(self, method: str) -> None:
        self.calls[method] += 1
        with _counter_lock:
            call_counter[method] += 1

    def _post(self, payload: Any, label: str) -> Any:
        delay = self.backoff
        for attempt in range(self.retries + 1):
            last_try = attempt == self.retries
            self.http_requests += 1
            try:
                response = self.session.post(self.url, json=payload, timeout=self.timeout)
            except requests.RequestException as exc:
                if last_try:
                    raise RpcUnavailable(f"{label}: {type(exc).__name__}") from exc
            else:
                self.bytes_received += len(response.content)
                if response.status_code == 429:
                    if last_try:
                        raise RateLimited(f"{label}: rate limited (HTTP 429)", code=429)
                    delay = max(delay, _retry_after(response))
                elif response.status_code == 413:
                    raise RangeTooLarge(f"{label}: request too large (HTTP 413)", code=413)
                elif response.status_code >= 500 and not _is_json(response):
                    if last_try:
                        raise RpcUnavailable(f"{label}: HTTP {response.status_code}")
                else:
                    try:
                        return response.json()
                    except ValueError as exc:
                        raise InvalidAnswer(f"{label}: answer is not JSON") from exc
            time.sleep(delay)
            delay *= 2
        raise AssertionError("unreachable")

    def _envelope(self, method: str, params: list) -> dict:
        self._ids += 1
        return {"jsonrpc": "2.0", "id": self._ids, "method": method, "params": params}

    @staticmethod
    def _result(answer: Any, method: str) -> Any:
        if not isinstance(answer, dict):
            raise InvalidAnswer(f"{method}: answer is not a JSON-RPC object")
        error = answer.get("error")
        if error is not None:
            raise _node_error(method, error)
        if "result" not in answer:
            raise InvalidAnswer(f"{method}: answer has no result")
        return answer["result"]

    def request(self, method: str, params: list | None = None) -> Any:
        self._count(method)
        return self._result(self._post(self._envelope(method, params or []), method), method)

    def batch(self, method: str, params_list: list[list]) -> list[Any]:
        """The same method with several parameter lists in one HTTP request (JSON-RPC batch)."""
        if not params_list:
            return []
        for _ in params_list:
            self._count(method)
        envelopes = [self._envelope(method, params) for params in params_list]
        answers = self._post(envelopes, method)
        if not isinstance(answers, list):
            # Some nodes answer a refused batch with one error object.
            self._result(answers, method)
            raise InvalidAnswer(f"{method}: batch answer is not a list")
        by_id = {answer.get("id"): answer for answer in answers if isinstance(answer, dict)}
        return [self._result(by_id.get(envelope["id"]), method) for envelope in envelopes]

    # --- methods ----------------------------------------------------------------------------
    def chain_id(self) -> int:
        return _answered(_quantity, self.request("eth_chainId"), "eth_chainId")

    def block_number(self) -> int:
        return _answered(_quantity, self.request("eth_blockNumber"), "eth_blockNumber")

    def block(self, number: int, *, full: bool = False) -> Block | None:
        raw = self.request("eth_getBlockByNumber", [hex(number), full])
        return None if raw is None else _validate(Block, raw, "eth_getBlockByNumber")

    def blocks(self, numbers: list[int], *, full: bool = False, chunk: int = 50) -> list[Block]:
        """Blocks by number, batched; raises InvalidAnswer if one is missing (chain shrank)."""
        blocks: list[Block] = []
        for start in range(0, len(numbers), chunk):
            part = numbers[start : start + chunk]
            raws = self.batch("eth_getBlockByNumber", [[hex(n), full] for n in part])
            for number, raw in zip(part, raws, strict=True):
                if raw is None:
                    raise InvalidAnswer(f"eth_getBlockByNumber: block {number} is missing")
                blocks.append(_validate(Block, raw, "eth_getBlockByNumber"))
        return blocks

    def block_hashes(self, numbers: list[int]) -> dict[int, str | None]:
        """Canonical hash of each block; None for a block the node does not return."""
        hashes: dict[int, str | None] = {}
        for start in range(0, len(numbers), 50):
            part = numbers[start : start + 50]
            raws = self.batch("eth_getBlockByNumber", [[hex(n), False] for n in part])
            for number, raw in zip(part, raws, strict=True):
                hashes[number] = (
                    None if raw is None else _validate(Block, raw, "eth_getBlockByNumber").hash
                )
        return hashes

    def transfer_logs(
        self, *, from_block: int, to_block: int, tokens: list[str], recipients: list[str]
    ) -> list[Log]:
        """Transfer logs of these token contracts to these addresses only.

        The `to` topic filters on the node, so the answer follows the store's invoices, not
        the tokens' traffic. One call per PAYMENTS_LOG_RECIPIENTS_PER_CALL addresses.
        """
        per_call = settings.PAYMENTS_LOG_RECIPIENTS_PER_CALL
        logs: list[Log] = []
        for start in range(0, len(recipients), per_call):
            padded = [
                "0x" + address[2:].rjust(64, "0")
                for address in recipients[start : start + per_call]
            ]
            raw = self.request(
                "eth_getLogs",
                [
                    {
                        "fromBlock": hex(from_block),
                        "toBlock": hex(to_block),
                        "address": tokens,
                        "topics": [TRANSFER_TOPIC, None, padded],
                    }
                ],
            )
            if not isinstance(raw, list):
                raise InvalidAnswer("eth_getLogs: answer is not a list")
            logs += [_validate(Log, item, "eth_getLogs") for item in raw]
        return logs

    def tagged_block_number(self, tag: str) -> int | None:
        """The number of the block a tag (`safe`, `finalized`) names; None if it names none
        yet (a chain younger than one epoch)."""
        raw = self.request("eth_getBlockByNumber", [tag, False])
        return None if raw is None else _validate(Block, raw, "eth_getBlockByNumber").number

    def receipt(self, tx_hash: str) -> Receipt | None:
        raw = self.request("eth_getTransactionReceipt", [tx_hash])
        return None if raw is None else _validate(Receipt, raw, "eth_getTransactionReceipt")

    def transaction(self, tx_hash: str) -> Transaction | None:
        """The transaction, mined or still pending; None if the node does not know it."""
        raw = self.request("eth_getTransactionByHash", [tx_hash])
        return None if raw is None else _validate(Transaction, raw, "eth_getTransactionByHash")

    def receipts(self, tx_hashes: list[str]) -> list[Receipt]:
        raws = self.batch("eth_getTransactionReceipt", [[tx] for tx in tx_hashes])
        receipts = []
        for tx_hash, raw in zip(tx_hashes, raws, strict=True):
            if raw is None:
                raise InvalidAnswer(f"eth_getTransactionReceipt: no receipt for {tx_hash}")
            receipts.append(_validate(Receipt, raw, "eth_getTransactionReceipt"))
        return receipts

    def balance(self, address: str) -> int:
        raw = self.request("eth_getBalance", [address, "latest"])
        return _answered(_quantity, raw, "eth_getBalance")

    def balances(self, queries: Sequence[tuple[str, int | str]], *, chunk: int = 50) -> list[int]:
        """Balances of (address, block) pairs, batched; a block is a number, or a hash (EIP-1898:
        the state of that very block, whatever became canonical since)."""
        balances: list[int] = []
        for start in range(0, len(queries), chunk):
            part = queries[start : start + chunk]
            raws = self.batch(
                "eth_getBalance", [[address, _block_ref(block)] for address, block in part]
            )
            balances += [_answered(_quantity, raw, "eth_getBalance") for raw in raws]
        return balances

    def call_trace(self, tx_hash: str) -> CallFrame:
        raw = self.request("debug_traceTransaction", [tx_hash, CALL_TRACER])
        return _validate(CallFrame, raw, "debug_traceTransaction")

    def block_call_traces(self, block_hash: str) -> list[TransactionTrace]:
        raw = self.request("debug_traceBlockByHash", [block_hash, CALL_TRACER])
        if not isinstance(raw, list):
            raise InvalidAnswer("debug_traceBlockByHash: answer is not a list")
        return [_validate(TransactionTrace, item, "debug_traceBlockByHash") for item in raw]

    def token_balance(self, *, token: str, owner: str) -> int:
        data = BALANCE_OF_SELECTOR + abi.encode(["address"], [owner]).hex()
        raw = self.request("eth_call", [{"to": token, "data": data}, "latest"])
        if raw in ("0x", None):  # no contract there (yet): nothing held
            return 0
        answer = _answered(_hex_data, raw, "eth_call")
        try:
            (amount,) = abi.decode(["uint256"], bytes.fromhex(answer[2:]))
        except (ValueError, DecodingError) as exc:
            raise InvalidAnswer(f"eth_call: not a balanceOf answer: {answer[:80]}") from exc
        return amount

    def eth_calls(self, requests_: list[tuple[str, str]], *, types: list[str]) -> list[tuple]:
        """eth_call of (contract, calldata) pairs at the latest block, batched, each answer
        decoded as `types`. No contract, or an answer of another shape, is InvalidAnswer."""
        raws = self.batch(
            "eth_call", [[{"to": to, "data": data}, "latest"] for to, data in requests_]
        )
        decoded = []
        for (to, _data), raw in zip(requests_, raws, strict=True):
            answer = _answered(_hex_data, raw, "eth_call")
            try:
                decoded.append(abi.decode(types, bytes.fromhex(answer[2:])))
            except (ValueError, DecodingError) as exc:
                raise InvalidAnswer(f"eth_call: {to} answered {answer[:80]!r}") from exc
        return decoded

    def latest_rounds(self, feeds: list[str]) -> list[RoundData]:
        """latestRoundData() of each Chainlink feed, in one batch (one HTTP request for all the
        feeds of a chain)."""
        types = ["uint80", "int256", "uint256", "uint256", "uint80"]
        answers = self.eth_calls(
            [(feed, LATEST_ROUND_DATA_SELECTOR) for feed in feeds], types=types
        )
        return [RoundData(*answer) for answer in answers]

    def decimals(self, contract: str) -> int:
        """decimals() of a feed or an ERC-20 token."""
        ((value,),) = self.eth_calls([(contract, DECIMALS_SELECTOR)], types=["uint8"])
        return value

    def symbol(self, token: str) -> str:
        ((value,),) = self.eth_calls([(token, SYMBOL_SELECTOR)], types=["string"])
        return value

    def code(self, address: str) -> str:
        return _answered(_hex_data, self.request("eth_getCode", [address, "latest"]), "eth_getCode")


def _block_ref(block: int | str) -> str | dict:
    return hex(block) if isinstance(block, int) else {"blockHash": block}


def _retry_after(response: requests.Response) -> float:
    try:
        return min(float(response.headers.get("Retry-After", 0)), 30.0)
    except ValueError:
        return 0.0


def _is_json(response: requests.Response) -> bool:
    return "json" in response.headers.get("Content-Type", "")

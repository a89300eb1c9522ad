"""The shapes of Ethereum JSON-RPC answers, validated by pydantic, and the Transfer log.

Anything that does not have the shape the protocol promises is refused here, before the
watcher reads it (payments.watcher.rpc turns the refusal into InvalidAnswer).
"""

import re
from typing import Annotated, Any

import eth_abi as abi
from eth_abi.exceptions import DecodingError
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

# keccak("Transfer(address,address,uint256)")
TRANSFER_TOPIC = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"


def _quantity(value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.startswith("0x"):
        return int(value, 16)
    raise ValueError(f"not a hex quantity: {value!r}")


def _hex_of_length(length: int):
    pattern = re.compile(rf"^0x[0-9a-fA-F]{{{length}}}$")

    def check(value: Any) -> str:
        if not isinstance(value, str) or not pattern.match(value):
            raise ValueError(f"expected 0x and {length} hex digits, got {value!r}")
        return value.lower()

    return check


def _hex_data(value: Any) -> str:
    if not isinstance(value, str) or not re.match(r"^0x[0-9a-fA-F]*$", value):
        raise ValueError(f"not hex data: {value!r}")
    return value.lower()


Quantity = Annotated[int, BeforeValidator(_quantity)]
Address = Annotated[str, BeforeValidator(_hex_of_length(40))]
Hash32 = Annotated[str, BeforeValidator(_hex_of_length(64))]
HexData = Annotated[str, BeforeValidator(_hex_data)]


class _Model(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="ignore", frozen=True)


class Log(_Model):
    address: Address
    topics: list[Hash32]
    data: HexData
    block_number: Quantity = Field(alias="blockNumber")
    block_hash: Hash32 = Field(alias="blockHash")
    transaction_hash: Hash32 = Field(alias="transactionHash")
    log_index: Quantity = Field(alias="logIndex")
    removed: bool = False
    # Recent nodes (geth 1.16, anvil) name the block's time: no header to fetch for it.
    block_timestamp: Quantity | None = Field(None, alias="blockTimestamp")


class Transaction(_Model):
    hash: Hash32
    from_address: Address = Field(alias="from")
    to: Address | None = None
    value: Quantity


class Block(_Model):
    number: Quantity
    hash: Hash32
    parent_hash: Hash32 = Field(alias="parentHash")
    timestamp: Quantity
    # Full transaction objects or bare hashes, depending on the request.
    transactions: list[Transaction] | list[Hash32] = []


class Receipt(_Model):
    transaction_hash: Hash32 = Field(alias="transactionHash")
    block_number: Quantity = Field(alias="blockNumber")
    block_hash: Hash32 = Field(alias="blockHash")
    status: Quantity
    from_address: Address = Field(alias="from")
    to: Address | None = None
    logs: list[Log]

    @property
    def succeeded(self) -> bool:
        return self.status == 1


class CallFrame(_Model):
    """One call of a transaction, as debug_trace* answers with the callTracer."""

    type: str
    from_address: Address = Field(alias="from")
    to: Address | None = None
    value: Quantity = 0
    error: str | None = None
    calls: list["CallFrame"] = []


class TransactionTrace(_Model):
    tx_hash: Hash32 = Field(alias="txHash")
    result: CallFrame


CALL_TRACER = {"tracer": "callTracer"}


def decode_transfer_log(log: Log) -> tuple[str, str, int] | None:
    """(from, to, amount) of a standard Transfer log; None for anything else.

    ERC-721 indexes its token id as a fourth topic and has no data: not a payment. Topics
    whose high bytes are not zero hold no address: not a payment either.
    """
    if len(log.topics) != 3 or log.topics[0] != TRANSFER_TOPIC or len(log.data) != 66:
        return None
    indexed = bytes.fromhex(log.topics[1][2:] + log.topics[2][2:])
    try:
        from_address, to_address = abi.decode(["address", "address"], indexed)
        (amount,) = abi.decode(["uint256"], bytes.fromhex(log.data[2:]))
    except DecodingError:
        return None
    return from_address.lower(), to_address.lower(), amount

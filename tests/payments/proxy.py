"""A real HTTP peer in front of anvil that misbehaves on purpose, like public RPC providers."""

import json
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import requests


class FlakyRpcProxy:
    """Forwards JSON-RPC to anvil, but refuses eth_getLogs spanning more than `max_log_range`
    blocks ("block range too large"), answers HTTP 429 to the next `throttle` requests, and
    with `tracing=False` answers "method not found" to debug_* and trace_* like most public
    providers.

    `failures` lists what the next requests meet, one each: "drop" (the connection closes
    with no answer), or an HTTP status answered with a plain-text body. `malformed` maps a
    method to the result answered for it instead of the node's. Blocks in `missing_blocks`
    are answered null by eth_getBlockByNumber, batched or not, like a node behind its peers.

    It counts what passes: `calls` by method (a batch counts each call), `full_blocks` asked
    with their transactions, and `bytes_answered` by the node.
    """

    def __init__(
        self,
        upstream: str,
        *,
        max_log_range: int | None = None,
        throttle: int = 0,
        tracing: bool = True,
    ):
        self.upstream = upstream
        self.max_log_range = max_log_range
        self.throttle = throttle
        self.tracing = tracing
        self.refused_methods: list[str] = []
        self.refused_ranges: list[int] = []
        self.log_ranges: list[tuple[int, int]] = []
        self.failures: list[str | int] = []
        self.malformed: dict[str, object] = {}
        self.missing_blocks: set[int] = set()
        self.requests = 0
        self.calls: Counter[str] = Counter()
        self.full_blocks = 0
        self.bytes_answered = 0
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                proxy.requests += 1
                if proxy.failures:
                    failure = proxy.failures.pop(0)
                    if failure == "drop":
                        self.close_connection = True
                        return
                    self._send(failure, b"Bad Gateway", "text/plain")
                    return
                if proxy.throttle > 0:
                    proxy.throttle -= 1
                    self._send(429, b"Too Many Requests", "text/plain")
                    return
                payload = json.loads(body)
                proxy._count(payload)
                refusal = proxy._refusal(payload)
                if refusal is not None:
                    self._send(200, json.dumps(refusal).encode(), "application/json")
                    return
                answer = requests.post(
                    proxy.upstream,
                    data=body,
                    timeout=10,
                    headers={"Content-Type": "application/json"},
                )
                proxy.bytes_answered += len(answer.content)
                content = proxy._without_missing_blocks(payload, answer.content)
                self._send(answer.status_code, content, "application/json")

            def _send(self, status, content, content_type):
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(content)))
                self.end_headers()
                self.wfile.write(content)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def _count(self, payload) -> None:
        for call in payload if isinstance(payload, list) else [payload]:
            self.calls[call.get("method", "")] += 1
            params = call.get("params") or []
            if call.get("method") == "eth_getBlockByNumber" and params[1:2] == [True]:
                self.full_blocks += 1

    def _refusal(self, payload):
        if isinstance(payload, list):
            return None
        method = payload.get("method", "")
        if method in self.malformed:
            return {"jsonrpc": "2.0", "id": payload["id"], "result": self.malformed[method]}
        if not self.tracing and method.startswith(("debug_", "trace_")):
            self.refused_methods.append(method)
            return {
                "jsonrpc": "2.0",
                "id": payload["id"],
                "error": {"code": -32601, "message": "Method not found"},
            }
        if method != "eth_getLogs":
            return None
        query = payload["params"][0]
        start, end = int(query["fromBlock"], 16), int(query["toBlock"], 16)
        span = end - start + 1
        if self.max_log_range is not None and span > self.max_log_range:
            self.refused_ranges.append(span)
            return {
                "jsonrpc": "2.0",
                "id": payload["id"],
                "error": {"code": -32602, "message": "block range too large"},
            }
        self.log_ranges.append((start, end))
        return None

    def _without_missing_blocks(self, payload, content: bytes) -> bytes:
        calls = payload if isinstance(payload, list) else [payload]
        missing = {
            call["id"]
            for call in calls
            if call.get("method") == "eth_getBlockByNumber"
            and str(call["params"][0]).startswith("0x")
            and int(call["params"][0], 16) in self.missing_blocks
        }
        if not missing:
            return content
        answer = json.loads(content)
        for item in answer if isinstance(answer, list) else [answer]:
            if item.get("id") in missing:
                item["result"] = None
        return json.dumps(answer).encode()

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


class HoldingRpcProxy(FlakyRpcProxy):
    """Holds the `hold_call`-th eth_getLogs request until released: a scan stuck mid-way."""

    def __init__(self, upstream: str, *, hold_call: int):
        super().__init__(upstream)
        self.hold_call = hold_call
        self.logs_calls = 0
        self.counting = threading.Lock()
        self.holding = threading.Event()
        self.released = threading.Event()

    def _refusal(self, payload):
        if isinstance(payload, dict) and payload.get("method") == "eth_getLogs":
            with self.counting:
                self.logs_calls += 1
                call = self.logs_calls
            if call == self.hold_call:
                self.holding.set()
                self.released.wait(timeout=30)
        return super()._refusal(payload)

    def __exit__(self, *exc):
        self.released.set()
        super().__exit__(*exc)

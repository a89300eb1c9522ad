"""A real HTTP webhook receiver on 127.0.0.1, in a thread, that answers as told."""

import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    url: str = ""
    # Status codes to answer, in order; 200 once they run out.
    statuses: list[int] = field(default_factory=list)
    delay_seconds: float = 0
    requests: list[Received] = field(default_factory=list)
    arrived: threading.Condition = field(default_factory=threading.Condition)

    def wait_for(self, count: int, timeout: float = 10) -> list[Received]:
        with self.arrived:
            self.arrived.wait_for(lambda: len(self.requests) >= count, timeout=timeout)
        return list(self.requests)


def receiver_start() -> tuple[Receiver, ThreadingHTTPServer]:
    receiver = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if receiver.delay_seconds:
                time.sleep(receiver.delay_seconds)
            status = receiver.statuses.pop(0) if receiver.statuses else 200
            with receiver.arrived:
                receiver.requests.append(Received(self.path, dict(self.headers), body))
                receiver.arrived.notify_all()
            self.send_response(status)
            if 300 <= status < 400:
                self.send_header("Location", "http://169.254.169.254/latest/meta-data/")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    receiver.url = f"http://127.0.0.1:{server.server_address[1]}/hooks"
    threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    ).start()
    return receiver, server

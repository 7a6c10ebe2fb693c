"""A local HTTP listener standing in for an OpenAI-compatible endpoint: it records every request it gets and answers
each with a small chat completion. Tests point ``OPENAI_BASE_URL`` at it to prove what was (not) sent."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from dataclasses import field
from http.server import BaseHTTPRequestHandler
from http.server import ThreadingHTTPServer

#: what every request is answered with (a chat completion holding this summary)
SUMMARY = "Live summary from the local listener."


@dataclass
class Recorded:
    """One request the listener received."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> dict:
        return json.loads(self.body)


@dataclass
class Listener:
    """Where the listener listens, and what it received."""

    url: str
    requests: list[Recorded] = field(default_factory=list)

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"


@contextmanager
def listening() -> Iterator[Listener]:
    """A :class:`Listener` on a free port of 127.0.0.1, for the duration of the block."""
    lock = threading.Lock()
    received: list[Recorded] = []

    class Handler(BaseHTTPRequestHandler):
        def _record(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            with lock:
                received.append(Recorded(self.command, self.path, dict(self.headers), body))
            answer = json.dumps({"id": "local", "object": "chat.completion",
                                 "choices": [{"index": 0, "message": {"role": "assistant", "content": SUMMARY}}]})
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer.encode())

        do_POST = do_GET = do_PUT = _record

        def log_message(self, format: str, *args) -> None:  # noqa: A002 - the base class's name
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield Listener(f"http://127.0.0.1:{server.server_address[1]}", received)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)

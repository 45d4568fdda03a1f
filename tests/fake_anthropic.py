"""A fake Claude Messages API on 127.0.0.1 that speaks the real streaming protocol.

Tests drive it through the real `anthropic` SDK (base_url), so the SDK's SSE parsing, error
classes and retry headers are exercised for real. Each POST /v1/messages takes the next scripted
answer:

- `Reply(text)`: a 200 `text/event-stream` with message_start, ping, content_block_start,
  content_block_delta (the text in chunks), content_block_stop, message_delta (usage) and
  message_stop, sent with chunked transfer encoding as the real API does. `drop_after=N` closes
  the connection after N deltas without ending the body (a dropped connection); `error_after=N`
  sends an SSE `error` event after N deltas (the API's mid-stream overloaded_error);
  `hold_after=N` sends N deltas, then holds the rest of the stream until the test calls
  `release()` (or the client goes away): a test that must see the app *while* it streams waits
  for that state, instead of hoping a slow stream is still running when it looks.
- `Fail(status, error_type, message, headers)`: a JSON error answer (401, 429 + retry-after, 529).

Every request is recorded (path, headers, JSON body) and every client that went away
mid-stream is counted, so tests assert on what the client really sent and did.
"""

from __future__ import annotations

import json
import select
import socket
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DEFAULT_MODEL_ID = "claude-sonnet-5-5-20260101"


@dataclass
class Reply:
    text: str
    model: str = DEFAULT_MODEL_ID
    chunk: int = 64  # characters per text delta
    delay: float = 0.0  # seconds between deltas
    input_tokens: int = 120
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    output_tokens: int | None = None  # default: one per 4 characters
    stop_reason: str = "end_turn"
    drop_after: int | None = None
    error_after: int | None = None
    error_type: str = "overloaded_error"
    omit_message_start: bool = False  # a malformed stream the SDK cannot accumulate
    hold_after: int | None = None  # deltas sent before the stream waits for release()


@dataclass
class Fail:
    status: int
    error_type: str
    message: str
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: Any

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", [])) if isinstance(self.body, dict) else []

    def text_of(self, index: int) -> str:
        """The text of one message of the request (string or list-of-blocks content)."""
        content = self.messages[index]["content"]
        if isinstance(content, str):
            return content
        return "".join(block.get("text", "") for block in content)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet test output
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw or b"null")
        except ValueError:
            body = raw.decode("utf-8", "replace")
        fake = self.server.fake
        with fake.lock:
            fake.requests.append(Recorded(self.path, dict(self.headers.items()), body))
            answer = fake.script.pop(0) if fake.script else None
        if self.path.split("?")[0] != "/v1/messages":
            self._json(
                404, {"type": "error", "error": {"type": "not_found_error", "message": self.path}}
            )
            return
        if answer is None:
            self._json(
                500,
                {
                    "type": "error",
                    "error": {"type": "api_error", "message": "no scripted answer left"},
                },
            )
            return
        if isinstance(answer, Fail):
            error = {
                "type": "error",
                "error": {"type": answer.error_type, "message": answer.message},
            }
            self._json(answer.status, error, answer.headers)
            return
        self._stream(answer)

    def _json(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
        payload = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.send_header("request-id", "req_fake")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(payload)
        self.wfile.flush()

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _event(self, name: str, data: dict[str, Any]) -> None:
        self._chunk(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())

    def _message_start(self, r: Reply) -> None:
        self._event(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "msg_fake",
                    "type": "message",
                    "role": "assistant",
                    "model": r.model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {
                        "input_tokens": r.input_tokens,
                        "cache_creation_input_tokens": r.cache_creation_input_tokens,
                        "cache_read_input_tokens": r.cache_read_input_tokens,
                        "output_tokens": 1,
                    },
                },
            },
        )

    def _hold(self) -> bool:
        """Wait for the test's release(); False when the client closed the connection first
        (a cancelled stream: the handler never writes again, so no write would notice)."""
        fake = self.server.fake
        with fake.lock:
            fake.holding += 1
        try:
            while not fake.released.wait(0.02):
                readable, _, _ = select.select([self.connection], [], [], 0)
                if readable and not self.connection.recv(1, socket.MSG_PEEK):
                    return False
            return True
        finally:
            with fake.lock:
                fake.holding -= 1

    def _stream(self, r: Reply) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("cache-control", "no-cache")
        self.send_header("request-id", "req_fake")
        self.end_headers()
        output_tokens = r.output_tokens if r.output_tokens is not None else max(1, len(r.text) // 4)
        pieces = [r.text[i : i + r.chunk] for i in range(0, len(r.text), r.chunk)] or [""]
        try:
            if not r.omit_message_start:
                self._message_start(r)
            self._event("ping", {"type": "ping"})
            self._event(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "text", "text": ""},
                },
            )
            for n, piece in enumerate(pieces):
                if r.drop_after is not None and n >= r.drop_after:
                    # Close without the terminating zero-length chunk: a dropped connection.
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if r.error_after is not None and n >= r.error_after:
                    self._event(
                        "error",
                        {"type": "error", "error": {"type": r.error_type, "message": "Overloaded"}},
                    )
                    self._chunk(b"")
                    return
                if r.hold_after is not None and n == r.hold_after and not self._hold():
                    raise ConnectionResetError  # the client went away while held
                if r.delay:
                    time.sleep(r.delay)
                self._event(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "text_delta", "text": piece},
                    },
                )
            self._event("content_block_stop", {"type": "content_block_stop", "index": 0})
            self._event(
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": r.stop_reason, "stop_sequence": None},
                    "usage": {"output_tokens": output_tokens},
                },
            )
            self._event("message_stop", {"type": "message_stop"})
            self._chunk(b"")
            with self.server.fake.lock:
                self.server.fake.completed += 1
        except (BrokenPipeError, ConnectionResetError, OSError):
            # The client went away mid-stream (cancelled): remember it for the tests.
            self.close_connection = True
            with self.server.fake.lock:
                self.server.fake.disconnects += 1


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    fake: FakeAnthropic

    def handle_error(self, request, client_address) -> None:
        # The SDK closes an idle keep-alive connection while the handler waits for its next
        # request line: an ordinary goodbye, not an error. socketserver would print its traceback
        # to this process's stderr, which the in-process `generate` tests read as ours.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class FakeAnthropic:
    """The fake API, started on a free loopback port. Use as a context manager."""

    def __init__(self, *script: Reply | Fail) -> None:
        self.script: list[Reply | Fail] = list(script)
        self.requests: list[Recorded] = []
        self.disconnects = 0
        self.completed = 0
        self.holding = 0  # streams held (hold_after) right now
        self.released = threading.Event()
        self.lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.fake = self
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}
        )
        self._thread.daemon = True

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def add(self, *answers: Reply | Fail) -> None:
        with self.lock:
            self.script.extend(answers)

    def wait_for(self, predicate: Any, timeout: float = 15.0) -> bool:
        """Poll until predicate(self) is true (the handler threads run concurrently)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate(self):
                return True
            time.sleep(0.02)
        return bool(predicate(self))

    def release(self) -> None:
        """Let every held stream (and every later one) go on to its end."""
        self.released.set()

    def start(self) -> FakeAnthropic:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.released.set()  # no handler thread left waiting
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def closed_port_url() -> str:
    """A loopback URL where nothing listens (connection refused)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return f"http://127.0.0.1:{port}"

"""A local HTTP server on a real socket that answers like the hosted providers, and response bodies
in their documented wire formats (OpenAI chat completions, Anthropic Messages, their error bodies)."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Canned:
    status: int = 200
    body: Any = None  # dict -> JSON; bytes -> sent as is
    headers: dict[str, str] = field(default_factory=dict)
    truncate_to: int | None = None  # announce the full length, send only this many bytes, close
    hold: threading.Event | None = None  # wait for this before answering (timeouts, cancellation)
    drip: threading.Event | None = None  # send the body one byte at a time until this is set


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class WireServer:
    def __init__(self) -> None:
        self.queue: list[Canned] = []
        self.seen: list[Seen] = []
        self.received = threading.Event()
        self.release = threading.Event()
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                raw = self.rfile.read(length)
                with server._lock:
                    server.seen.append(Seen(self.path, {k.lower(): v for k, v in self.headers.items()},
                                            json.loads(raw)))
                    canned = server.queue.pop(0) if server.queue else Canned(500, {"error": "no canned reply"})
                server.received.set()
                if canned.hold is not None:
                    canned.hold.wait(30)
                data = canned.body if isinstance(canned.body, bytes) else json.dumps(canned.body).encode()
                self.send_response(canned.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for k, v in canned.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                if canned.drip is not None:
                    for i in range(len(data)):
                        if canned.drip.wait(0.05):
                            break
                        self.wfile.write(data[i:i + 1])
                        self.wfile.flush()
                    self.close_connection = True
                    return
                if canned.truncate_to is not None:
                    self.wfile.write(data[: canned.truncate_to])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def start(self) -> WireServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def answer(self, *replies: Canned) -> None:
        with self._lock:
            self.queue.extend(replies)


# -- OpenAI chat completions ---------------------------------------------------------------------

def openai_completion(content: str | None = None, *, tool_args: str | None = None, finish: str = "stop",
                      refusal: str | None = None, usage: dict[str, Any] | None = None,
                      model: str = "gpt-test-2026-01-01") -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": refusal}
    if tool_args is not None:
        message["content"] = None
        message["tool_calls"] = [{"id": "call_abc123", "type": "function",
                                  "function": {"name": "propose", "arguments": tool_args}}]
        finish = "tool_calls" if finish == "stop" else finish
    body: dict[str, Any] = {
        "id": "chatcmpl-test1", "object": "chat.completion", "created": 1_767_000_000, "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
        "system_fingerprint": "fp_test",
    }
    if usage is not False:
        body["usage"] = usage or {"prompt_tokens": 1200, "completion_tokens": 80, "total_tokens": 1280,
                                  "prompt_tokens_details": {"cached_tokens": 1024}}
    return body


def openai_error(message: str, type_: str, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "param": None, "code": code}}


# -- Anthropic Messages --------------------------------------------------------------------------

def anthropic_message(tool_input: Any = None, *, text: str | None = None, stop_reason: str = "tool_use",
                      usage: dict[str, Any] | None = None, model: str = "claude-test-1") -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if text is not None:
        content.append({"type": "text", "text": text})
    if tool_input is not None:
        content.append({"type": "tool_use", "id": "toolu_01Test", "name": "propose", "input": tool_input})
    return {
        "id": "msg_01Test", "type": "message", "role": "assistant", "model": model, "content": content,
        "stop_reason": stop_reason, "stop_sequence": None,
        "usage": usage or {"input_tokens": 300, "output_tokens": 90, "cache_creation_input_tokens": 0,
                           "cache_read_input_tokens": 1100},
    }


def anthropic_error(type_: str, message: str, **details: Any) -> dict[str, Any]:
    error: dict[str, Any] = {"type": type_, "message": message}
    if details:
        error["details"] = details
    return {"type": "error", "error": error, "request_id": "req_011Test"}

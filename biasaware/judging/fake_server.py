"""A localhost OpenAI-compatible chat endpoint with latency and injected faults.

Used by the tests and by ``bench/`` to drive the LLM paths without a model or a network:

>>> with FakeChatServer(latency=0.0) as server:            # doctest: +SKIP
...     client = openai.OpenAI(base_url=server.base_url, api_key="x")

``POST /v1/chat/completions`` answers with the text of ``responder(messages)`` (``None``: no text, as a
content filter answers). Faults are
decided per request from a hash of (seed, request, attempt number), so a run is reproducible:
with probability ``fault_rate`` one of ``faults`` happens instead of an answer, on at most the
first ``max_faults`` attempts of a request (so retries always get through):

* ``429``: rate limited, with a ``retry-after-ms`` header;
* ``500``: a server error;
* ``timeout``: the server sleeps ``hang`` seconds before answering (the client should time out);
* ``malformed``: status 200 with a body that is not JSON.

With ``api_key`` set, a request without ``Authorization: Bearer <api_key>`` gets a 401. With
``context_words`` set, a request whose messages hold more words than that gets the 400 that
OpenAI and ``vllm serve`` send for a prompt over the model's context (``context_length_exceeded``).
``served`` counts the answers delivered per request key (not the late ones after a timeout fault),
``requests`` all requests received, ``queries`` each chat request's query string. A request to
another path gets a 404, as from a real server. ``port`` (default: a free one) lets a server start
again at the address of one that stopped. ``content_type`` is the answers' (some servers send JSON as
``text/plain``); ``usage``, when given, replaces every answer's token counts (a server's odd ones).

The default :func:`default_responder` understands the builders' rewrite prompts (returns the text
with a visible marker per direction) and pairwise judge prompts (prefers the response without an
added-feature marker, flipping a deterministic ~10% of verdicts so verifiers have work to do).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FAULTS = ("429", "500", "timeout", "malformed")
MARK = re.compile(r" \[\+\w+\]")  # what the fake rewriter adds: " [+authority]"


def request_key(body: dict[str, Any]) -> str:
    return hashlib.sha256(
        json.dumps([body.get("model"), body.get("messages")], sort_keys=True).encode()
    ).hexdigest()[:16]


def _unit(*parts: Any) -> float:
    digest = hashlib.sha256(":".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def default_responder(messages: list[dict[str, str]]) -> str:
    system = next((m["content"] for m in messages if m["role"] == "system"), "")
    user = messages[-1]["content"]
    text = re.search(r"<text((?: #\w+)?)>\n?(.*?)\n?</text\1>", user, re.DOTALL)  # fenced or plain
    if text and "<rewritten>" in system:
        body, feature = text.group(2), re.search(r"Feature: (\w+)", user)
        body = MARK.sub("", body)
        if "Direction: add" in user:
            body += f" [+{feature.group(1) if feature else 'feature'}]"
        return f"<rewritten>\n{body}\n</rewritten>"
    a = re.search(r"<response_a((?: #\w+)?)>\n?(.*?)\n?</response_a\1>", user, re.DOTALL)
    b = re.search(r"<response_b((?: #\w+)?)>\n?(.*?)\n?</response_b\1>", user, re.DOTALL)
    if a and b:
        a_marked, b_marked = bool(MARK.search(a.group(2))), bool(MARK.search(b.group(2)))
        pick = "B" if a_marked and not b_marked else "A" if b_marked and not a_marked else None
        if pick is None:  # no marker to go by: a deterministic coin
            pick = "A" if _unit("coin", user) < 0.5 else "B"
        if _unit("flip", user) < 0.1:
            pick = "B" if pick == "A" else "A"
        return f"<think>\nResponse {pick} answers the question better.\n</think>\n<answer>{pick}</answer>"
    return "OK"


class FakeChatServer:
    """Context manager running the endpoint on 127.0.0.1 in a daemon thread."""

    def __init__(
        self,
        responder: Callable[[list[dict[str, str]]], str] = default_responder,
        *,
        latency: float = 0.0,
        fault_rate: float = 0.0,
        faults: tuple[str, ...] = FAULTS,
        max_faults: int = 2,
        hang: float = 2.0,
        seed: int = 0,
        api_key: str | None = None,
        context_words: int | None = None,
        port: int = 0,
        content_type: str = "application/json",
        usage: Any = None,
    ):
        unknown = set(faults) - set(FAULTS)
        if unknown:
            raise ValueError(f"unknown faults {sorted(unknown)}; valid: {FAULTS}")
        self.responder, self.latency, self.fault_rate = responder, latency, fault_rate
        self.faults, self.max_faults, self.hang, self.seed = faults, max_faults, hang, seed
        self.api_key, self.context_words, self.port = api_key, context_words, port
        self.content_type, self.usage = content_type, usage
        self.requests = 0
        self.attempts: Counter[str] = Counter()
        self.served: Counter[str] = Counter()
        self.fault_counts: Counter[str] = Counter()
        self.bad_auth = 0
        self.queries: list[str] = []  # each chat request's query string (a provider's key may ride there)
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "server is not running"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def fault_for(self, key: str, attempt: int) -> str | None:
        if attempt >= self.max_faults or _unit(self.seed, "fault", key, attempt) >= self.fault_rate:
            return None
        return self.faults[int(_unit(self.seed, "kind", key, attempt) * len(self.faults))]

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("content-length") or 0)
        body = json.loads(handler.rfile.read(length) or b"{}")
        path, _, query = handler.path.partition("?")
        if path != "/v1/chat/completions":  # as a real server answers a request sent elsewhere
            return _send(handler, 404, {"error": {"message": f"no route {path}"}})
        key = request_key(body)
        with self._lock:
            self.queries.append(query)
            self.requests += 1
            attempt = self.attempts[key]
            self.attempts[key] += 1
            refused = (
                self.api_key is not None and handler.headers.get("authorization") != f"Bearer {self.api_key}"
            )
            self.bad_auth += refused
        if refused:
            return _send(handler, 401, {"error": {"message": "invalid api key"}})
        words = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
        if self.context_words is not None and words > self.context_words:
            message = (
                f"This model's maximum context length is {self.context_words} tokens. However, you requested "
                f"{words} tokens in the messages. Please reduce the length of the messages."
            )
            return _send(handler, 400, {"error": {"message": message, "code": "context_length_exceeded"}})
        fault = self.fault_for(key, attempt)
        if self.latency:
            time.sleep(self.latency)
        if fault:
            with self._lock:
                self.fault_counts[fault] += 1
        if fault == "429":
            return _send(handler, 429, {"error": {"message": "rate limited"}}, {"retry-after-ms": "20"})
        if fault == "500":
            return _send(handler, 500, {"error": {"message": "internal error"}})
        if fault == "timeout":
            time.sleep(self.hang)
        if fault == "malformed":
            return _send(handler, 200, b'{"id": "x", "choices": [{"message": ')
        text = self.responder(body.get("messages", []))
        if fault != "timeout":  # the client gave up waiting: not an answer it received
            with self._lock:
                self.served[key] += 1
        counted = {
            "prompt_tokens": words,
            "completion_tokens": len((text or "").split()),
            "total_tokens": words + len((text or "").split()),
        }
        _send(
            handler,
            200,
            {
                "id": f"chatcmpl-{key}",
                "object": "chat.completion",
                "created": 0,
                "model": body.get("model", "fake"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": "stop" if text is not None else "content_filter",
                    }
                ],
                "usage": counted if self.usage is None else self.usage,
            },
            content_type=self.content_type,
        )

    def __enter__(self) -> FakeChatServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out in separate writes: no 40 ms stalls

            def do_POST(self):  # noqa: N802 (http.server's naming)
                try:
                    server._handle(self)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout fault): nothing to answer

            def log_message(self, *args):  # keep test output clean
                pass

        self._httpd = _Server(("127.0.0.1", self.port), Handler)  # port 0: a free one
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        if self._httpd:
            self._httpd.shutdown()
            self._httpd.server_close()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 512  # the listen backlog: room for a burst of concurrent clients


def _send(
    handler: BaseHTTPRequestHandler,
    status: int,
    payload: Any,
    headers: dict[str, str] | None = None,
    content_type: str = "application/json",
) -> None:
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    handler.send_response(status)
    handler.send_header("content-type", content_type)
    handler.send_header("content-length", str(len(data)))
    for k, v in (headers or {}).items():
        handler.send_header(k, v)
    handler.end_headers()
    handler.wfile.write(data)


def main(argv: list[str] | None = None) -> int:
    """``python -m biasaware.judging.fake_server``: serve the fake endpoint until Ctrl-C, to rehearse an
    LLM build or judge offline (``--llm-base-url`` / ``--base-url`` set to the address it prints)."""
    parser = argparse.ArgumentParser(
        prog="python -m biasaware.judging.fake_server",
        description="A localhost OpenAI-compatible chat endpoint with latency and injected faults.",
    )
    parser.add_argument("--port", type=int, default=8000, help="the port (default 8000; 0: a free one)")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before each answer")
    parser.add_argument(
        "--fault-rate", type=float, default=0.0, help=f"the share of tries failed ({', '.join(FAULTS)})"
    )
    parser.add_argument("--seed", type=int, default=0, help="decides which tries fail")
    parser.add_argument(
        "--api-key-env", metavar="NAME", help="answer only requests with the key in this variable"
    )
    args = parser.parse_args(argv)
    key = os.environ.get(args.api_key_env) if args.api_key_env else None
    if args.api_key_env and not key:
        parser.error(f"--api-key-env {args.api_key_env}: that environment variable is not set")
    server = FakeChatServer(
        latency=args.latency, fault_rate=args.fault_rate, seed=args.seed, api_key=key, port=args.port
    )
    try:
        with server:
            print(f"serving {server.base_url} (any model name; Ctrl-C stops)", flush=True)
            threading.Event().wait()
    except OSError as exc:  # the port is taken, or not ours to open
        parser.error(f"cannot listen on port {args.port}: {exc.strerror}")
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

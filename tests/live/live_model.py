"""A scripted model on 127.0.0.1: the agent host talks to it as to its real API.

The script is a few tool calls, then "done": with N tool results in the conversation the
model asks for call N + 1 (one call per turn); once every call has its result it answers
with text. Requests that carry no tools (title generation, a quota probe) get a short text
answer. Every request is kept in ``requests`` (path and parsed body) so a test can see
what came back from the tool.

Dialects: Anthropic Messages (``/v1/messages``, SSE when ``stream`` is true); OpenAI
Responses (``/v1/responses``, SSE; a call's ``tool`` may be a function the request offers,
picked by ``Call.pick`` from the request's tools, for hosts whose shell tool name varies); Gemini
(``/v1beta/models/M:generateContent`` and ``:streamGenerateContent?alt=sse``; a request for
JSON output gets an object filled from its schema, e.g. the CLI's routing and
next-speaker checks).
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import attrs

DONE = "done"


@attrs.frozen
class Call:
    tool: str
    tool_input: dict[str, Any]
    # For Responses hosts: (tool name, arguments) for the first offered tool that has an entry.
    alternatives: tuple[tuple[str, dict[str, Any]], ...] = ()
    # Run (once, in the server's thread) before the model asks for this call: what the person
    # does while the agent waits, e.g. approve the call just refused so that it can be retried.
    before: Callable[[], None] | None = attrs.field(default=None, eq=False)

    def pick(self, offered: list[str]) -> tuple[str, dict[str, Any]]:
        for name, args in ((self.tool, self.tool_input), *self.alternatives):
            if name in offered:
                return name, args
        return self.tool, self.tool_input


class Script:
    def __init__(self, *calls: Call) -> None:
        self.calls = calls
        self._before_done: set[int] = set()
        self._lock = threading.Lock()

    def next_call(self, results_so_far: int) -> Call | None:
        if results_so_far >= len(self.calls):
            return None
        call = self.calls[results_so_far]
        if call.before is not None:
            with self._lock:
                if results_so_far not in self._before_done:
                    self._before_done.add(results_so_far)
                    call.before()
        return call


class ScriptedModel:
    def __init__(self, script: Script) -> None:
        self.script = script
        self.requests: list[tuple[str, Any]] = []
        self._lock = threading.Lock()
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_HEAD(self) -> None:
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_GET(self) -> None:
                model._record(self.path, None)
                self._json(200, {"data": [], "has_more": False})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"null")
                except ValueError:
                    body = None
                model._record(self.path, body)
                path = self.path.split("?", 1)[0]
                if ":countTokens" in path:
                    self._json(200, {"totalTokens": 10})
                elif ":generateContent" in path or ":streamGenerateContent" in path:
                    self._gemini(body if isinstance(body, dict) else {}, stream="streamGenerateContent" in path)
                elif path.endswith("/responses") and isinstance(body, dict):
                    self._responses(body)
                elif path.endswith("/messages/count_tokens"):
                    self._json(200, {"input_tokens": 10})
                elif path.endswith("/messages") and isinstance(body, dict):
                    self._anthropic(body)
                else:
                    self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": path}})

            def _json(self, status: int, obj: Any) -> None:
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _gemini(self, body: dict[str, Any], stream: bool) -> None:
                reply = {
                    "candidates": [
                        {
                            "content": {"role": "model", "parts": model.gemini_parts(body)},
                            "finishReason": "STOP",
                            "index": 0,
                        }
                    ],
                    "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
                    "modelVersion": "gemini-scripted",
                }
                if not stream:
                    self._json(200, reply)
                    return
                data = f"data: {json.dumps(reply)}\r\n\r\n".encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _responses(self, body: dict[str, Any]) -> None:
                item = model.responses_item(body)
                resp_id = "resp_" + uuid.uuid4().hex[:20]
                usage = {
                    "input_tokens": 10,
                    "input_tokens_details": {"cached_tokens": 0},
                    "output_tokens": 5,
                    "output_tokens_details": {"reasoning_tokens": 0},
                    "total_tokens": 15,
                }
                base = {"id": resp_id, "object": "response", "model": str(body.get("model") or "gpt-scripted")}
                events = [
                    (
                        "response.created",
                        {"type": "response.created", "response": {**base, "status": "in_progress", "output": []}},
                    ),
                    (
                        "response.output_item.added",
                        {"type": "response.output_item.added", "output_index": 0, "item": item},
                    ),
                    (
                        "response.output_item.done",
                        {"type": "response.output_item.done", "output_index": 0, "item": item},
                    ),
                    (
                        "response.completed",
                        {
                            "type": "response.completed",
                            "response": {**base, "status": "completed", "output": [item], "usage": usage},
                        },
                    ),
                ]
                if not body.get("stream"):
                    self._json(200, events[-1][1]["response"])
                    return
                data = "".join(f"event: {k}\ndata: {json.dumps(v)}\n\n" for k, v in events).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _anthropic(self, body: dict[str, Any]) -> None:
                blocks = model.anthropic_blocks(body)
                stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
                msg_id = "msg_" + uuid.uuid4().hex[:20]
                usage = {"input_tokens": 10, "output_tokens": 5}
                name = str(body.get("model") or "claude-scripted")
                if not body.get("stream"):
                    self._json(
                        200,
                        {
                            "id": msg_id,
                            "type": "message",
                            "role": "assistant",
                            "model": name,
                            "content": blocks,
                            "stop_reason": stop,
                            "stop_sequence": None,
                            "usage": usage,
                        },
                    )
                    return
                events: list[tuple[str, dict[str, Any]]] = [
                    (
                        "message_start",
                        {
                            "type": "message_start",
                            "message": {
                                "id": msg_id,
                                "type": "message",
                                "role": "assistant",
                                "model": name,
                                "content": [],
                                "stop_reason": None,
                                "stop_sequence": None,
                                "usage": {"input_tokens": 10, "output_tokens": 1},
                            },
                        },
                    )
                ]
                for i, b in enumerate(blocks):
                    if b["type"] == "text":
                        start = {"type": "text", "text": ""}
                        delta = {"type": "text_delta", "text": b["text"]}
                    else:
                        start = {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}
                        delta = {"type": "input_json_delta", "partial_json": json.dumps(b["input"])}
                    events.append(
                        ("content_block_start", {"type": "content_block_start", "index": i, "content_block": start})
                    )
                    events.append(("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}))
                    events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
                events.append(
                    (
                        "message_delta",
                        {
                            "type": "message_delta",
                            "delta": {"stop_reason": stop, "stop_sequence": None},
                            "usage": {"output_tokens": 5},
                        },
                    )
                )
                events.append(("message_stop", {"type": "message_stop"}))
                data = "".join(f"event: {k}\ndata: {json.dumps(v)}\n\n" for k, v in events).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    # --- the script ---------------------------------------------------------------------

    def anthropic_blocks(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        call = self.script.next_call(len(anthropic_results(body))) if body.get("tools") else None
        if call is None:
            return [{"type": "text", "text": DONE}]
        return [
            {"type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:20], "name": call.tool, "input": call.tool_input}
        ]

    def responses_item(self, body: dict[str, Any]) -> dict[str, Any]:
        offered = [str(t.get("name")) for t in body.get("tools") or [] if isinstance(t, dict)]
        call = self.script.next_call(len(responses_results(body))) if offered else None
        if call is None:
            return {
                "type": "message",
                "id": "msg_" + uuid.uuid4().hex[:20],
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": DONE, "annotations": []}],
            }
        name, args = call.pick(offered)
        return {
            "type": "function_call",
            "id": "fc_" + uuid.uuid4().hex[:20],
            "call_id": "call_" + uuid.uuid4().hex[:20],
            "name": name,
            "arguments": json.dumps(args),
            "status": "completed",
        }

    def gemini_parts(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        config = body.get("generationConfig") or {}
        if config.get("responseMimeType") == "application/json":
            schema = config.get("responseJsonSchema") or config.get("responseSchema") or {}
            return [{"text": json.dumps(fill_schema(schema))}]
        call = self.script.next_call(len(gemini_results(body))) if body.get("tools") else None
        if call is None:
            return [{"text": DONE}]
        return [{"functionCall": {"name": call.tool, "args": call.tool_input}}]

    # --- bookkeeping --------------------------------------------------------------------

    def _record(self, path: str, body: Any) -> None:
        with self._lock:
            self.requests.append((path, body))

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def tool_results(self) -> list[dict[str, Any]]:
        """Every tool result the host sent back, in order, once per call (Anthropic or Gemini shape)."""
        out: dict[str, dict[str, Any]] = {}
        for _, body in list(self.requests):
            if isinstance(body, dict):
                for r in anthropic_results(body):
                    out.setdefault(str(r.get("tool_use_id")), r)
                for r in responses_results(body):
                    out.setdefault(str(r.get("call_id")), r)
                for i, g in enumerate(gemini_results(body)):
                    out.setdefault(f"gemini-{i}", g)
        return list(out.values())

    def __enter__(self) -> ScriptedModel:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()


def anthropic_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    found = []
    for m in body.get("messages") or []:
        content = m.get("content") if isinstance(m, dict) else None
        if isinstance(content, list):
            found += [c for c in content if isinstance(c, dict) and c.get("type") == "tool_result"]
    return found


def responses_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool outputs in a Responses request's input, in order."""
    items = body.get("input")
    if not isinstance(items, list):
        return []
    return [i for i in items if isinstance(i, dict) and str(i.get("type", "")).endswith("_call_output")]


def gemini_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The functionResponse parts of a Gemini request, in order."""
    found = []
    for c in body.get("contents") or []:
        for part in (c.get("parts") if isinstance(c, dict) else None) or []:
            if isinstance(part, dict) and isinstance(part.get("functionResponse"), dict):
                found.append(part["functionResponse"])
    return found


def fill_schema(schema: Any) -> Any:
    """A value of a JSON schema's shape; an enum takes "user" when it can (the next-speaker check)."""
    if not isinstance(schema, dict):
        return None
    kind = str(schema.get("type", "object")).lower()
    if "enum" in schema:
        return "user" if "user" in schema["enum"] else schema["enum"][0]
    if kind == "object":
        return {k: fill_schema(v) for k, v in (schema.get("properties") or {}).items()}
    if kind == "array":
        return []
    if kind in ("number", "integer"):
        return schema.get("minimum", 1)
    if kind == "boolean":
        return False
    return "scripted"


def result_text(result: dict[str, Any]) -> str:
    if "response" in result:  # Gemini functionResponse
        return json.dumps(result["response"])
    if "call_id" in result:  # Responses *_call_output
        out = result.get("output")
        return out if isinstance(out, str) else json.dumps(out)
    content = result.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(c.get("text", "") for c in content if isinstance(c, dict))
    return ""

"""A stand-in for llama-cpp-python's OpenAI server, as an httpx MockTransport handler.

It answers the way the real one was seen to (tests/test_real.py runs the real one): a
``response_format`` of type ``json_schema`` is a 500 whose body holds pydantic's validation error;
``{"type": "json_object", "schema": …}`` is honoured (here: the reply fills every property); a
schema with a ``maxLength`` above ``grammar_limit`` takes the "server" down (every later call is a
connect error), as llama.cpp's grammar builder did; ``max_tokens`` beyond the context left is cut
to it and answered ``length``; no cost is reported; ``/v1/models`` says only the alias;
``/extras/tokenize/count`` counts one token per three characters.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import httpx

VALIDATION_500 = ("1 validation error:\n  {'type': 'literal_error', 'loc': ('body', "
                  "'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\","
                  " 'input': 'json_schema', 'ctx': {'expected': \"'text' or 'json_object'\"}}\n\n"
                  "  File \"/venv/lib/python3.11/site-packages/llama_cpp/server/app.py\", line 376, "
                  "in create_chat_completion\n    POST /v1/chat/completions")
"""The body llama-cpp-python 0.3.36 sends (seen from the real server)."""

VALIDATION_500_PYDANTIC = ("1 validation error for CreateChatCompletionRequest\n"
                           "response_format.type\n  Input should be 'text' or 'json_object' "
                           "[type=literal_error, input_value='json_schema', input_type=str]")
"""The same refusal as pydantic prints it (other servers, other versions)."""


@dataclass
class FakeLlamaCpp:
    """The fake server's state: what it was sent, and whether it is still up."""

    n_ctx: int = 4096
    alias: str = "smollm2-135m"
    grammar_limit: int = 1000
    answer: str = "ledger service port: 62114\ninstall lock path: unknown"
    n_predict: int | None = None
    """A server-side cap on output tokens (llama.cpp's ``--n-predict``)."""
    dead: bool = False
    bodies: list[dict] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)

    def tokens(self, text: str) -> int:
        return max(1, len(text) // 3)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if self.dead:
            raise httpx.ConnectError("connection refused")
        self.paths.append(request.url.path)
        if request.url.path.endswith("/models"):
            return httpx.Response(200, json={"object": "list", "data": [
                {"id": self.alias, "object": "model", "owned_by": "me", "permissions": []}]})
        if request.url.path == "/extras/tokenize/count":
            body = json.loads(request.content)
            return httpx.Response(200, json={"count": self.tokens(body["input"])})
        if request.url.path == "/extras/tokenize":
            body = json.loads(request.content)
            return httpx.Response(200, json={"tokens": [ord(c) for c in body["input"][:64]]})
        if not request.url.path.endswith("/chat/completions"):
            return httpx.Response(404, json={"detail": "Not Found"})
        body = json.loads(request.content)
        self.bodies.append(body)
        rf = body.get("response_format")
        if isinstance(rf, dict) and rf.get("type") not in ("text", "json_object"):
            return httpx.Response(500, json={"error": {
                "message": VALIDATION_500, "type": "internal_server_error", "param": None,
                "code": None}})
        prompt = self.tokens("".join(m.get("content") or "" for m in body["messages"]))
        if prompt >= self.n_ctx:
            return httpx.Response(400, json={"error": {
                "message": f"This model's maximum context length is {self.n_ctx} tokens",
                "type": "invalid_request_error", "param": "messages",
                "code": "context_length_exceeded"}})
        budget = min(body.get("max_tokens") or self.n_ctx, self.n_ctx - prompt,
                     self.n_predict or self.n_ctx)
        schema = rf.get("schema") if isinstance(rf, dict) else None
        if isinstance(schema, dict):
            limits = [p.get("maxLength", 0) for p in (schema.get("properties") or {}).values()]
            if max(limits, default=0) > self.grammar_limit:
                self.dead = True  # the grammar builder gave up and took the server with it
                raise httpx.RemoteProtocolError("server disconnected")
            content = json.dumps({name: ("ok" if prop.get("type") == "string" else [])
                                  for name, prop in (schema.get("properties") or {}).items()})
        elif body["messages"][0]["content"].startswith("You are a capability probe"):
            content = "{}"
        elif body["messages"][0]["content"].startswith("You are continuing an agent session"):
            content = self.answer  # the recall turn
        else:
            content = "## Facts and values\nledger service port 62114"
        written = self.tokens(content)
        finish = "stop"
        if written > budget:
            content, written, finish = content[: budget * 3], budget, "length"
        return httpx.Response(200, json={
            "id": "chatcmpl-fake", "object": "chat.completion", "created": 1, "model": self.alias,
            "choices": [{"index": 0, "finish_reason": finish,
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": written,
                      "total_tokens": prompt + written}})

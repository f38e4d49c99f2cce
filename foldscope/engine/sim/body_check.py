"""Checks a chat request body's shape before a simulated model reads it, so a hostile or
mistyped body gets a 400 naming the parameter instead of crashing the endpoint."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

MAX_DEPTH = 64
"""Deepest JSON nesting accepted; real chat bodies nest a handful of levels (a schema inside
``response_format``), and a 100k-deep array would exhaust the parser's stack."""


@dataclass(frozen=True)
class BodyProblem:
    """Why a body was refused: a one-line message and the offending parameter (dotted path)."""

    message: str
    param: str | None = None


def decode_body(raw: bytes) -> Any | BodyProblem:
    """Decode a request body as JSON, refusing invalid UTF-8, invalid or too deeply nested JSON.

    Args:
        raw: the body bytes.

    Returns:
        The decoded value, or a :class:`BodyProblem`.
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return BodyProblem(f"request body is not UTF-8 (byte {exc.start})")
    try:
        value = json.loads(text)
    except RecursionError:  # the C parser stops at the interpreter's recursion limit
        return BodyProblem(f"request body nests deeper than {MAX_DEPTH} levels")
    except ValueError:
        return BodyProblem("request body is not valid JSON")
    # Anything that re-serialises the body (its digest) recurses per level too.
    if _depth(value) > MAX_DEPTH:
        return BodyProblem(f"request body nests deeper than {MAX_DEPTH} levels")
    return value


def decoded_as(value: Any) -> Any | BodyProblem:
    """What :func:`decode_body` answers for UTF-8 bytes known to decode to ``value`` (the JSON
    of a body without lone surrogates, e.g. a client's own): ``value``, or the nesting problem."""
    if _depth(value) > MAX_DEPTH:
        return BodyProblem(f"request body nests deeper than {MAX_DEPTH} levels")
    return value


def _depth(value: Any) -> int:
    # The deepest level of a dict or list (1 for the value itself), or the first level found
    # past MAX_DEPTH; only containers go on the stack (a body's strings and numbers are most
    # of its items).
    if not isinstance(value, (dict, list)):
        return 0
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if level > deepest:
            deepest = level
            if deepest > MAX_DEPTH:
                return deepest
        below = level + 1
        for child in item.values() if isinstance(item, dict) else item:
            if isinstance(child, (dict, list)):
                stack.append((child, below))
    return deepest


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# One C-speed scan per string: a per-character Python test cost ~20 ms per 100k-character body.
_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def _lone_surrogate(value: Any, path: str) -> str | None:
    """The path of the first string (key or value) holding a lone UTF-16 surrogate, or None."""
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            if not item.isascii() and _SURROGATE_RE.search(item):
                return where
        elif isinstance(item, dict):
            for key, sub in item.items():
                sub_path = f"{where}.{key}" if where else str(key)
                if not key.isascii() and _SURROGATE_RE.search(key):
                    return where or "(body)"
                stack.append((sub, sub_path))
        elif isinstance(item, list):
            stack.extend((sub, f"{where}[{i}]") for i, sub in enumerate(item))
    return None


# A lone surrogate can enter a decoded body only through a JSON escape (``\\udc80``): strict
# UTF-8 decoding refuses encoded surrogates. A body whose bytes hold no such escape (the usual
# case) holds none, so its strings need not be scanned (a fold's are ~100k characters).
_SURROGATE_ESCAPE_RE = re.compile(rb"\\u[dD][89a-fA-F]")


def may_hold_surrogate(raw: bytes) -> bool:
    """False when a body decoded from these bytes (``decode_body``) cannot hold a surrogate."""
    return _SURROGATE_ESCAPE_RE.search(raw) is not None


def check_chat_body(body: Any, *, surrogates: bool = True) -> BodyProblem | None:
    """Refuse a chat completion body whose fields have the wrong type.

    Only the fields a simulated model reads are checked; unknown fields pass, as on a real
    endpoint.

    Args:
        body: the decoded JSON body.
        surrogates: whether the body may hold a lone surrogate (False, by
            :func:`may_hold_surrogate` of its bytes, skips looking for one).

    Returns:
        The first problem found, or None when the body is usable.
    """
    if not isinstance(body, dict):
        return BodyProblem("request body must be a JSON object")
    where = _lone_surrogate(body, "") if surrogates else None
    if where is not None:
        return BodyProblem("request body contains a lone UTF-16 surrogate", where or None)
    messages = body.get("messages")
    if not isinstance(messages, list):
        return BodyProblem("'messages' must be a list of message objects", "messages")
    for i, msg in enumerate(messages):
        problem = _check_message(msg, f"messages[{i}]")
        if problem:
            return problem
    if not isinstance(body.get("model"), str):
        return BodyProblem("'model' must be a string", "model")
    for name in ("max_tokens", "max_completion_tokens"):
        value = body.get(name)
        if value is not None and not (_is_int(value) and value >= 1):
            return BodyProblem(f"'{name}' must be a positive integer", name)
    for name in ("temperature", "top_p"):
        value = body.get(name)
        if value is not None and not _is_number(value):
            return BodyProblem(f"'{name}' must be a number", name)
    if body.get("seed") is not None and not _is_int(body["seed"]):
        return BodyProblem("'seed' must be an integer", "seed")
    if body.get("stream") is not None and not isinstance(body["stream"], bool):
        return BodyProblem("'stream' must be true or false", "stream")
    stop = body.get("stop")
    if stop is not None and not (isinstance(stop, str) or (
            isinstance(stop, list) and all(isinstance(s, str) for s in stop))):
        return BodyProblem("'stop' must be a string or a list of strings", "stop")
    for name in ("reasoning", "chat_template_kwargs"):
        if body.get(name) is not None and not isinstance(body[name], dict):
            return BodyProblem(f"'{name}' must be an object", name)
    return _check_response_format(body.get("response_format")) or _check_provider(
        body.get("provider"))


def _check_message(msg: Any, where: str) -> BodyProblem | None:
    if not isinstance(msg, dict):
        return BodyProblem(f"'{where}' must be an object", where)
    if not isinstance(msg.get("role"), str):
        return BodyProblem(f"'{where}.role' must be a string", f"{where}.role")
    content = msg.get("content")
    if content is None or isinstance(content, str):
        return None
    if not isinstance(content, list):
        return BodyProblem(f"'{where}.content' must be a string or a list of parts",
                           f"{where}.content")
    for j, part in enumerate(content):
        if not isinstance(part, dict) or not isinstance(part.get("text", ""), str):
            return BodyProblem(f"'{where}.content[{j}]' must be an object with a string 'text'",
                               f"{where}.content[{j}]")
    return None


def _check_response_format(rf: Any) -> BodyProblem | None:
    if rf is None:
        return None
    if not isinstance(rf, dict):
        return BodyProblem("'response_format' must be an object", "response_format")
    if not isinstance(rf.get("type", ""), str):
        return BodyProblem("'response_format.type' must be a string", "response_format.type")
    js = rf.get("json_schema")
    if js is None:
        return None
    if not isinstance(js, dict):
        return BodyProblem("'response_format.json_schema' must be an object",
                           "response_format.json_schema")
    schema = js.get("schema")
    if schema is None:
        return None
    base = "response_format.json_schema.schema"
    if not isinstance(schema, dict):
        return BodyProblem(f"'{base}' must be an object", base)
    props = schema.get("properties")
    if props is not None:
        if not isinstance(props, dict):
            return BodyProblem(f"'{base}.properties' must be an object", f"{base}.properties")
        for name, prop in props.items():
            if not isinstance(prop, dict):
                return BodyProblem(f"'{base}.properties.{name}' must be an object",
                                   f"{base}.properties.{name}")
            if prop.get("maxLength") is not None and not _is_int(prop["maxLength"]):
                return BodyProblem(f"'{base}.properties.{name}.maxLength' must be an integer",
                                   f"{base}.properties.{name}.maxLength")
    required = schema.get("required")
    if required is not None and not (isinstance(required, list)
                                     and all(isinstance(r, str) for r in required)):
        return BodyProblem(f"'{base}.required' must be a list of strings", f"{base}.required")
    return None


def _check_provider(provider: Any) -> BodyProblem | None:
    if provider is None:
        return None
    if not isinstance(provider, dict):
        return BodyProblem("'provider' must be an object", "provider")
    order = provider.get("order")
    if order is not None and not (isinstance(order, list)
                                  and all(isinstance(p, str) for p in order)):
        return BodyProblem("'provider.order' must be a list of strings", "provider.order")
    fallbacks = provider.get("allow_fallbacks")
    if fallbacks is not None and not isinstance(fallbacks, bool):
        return BodyProblem("'provider.allow_fallbacks' must be true or false",
                           "provider.allow_fallbacks")
    return None

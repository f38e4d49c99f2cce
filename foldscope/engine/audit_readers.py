"""Reads agent session files (Claude Code JSONL, generic JSONL, inspect_ai logs) into audit sessions.

Every reader turns a file into :class:`foldscope.core.audit.Session` objects: ordered entries
(who wrote what, on which line) and compaction markers (the summary and its token counts). A line
a reader cannot use — not JSON, not an object, an unknown entry type, a known type with a shape
it cannot read — is counted and its line number kept, never fatal. Files are read locally and
nothing is sent anywhere.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from foldscope.core.audit import AuditFact, Channel, Compaction, Entry, Session, facts_from_data
from foldscope.core.errors import SessionError
from foldscope.core.identifiers import KindRule
from foldscope.core.text import storable
from foldscope.engine.loader import read_toml_file
from foldscope.engine.options import SESSION_FORMATS

FORMATS = SESSION_FORMATS
"""Values of ``--format``."""

INSPECT_HINT = "reading inspect_ai logs needs the optional extra: pip install 'foldscope[inspect]'"

_CC_IGNORED_TYPES = frozenset({"summary", "file-history-snapshot", "queue-operation", "progress",
                               "attachment"})
"""Claude Code entry types that are not conversation turns (titles, file snapshots, queue state,
progress ticks, attachments such as skill listings)."""

_CC_TYPES = frozenset({"user", "assistant", "system"}) | _CC_IGNORED_TYPES

_TOOL_ROLES = frozenset({"tool", "tool_result", "function", "ipython"})


def flatten(value: Any) -> str:
    """A tool call's arguments as plain lines (``key: value``), so identifiers inside them stand
    as they were typed rather than JSON-escaped (``"a\\nPORT_X"`` would glue a word to ``PORT_X``)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "\n".join(f"{key}: {flatten(item)}" for key, item in value.items())
    if isinstance(value, list):
        return "\n".join(flatten(item) for item in value)
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False)


@dataclass
class _Builder:
    """Collects entries and compactions while a reader walks a file."""

    format: str
    items: list[Entry | Compaction] = field(default_factory=list)
    skipped: list[int] = field(default_factory=list)

    def add(self, at: int, channel: Channel, text: str) -> None:
        if text and text.strip():
            self.items.append(Entry(at, channel, storable(text)))

    def compaction(self, compaction: Compaction) -> None:
        self.items.append(replace(compaction, summary=storable(compaction.summary)))

    def session(self, name: str | None = None) -> Session:
        return Session(tuple(self.items), self.format, len(self.skipped), tuple(self.skipped), name)


def _json_lines(lines: Iterable[str], builder: _Builder) -> Iterable[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for every line holding a JSON object; others are counted."""
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            builder.skipped.append(number)
            continue
        if not isinstance(obj, dict):
            builder.skipped.append(number)
            continue
        yield number, obj


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


# --- Claude Code -------------------------------------------------------------------------------


def _block_text(content: Any) -> str | None:
    """The text of a string or a list of text blocks (images and the like have none)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        return "\n".join(p for p in parts if isinstance(p, str))
    return None


def _cc_blocks(at: int, role: str, content: Any, builder: _Builder) -> bool:
    """Add one Claude Code message's content; False when its shape is unreadable."""
    if isinstance(content, str):
        builder.add(at, "assistant" if role == "assistant" else "user", content)
        return True
    if not isinstance(content, list):
        return False
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            builder.add(at, "assistant" if role == "assistant" else "user", block["text"])
        elif kind == "thinking" and isinstance(block.get("thinking"), str):
            builder.add(at, "assistant", block["thinking"])
        elif kind == "tool_use":
            name = block.get("name") if isinstance(block.get("name"), str) else ""
            builder.add(at, "tool_call", f"{name}\n{flatten(block.get('input'))}".strip())
        elif kind == "tool_result":
            builder.add(at, "tool_output", _block_text(block.get("content")) or "")
    return True


def read_claude_code(lines: Iterable[str], name: str | None = None) -> Session:
    """Read a Claude Code session (``~/.claude/projects/<project>/<session>.jsonl``).

    A compaction is a ``system`` entry with ``subtype: "compact_boundary"`` (token counts in
    ``compactMetadata``: ``preTokens``, and ``postTokens`` where present) followed by a ``user``
    entry with ``isCompactSummary: true`` whose message is the summary; a summary entry without a
    boundary is a compaction too. Sub-agent (``isSidechain``) entries are not the main
    conversation and are left out; title and file-snapshot entries carry no conversation.
    """
    builder = _Builder("claude-code")
    awaiting: int | None = None  # index in items of a boundary still waiting for its summary
    for at, obj in _json_lines(lines, builder):
        kind = obj.get("type")
        if not isinstance(kind, str) or kind not in _CC_TYPES:
            builder.skipped.append(at)
            continue
        if kind in _CC_IGNORED_TYPES or obj.get("isSidechain") is True:
            continue
        if kind == "system":
            if obj.get("subtype") == "compact_boundary":
                meta = obj.get("compactMetadata")
                meta = meta if isinstance(meta, dict) else {}
                builder.compaction(Compaction(
                    at, "", _int_or_none(meta.get("preTokens")), _int_or_none(meta.get("postTokens")),
                    trigger=meta.get("trigger") if isinstance(meta.get("trigger"), str) else None))
                awaiting = len(builder.items) - 1
            elif isinstance(obj.get("content"), str):
                builder.add(at, "system", obj["content"])
            continue
        message = obj.get("message")
        if not isinstance(message, dict):
            builder.skipped.append(at)
            continue
        if kind == "user" and obj.get("isCompactSummary") is True:
            summary = _block_text(message.get("content"))
            if summary is None:
                builder.skipped.append(at)
                continue
            if awaiting is not None:
                marker = builder.items[awaiting]
                assert isinstance(marker, Compaction)
                builder.items[awaiting] = replace(marker, summary=storable(summary))
            else:
                builder.compaction(Compaction(at, summary))
            awaiting = None
            continue
        if not _cc_blocks(at, kind, message.get("content"), builder):
            builder.skipped.append(at)
    return builder.session(name)


# --- generic JSONL -----------------------------------------------------------------------------


def _tool_call_text(call: Any) -> str | None:
    if not isinstance(call, dict):
        return None
    function = call.get("function")
    inner = function if isinstance(function, dict) else call
    name = inner.get("name") if isinstance(inner.get("name"), str) else ""
    args = inner.get("arguments", inner.get("input"))
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            pass
    return f"{name}\n{flatten(args)}".strip()


def read_generic(lines: Iterable[str], name: str | None = None) -> Session:
    """Read the generic session JSONL any runtime can emit (documented in the README).

    Message lines are ``{"role": "user"|"assistant"|"system"|"tool", "content": ...}`` (content a
    string or a list of ``{"type": "text", "text": ...}`` blocks), optionally with ``tool_calls``
    (``[{"name", "arguments"}]``, also the OpenAI ``{"function": {...}}`` shape). A compaction is
    ``{"type": "compaction", "summary": "...", "tokens_before": N, "tokens_after": N}`` (token
    counts and ``trigger`` optional).
    """
    builder = _Builder("jsonl")
    for at, obj in _json_lines(lines, builder):
        if obj.get("type") == "compaction":
            summary = obj.get("summary")
            if not isinstance(summary, str):
                builder.skipped.append(at)
                continue
            trigger = obj.get("trigger") if isinstance(obj.get("trigger"), str) else None
            builder.compaction(Compaction(at, summary, _int_or_none(obj.get("tokens_before")),
                                          _int_or_none(obj.get("tokens_after")), trigger=trigger))
            continue
        role = obj.get("role")
        content = obj.get("content")
        text = _block_text(content) if content is not None else ""
        calls = obj.get("tool_calls")
        if not isinstance(role, str) or text is None or (calls is not None and not isinstance(calls, list)):
            builder.skipped.append(at)
            continue
        channel: Channel = ("tool_output" if role in _TOOL_ROLES else
                            "assistant" if role == "assistant" else
                            "system" if role in ("system", "developer") else "user")
        builder.add(at, channel, text)
        for call in calls or []:
            call_text = _tool_call_text(call)
            if call_text:
                builder.add(at, "tool_call", call_text)
    return builder.session(name)


# --- inspect_ai --------------------------------------------------------------------------------


def _message_text(message: Any) -> str:
    text = getattr(message, "text", "")
    return text if isinstance(text, str) else ""


def _inspect_sample(sample: Any) -> Session:
    """One inspect_ai sample: its messages as entries, its compactions as markers.

    A summary compaction leaves a user message flagged ``metadata["summary"]`` in the history: that
    message is the summary, paired in order with the ``CompactionEvent``s of type ``summary`` for
    the token counts. An edit or trim compaction leaves no message: its "summary" is what the next
    model call was sent, placed before the reply that call produced.
    """
    builder = _Builder("inspect")
    messages = list(sample.messages or [])
    events = list(sample.events or [])
    compaction_events = [(i, e) for i, e in enumerate(events) if getattr(e, "event", "") == "compaction"]
    summary_events = [e for _i, e in compaction_events if getattr(e, "type", "summary") == "summary"]
    position = {getattr(m, "id", None): n for n, m in enumerate(messages, 1) if getattr(m, "id", None)}
    placed: dict[int, list[Compaction]] = {}
    for index, event in compaction_events:
        if getattr(event, "type", "summary") == "summary":
            continue
        model_call = next((e for e in events[index + 1:] if getattr(e, "event", "") == "model"), None)
        if model_call is None:
            continue
        reply = model_call.output.message if model_call.output and model_call.output.choices else None
        at = position.get(getattr(reply, "id", None))
        if at is None:
            continue
        carried = "\n".join(_message_text(m) for m in model_call.input)
        placed.setdefault(at, []).append(Compaction(
            at, carried, event.tokens_before, event.tokens_after, kind=event.type,
            trigger=(event.metadata or {}).get("trigger") if hasattr(event, "metadata") else None))
    summaries = iter(summary_events)
    for at, message in enumerate(messages, 1):
        for compaction in placed.get(at, []):
            builder.compaction(compaction)
        role = getattr(message, "role", "")
        text = _message_text(message)
        if role == "user" and (getattr(message, "metadata", None) or {}).get("summary"):
            event = next(summaries, None)
            builder.compaction(Compaction(
                at, text, getattr(event, "tokens_before", None), getattr(event, "tokens_after", None),
                trigger=((getattr(event, "metadata", None) or {}).get("trigger") if event else None)))
        elif role == "assistant":
            builder.add(at, "assistant", text)
            for call in getattr(message, "tool_calls", None) or []:
                builder.add(at, "tool_call", f"{call.function}\n{flatten(call.arguments)}".strip())
        elif role == "tool":
            builder.add(at, "tool_output", text)
        else:
            builder.add(at, "system" if role == "system" else "user", text)
    name = f"{sample.id}/{sample.epoch}" if getattr(sample, "epoch", None) is not None else str(sample.id)
    return builder.session(name)


def read_inspect(path: Path) -> list[Session]:
    """Read an inspect_ai eval log (``.eval`` or ``.json``) through inspect_ai's own log API.

    Raises:
        SessionError: inspect_ai is not installed (naming the extra), or the log cannot be read.
    """
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise SessionError(INSPECT_HINT) from None
    try:
        log = read_eval_log(str(path), resolve_attachments=True)
    except Exception as exc:  # noqa: BLE001 - inspect_ai raises many types for a bad file
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise SessionError(f"{path}: not a readable inspect_ai log: {first}") from None
    return [_inspect_sample(sample) for sample in (log.samples or [])]


# --- files -------------------------------------------------------------------------------------


def _detect(path: Path, lines: Sequence[str]) -> str:
    for line in lines[:200]:
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if not isinstance(obj, dict):
            continue
        if obj.get("type") == "compaction" or "role" in obj:
            return "jsonl"
        kind = obj.get("type")
        if isinstance(kind, str) and kind in _CC_TYPES and {"message", "uuid", "sessionId", "subtype"} & set(obj):
            return "claude-code"
    raise SessionError(f"{path}: cannot tell the session format; pass --format "
                       "claude-code, inspect or jsonl")


def _looks_like_inspect(path: Path) -> bool:
    if path.suffix == ".eval":
        return True
    if path.suffix != ".json":
        return False
    try:
        with path.open("rb") as fh:
            head = fh.read(4096).lstrip()
    except OSError:
        return False
    # An inspect_ai JSON log is one pretty-printed object opening with its version and eval spec.
    return head.startswith(b"{") and b'"eval"' in head and b'"version"' in head


def read_sessions(path: str | Path, fmt: str = "auto") -> list[Session]:
    """Read a session file.

    Args:
        path: the file.
        fmt: one of :data:`FORMATS`; ``auto`` tells them apart by content (``.eval`` is inspect).

    Returns:
        The sessions in the file: one for the JSONL formats, one per sample of an inspect log.

    Raises:
        SessionError: the path is missing, unreadable or not in the format (one line).
    """
    path = Path(path)
    if fmt not in FORMATS:
        raise SessionError(f"unknown session format {fmt!r} (choose from {', '.join(FORMATS)})")
    if not path.exists():
        raise SessionError(f"session file not found: {path}")
    if path.is_dir():
        raise SessionError(f"session file is a directory: {path}")
    if fmt == "inspect" or (fmt == "auto" and _looks_like_inspect(path)):
        return read_inspect(path)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise SessionError(f"cannot read session file {path}: {exc.strerror}") from None
    lines = text.splitlines()
    if fmt == "auto":
        fmt = _detect(path, lines)
    reader = read_claude_code if fmt == "claude-code" else read_generic
    return [reader(lines, name=path.stem)]


def read_facts(path: str | Path, rules: Sequence[KindRule] | None = None) -> tuple[AuditFact, ...]:
    """Read a facts file (``[[facts]]`` tables with ``label``, ``value``, optional ``kind``).

    Raises:
        ConfigError: the file is missing or malformed (one line naming it).
    """
    return facts_from_data(read_toml_file(path, "facts file"), source=str(path), rules=rules)

"""Reads agent session files (Claude Code, Codex CLI rollouts, pi sessions, generic JSONL,
inspect_ai logs) into audit items.

The JSONL readers stream: the file is split on ``\\n`` only (never at U+2028 or U+0085, which
serialisers write raw inside JSON strings), a line longer than :data:`MAX_LINE_BYTES` is skipped
without being held in memory, a line nested too deep for the parser is skipped, and items
(entries, compaction markers, the working directory, reported context sizes) are yielded as the
lines go by. A line a reader cannot use — not JSON, not an object, an unknown entry type, a known
type with a shape it cannot read — is counted and its line number kept, never fatal; a file whose
lines are mostly skipped is not in that format, and is refused (:func:`check_read`). Files are
read locally and nothing is sent anywhere.
"""

from __future__ import annotations

import json
import time
import zipfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from foldscope.core.audit import (
    AuditFact,
    Channel,
    Compaction,
    Context,
    Entry,
    Item,
    Session,
    Usage,
    facts_from_data,
)
from foldscope.core.errors import SessionError
from foldscope.core.identifiers import KindRule
from foldscope.core.text import storable
from foldscope.engine.loader import read_toml_file
from foldscope.engine.options import SESSION_FORMATS

FORMATS = SESSION_FORMATS
"""Values of ``--format``."""

JSONL_FORMATS: tuple[str, ...] = ("claude-code", "codex", "pi", "jsonl")
"""The line-by-line formats, in the order auto-detection names them."""

INSPECT_HINT = "reading inspect_ai logs needs the optional extra: pip install 'foldscope[inspect]'"

MAX_LINE_BYTES = 64 * 1024 * 1024
"""A longer line is skipped (a note says so) without being read into memory whole."""

MAX_NESTING = 64
"""Deeper structures in a tool call's arguments are cut there (a session is not a parser test)."""

MAX_EVAL_BYTES = 2 * 1024 * 1024 * 1024
"""An inspect log (zip members uncompressed, or a JSON log) larger than this is refused."""

MAX_EVAL_RATIO = 100
"""A zip member of an inspect log that expands more than this many times (and past
:data:`EVAL_RATIO_FLOOR`) is a zip bomb, refused before anything is unpacked."""

EVAL_RATIO_FLOOR = 32 * 1024 * 1024

_CHUNK = 1024 * 1024

_CC_IGNORED_TYPES = frozenset({"summary", "file-history-snapshot", "queue-operation", "progress",
                               "attachment", "custom-title", "tag", "agent-name", "pr-link",
                               "last-prompt", "worktree-state", "ai-title"})
"""Claude Code entry types that are not conversation turns (titles, file snapshots, queue state,
progress ticks, attachments such as skill listings)."""

_CC_TYPES = frozenset({"user", "assistant", "system"}) | _CC_IGNORED_TYPES

_CODEX_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context",
                          "compacted"})

_PI_TYPES = frozenset({"session", "message", "compaction", "model_change",
                       "thinking_level_change", "custom", "custom_message", "label",
                       "session_info", "branch_summary"})

_TOOL_ROLES = frozenset({"tool", "tool_result", "function", "ipython"})

_SYSTEM_MARKERS = ("<command-name>", "<command-message>", "<local-command-stdout>",
                   "<local-command-stderr>", "<system-reminder>", "Caveat: The messages below",
                   "<environment_context>", "<user_instructions>", "<permissions instructions>",
                   "<task-notification>", "# AGENTS.md instructions for ")
"""Openings of user-turn text the runtime wrote, not the person (slash-command echoes, reminders,
environment blocks, a background task's notification with its own ids, the project
instructions Codex puts in a user turn)."""

_COMMAND_OUTPUT_MARKERS = ("<bash-stdout>", "<bash-stderr>")
"""Openings of user-turn text that is the output of a command the person ran (Claude Code's
``!`` command: ``<bash-input>`` is the person's, its ``<bash-stdout>`` is what the shell
returned): tool output, as pi's ``bashExecution`` output is."""


def flatten(value: Any, depth: int = 0) -> str:
    """A tool call's arguments as plain lines (``key: value``), so identifiers inside them stand
    as they were typed rather than JSON-escaped (``"a\\nPORT_X"`` would glue a word to ``PORT_X``)."""
    if isinstance(value, str):
        return value
    if depth >= MAX_NESTING:
        return ""
    if isinstance(value, dict):
        return "\n".join(f"{key}: {flatten(item, depth + 1)}" for key, item in value.items())
    if isinstance(value, list):
        return "\n".join(flatten(item, depth + 1) for item in value)
    if value is None:
        return ""
    return str(value) if isinstance(value, int | float | bool) else ""


# --- lines ---------------------------------------------------------------------------------------


@dataclass
class ReadState:
    """What a reader noted while streaming a file: skipped lines, notes, the summaries."""

    format: str
    lines: int = 0
    skipped: int = 0
    skipped_at: list[int] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    summaries: list[str] = field(default_factory=list)
    keep_summaries: bool = True
    """False when following a file for hours: summaries are shown as they land, not kept."""

    def skip(self, at: int) -> None:
        self.skipped += 1
        if len(self.skipped_at) < 20:
            self.skipped_at.append(at)

    def keep(self, summary: str) -> None:
        if self.keep_summaries:
            self.summaries.append(summary)

    def note(self, text: str) -> None:
        if len(self.notes) < 20:
            self.notes.append(text)

    def session(self, items: Iterable[Item], name: str | None = None) -> Session:
        return Session(tuple(items), self.format, self.skipped, tuple(self.skipped_at), name,
                       tuple(self.notes))


def file_lines(path: Path, state: ReadState, *, follow: bool = False, poll_s: float = 0.5,
               idle_s: float | None = None, stop: Callable[[], bool] | None = None,
               max_line: int = MAX_LINE_BYTES) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of every line of a file, split on ``\\n`` only.

    Args:
        path: the file.
        state: where oversized lines are counted and noted.
        follow: at the end of the file, wait for more (a session being written) instead of
            stopping; a last line without its newline is held until it is complete.
        poll_s: how often to look for more when following.
        idle_s: when following, stop after the file has not grown for this long (None: never).
        stop: when following, stop as soon as this returns True.
        max_line: longer lines are skipped, and never held in memory whole.

    Raises:
        SessionError: the file cannot be opened or read.
    """
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise SessionError(f"cannot read session file {path}: {exc.strerror}") from None
    with fh:
        number = 0
        pending = bytearray()
        oversized = 0  # bytes of the current line skipped so far (0: not skipping)
        quiet_since = time.monotonic()
        while True:
            try:
                chunk = fh.read(_CHUNK)
            except OSError as exc:
                raise SessionError(f"cannot read session file {path}: {exc.strerror}") from None
            if not chunk:
                if follow and not (stop is not None and stop()) and not (
                        idle_s is not None and time.monotonic() - quiet_since >= idle_s):
                    time.sleep(poll_s)
                    continue
                break
            quiet_since = time.monotonic()
            start = 0
            while True:
                end = chunk.find(b"\n", start)
                if end < 0:
                    rest = chunk[start:]
                    if oversized:
                        oversized += len(rest)
                    elif len(pending) + len(rest) > max_line:
                        oversized = len(pending) + len(rest)
                        pending.clear()
                    else:
                        pending += rest
                    break
                number += 1
                piece = chunk[start:end]
                if oversized:
                    size = oversized + len(piece)
                    oversized = 0
                    _oversized(state, number, size, max_line)
                elif len(pending) + len(piece) > max_line:
                    pending.clear()
                    _oversized(state, number, len(pending) + len(piece), max_line)
                else:
                    if pending:
                        pending += piece
                        line = bytes(pending)
                        pending.clear()
                    else:
                        line = piece
                    yield number, line.decode("utf-8", errors="replace")
                start = end + 1
        if oversized:
            _oversized(state, number + 1, oversized, max_line)
        elif pending:
            yield number + 1, bytes(pending).decode("utf-8", errors="replace")


def _oversized(state: ReadState, at: int, size: int, limit: int) -> None:
    state.skip(at)
    state.note(f"line {at}: {size / 1e6:,.1f} MB, longer than the {limit // (1024 * 1024)} MB "
               "line limit; skipped")


def _numbered(lines: Iterable[str]) -> Iterator[tuple[int, str]]:
    return ((n, line) for n, line in enumerate(lines, 1))


def _objects(lines: Iterable[tuple[int, str]], state: ReadState) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for every line holding a JSON object; others are counted."""
    for number, line in lines:
        if not line.strip():
            continue
        state.lines += 1
        try:
            obj = json.loads(line)
        except RecursionError:
            state.skip(number)
            state.note(f"line {number}: nested too deep to read; skipped")
            continue
        except ValueError:
            state.skip(number)
            continue
        if not isinstance(obj, dict):
            state.skip(number)
            continue
        yield number, obj


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text


def _user_channel(text: str) -> Channel:
    opening = text.lstrip()
    if opening.startswith(_SYSTEM_MARKERS):
        return "system"
    return "tool_output" if opening.startswith(_COMMAND_OUTPUT_MARKERS) else "user"


class _Out:
    """Items a reader yields, with empty texts dropped and text made storable."""

    def __init__(self) -> None:
        self.items: list[Item] = []

    def add(self, at: int, channel: Channel, text: str) -> None:
        if text and not text.isspace():
            self.items.append(Entry(at, channel, storable(text)))

    def take(self) -> list[Item]:
        items, self.items = self.items, []
        return items


# --- Claude Code ---------------------------------------------------------------------------------


def _block_text(content: Any) -> str | None:
    """The text of a string or a list of text blocks (images and the like have none)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") in
                 ("text", "input_text", "output_text")]
        return "\n".join(p for p in parts if isinstance(p, str))
    return None


def _cc_blocks(at: int, role: str, content: Any, out: _Out, meta: bool) -> bool:
    """Add one Claude Code message's content; False when its shape is unreadable."""
    def person(text: str) -> Channel:
        return "assistant" if role == "assistant" else "system" if meta else _user_channel(text)

    if isinstance(content, str):
        out.add(at, person(content), content)
        return True
    if not isinstance(content, list):
        return False
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            out.add(at, person(block["text"]), block["text"])
        elif kind == "thinking" and isinstance(block.get("thinking"), str):
            out.add(at, "assistant", block["thinking"])
        elif kind in ("tool_use", "server_tool_use"):
            name = block.get("name") if isinstance(block.get("name"), str) else ""
            out.add(at, "tool_call", f"{name}\n{flatten(block.get('input'))}".strip())
        elif kind in ("tool_result", "web_search_tool_result"):
            out.add(at, "tool_output", _block_text(block.get("content")) or "")
    return True


def _cc_usage(message: dict[str, Any]) -> int | None:
    usage = message.get("usage")
    if not isinstance(usage, dict):
        return None
    parts = [_int_or_none(usage.get(k)) for k in
             ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")]
    total = sum(p for p in parts if p is not None)
    return total if total > 0 else None


def iter_claude_code(lines: Iterable[tuple[int, str]], state: ReadState) -> Iterator[Item]:
    """Items of a Claude Code session (``~/.claude/projects/<project>/<session>.jsonl``).

    A compaction is a ``system`` entry with ``subtype: "compact_boundary"`` (token counts in
    ``compactMetadata``: ``preTokens``, and ``postTokens`` where present) followed by a ``user``
    entry with ``isCompactSummary: true`` whose message is the summary; a summary entry without a
    boundary is a compaction too. The size after a compaction, where the boundary lacks it, is
    the next model call's usage. Sub-agent (``isSidechain``) entries are not the main
    conversation and are left out; title and file-snapshot entries carry no conversation;
    fields the reader does not know are ignored.
    """
    out = _Out()
    awaiting: Compaction | None = None  # a boundary still waiting for its summary
    cwd: str | None = None
    own: set[str] = set()
    for at, obj in _objects(lines, state):
        kind = obj.get("type")
        if not isinstance(kind, str) or kind not in _CC_TYPES:
            if isinstance(kind, str) and "sessionId" in obj:
                # A Claude Code record of a type added since (e.g. {"type": "mode", "mode":
                # "normal", "sessionId": ...}, with no timestamp): not conversation.
                continue
            state.skip(at)
            continue
        if kind in _CC_IGNORED_TYPES or obj.get("isSidechain") is True:
            continue
        session_id = obj.get("sessionId")
        new_id = session_id if isinstance(session_id, str) and session_id not in own and len(own) < 16 else None
        if (isinstance(obj.get("cwd"), str) and obj["cwd"] != cwd) or new_id:
            if new_id:
                own.add(new_id)
            cwd = obj.get("cwd") if isinstance(obj.get("cwd"), str) else cwd
            yield Context(at, cwd, None, tuple(own))
        if kind == "system":
            if obj.get("subtype") == "compact_boundary":
                if awaiting is not None:
                    yield from _cc_summary(awaiting, "", None, state)
                meta = obj.get("compactMetadata")
                meta = meta if isinstance(meta, dict) else {}
                awaiting = Compaction(
                    at, "", _int_or_none(meta.get("preTokens")), _int_or_none(meta.get("postTokens")),
                    trigger=meta.get("trigger") if isinstance(meta.get("trigger"), str) else None)
            elif isinstance(obj.get("content"), str):
                out.add(at, "system", obj["content"])
                yield from out.take()
            continue
        message = obj.get("message")
        if not isinstance(message, dict):
            state.skip(at)
            continue
        if kind == "user" and obj.get("isCompactSummary") is True:
            summary = _block_text(message.get("content"))
            if summary is None:
                state.skip(at)
                continue
            marker = awaiting if awaiting is not None else Compaction(at, "")
            awaiting = None
            yield from _cc_summary(marker, summary, at, state)
            continue
        if awaiting is not None:  # a boundary whose summary never came: an empty carrier
            yield from _cc_summary(awaiting, "", None, state)
            awaiting = None
        if not _cc_blocks(at, kind, message.get("content"), out, obj.get("isMeta") is True):
            state.skip(at)
            continue
        yield from out.take()
        if kind == "assistant":
            tokens = _cc_usage(message)
            if tokens is not None:
                yield Usage(at, tokens)
    if awaiting is not None:
        yield from _cc_summary(awaiting, "", None, state)


def _cc_summary(marker: Compaction, summary: str, at: int | None, state: ReadState) -> Iterator[Item]:
    text = storable(summary)
    state.keep(text)
    yield Compaction(marker.at, text, marker.tokens_before, marker.tokens_after, marker.kind,
                     marker.trigger, summary_at=at if at is not None and at != marker.at else None,
                     carrier="text" if text.strip() else "empty")


def read_claude_code(lines: Iterable[str], name: str | None = None) -> Session:
    """Read a Claude Code session given as lines (see :func:`iter_claude_code`)."""
    state = ReadState("claude-code")
    items = list(iter_claude_code(_numbered(lines), state))
    return state.session(items, name)


# --- Codex CLI -----------------------------------------------------------------------------------


def _codex_text(content: Any) -> str:
    text = _block_text(content)
    return text or ""


def _codex_output(output: Any) -> str:
    if isinstance(output, dict):
        inner = output.get("output", output.get("content"))
        return _codex_output(inner) if inner is not None else flatten(output)
    if isinstance(output, list):
        return _codex_text(output)
    if isinstance(output, str):
        parsed = _loads(output) if output.startswith("{") else output
        if isinstance(parsed, dict) and isinstance(parsed.get("output"), str):
            return parsed["output"]
        return output
    return ""


def _codex_item(at: int, item: dict[str, Any], out: _Out) -> bool:
    """Add one response item (a message, a tool call or its output, reasoning)."""
    kind = item.get("type")
    if kind == "message":
        role = item.get("role")
        text = _codex_text(item.get("content"))
        if role == "assistant":
            out.add(at, "assistant", text)
        elif role in ("developer", "system"):
            out.add(at, "system", text)
        elif role == "user":
            out.add(at, _user_channel(text), text)
        else:
            return False
    elif kind in ("function_call", "custom_tool_call"):
        name = item.get("name") if isinstance(item.get("name"), str) else ""
        args = item.get("arguments", item.get("input"))
        if isinstance(args, str):
            args = _loads(args)
        out.add(at, "tool_call", f"{name}\n{flatten(args)}".strip())
    elif kind == "local_shell_call":
        action_obj = item.get("action")
        action: dict[str, Any] = action_obj if isinstance(action_obj, dict) else {}
        command = action.get("command")
        text = " ".join(c for c in command if isinstance(c, str)) if isinstance(command, list) else ""
        out.add(at, "tool_call", f"shell\n{text}".strip())
    elif kind in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
        out.add(at, "tool_output", _codex_output(item.get("output")))
    elif kind == "reasoning":
        summary = item.get("summary")
        if isinstance(summary, list):
            out.add(at, "assistant", "\n".join(s.get("text", "") for s in summary
                                               if isinstance(s, dict) and isinstance(s.get("text"), str)))
    elif kind == "web_search_call":
        out.add(at, "tool_call", f"web_search\n{flatten(item.get('action'))}".strip())
    return True


def iter_codex(lines: Iterable[tuple[int, str]], state: ReadState) -> Iterator[Item]:
    """Items of a Codex CLI rollout (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``).

    Lines are ``{"timestamp", "type", "payload"}``: ``session_meta`` and ``turn_context`` (the
    working directory), ``response_item`` (messages, tool calls and their output, reasoning
    summaries), ``event_msg`` (``token_count`` gives context sizes; the rest repeats response
    items) and ``compacted``: a compaction whose summary is its ``message`` plus the person's
    turns its ``replacement_history`` puts back; the runtime's messages there (instructions,
    ``AGENTS.md``, the environment) are carried text, not the task's. A compaction done by the
    server leaves no message, only an encrypted item in the history or none the log shows: its
    carrier is *opaque* (the audit says so, and audits what the agent re-uses after it).
    """
    out = _Out()
    own: set[str] = set()
    for at, obj in _objects(lines, state):
        kind = obj.get("type")
        payload = obj.get("payload")
        if kind not in _CODEX_TYPES or not isinstance(payload, dict):
            if isinstance(kind, str) and isinstance(payload, dict) and "timestamp" in obj:
                continue  # a rollout item of a type added since: not conversation
            state.skip(at)
            continue
        if kind in ("session_meta", "turn_context"):
            ident = payload.get("id")
            if isinstance(ident, str) and len(own) < 16:
                own.add(ident)
            cwd = payload.get("cwd")
            yield Context(at, cwd if isinstance(cwd, str) else None, None, tuple(own))
        elif kind == "response_item":
            if not _codex_item(at, payload, out):
                state.skip(at)
            yield from out.take()
        elif kind == "event_msg":
            if payload.get("type") == "token_count":
                info = payload.get("info")
                last = info.get("last_token_usage") if isinstance(info, dict) else None
                tokens = _int_or_none(last.get("input_tokens")) if isinstance(last, dict) else None
                if tokens:
                    yield Usage(at, tokens)
        else:
            yield _codex_compaction(at, payload, state)


def _codex_compaction(at: int, payload: dict[str, Any], state: ReadState) -> Compaction:
    raw = payload.get("message")
    message: str = raw if isinstance(raw, str) else ""
    texts: list[str] = [message] if message.strip() else []
    carried: list[str] = []
    opaque = False
    history = payload.get("replacement_history")
    for item in history if isinstance(history, list) else []:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "message":
            text = _codex_text(item.get("content"))
            role = item.get("role")
            runtime = role in ("developer", "system") or (role == "user" and _user_channel(text) == "system")
            kept = carried if runtime else texts
            if text.strip() and text not in kept:
                kept.append(text)
        elif item.get("type") in ("compaction", "compaction_summary") or "encrypted_content" in item:
            opaque = True
    summary = storable("\n".join(texts))
    state.keep(summary)
    # The summary is the message. Without one, a replacement history holds the person's turns
    # and the runtime's instructions put back as they were, and the summary the model was given
    # is the encrypted item there, or no item the log shows (a compaction done by the server):
    # opaque either way. No message and an empty history: nothing was carried.
    carrier = "text" if message.strip() else "opaque" if opaque or texts or carried else "empty"
    return Compaction(at, summary, kind="compacted", carrier=carrier,  # type: ignore[arg-type]
                      carried=storable("\n".join(carried)))


# --- pi ------------------------------------------------------------------------------------------


def _pi_usage(message: dict[str, Any]) -> int | None:
    usage = message.get("usage")
    if not isinstance(usage, dict):
        return None
    parts = [_int_or_none(usage.get(k)) for k in ("input", "cacheRead", "cacheWrite")]
    total = sum(p for p in parts if p is not None)
    return total if total > 0 else None


def _pi_message(at: int, message: dict[str, Any], out: _Out) -> bool:
    role = message.get("role")
    content = message.get("content")
    if role == "user":
        text = _block_text(content)
        if text is None:
            return False
        out.add(at, _user_channel(text), text)
    elif role == "assistant":
        if isinstance(content, str):
            out.add(at, "assistant", content)
            return True
        if not isinstance(content, list):
            return False
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                out.add(at, "assistant", block["text"])
            elif block.get("type") == "thinking" and isinstance(block.get("thinking"), str):
                out.add(at, "assistant", block["thinking"])
            elif block.get("type") == "toolCall":
                name = block.get("name") if isinstance(block.get("name"), str) else ""
                out.add(at, "tool_call", f"{name}\n{flatten(block.get('arguments'))}".strip())
    elif role == "toolResult":
        out.add(at, "tool_output", _block_text(content) or "")
    elif role == "bashExecution":
        command = message.get("command")
        out.add(at, "user", f"!{command}" if isinstance(command, str) else "")
        output = message.get("output")
        out.add(at, "tool_output", output if isinstance(output, str) else "")
    elif role in ("custom", "hookMessage"):
        out.add(at, "system", _block_text(content) or "")
    elif role in ("branchSummary", "compactionSummary"):
        summary = message.get("summary")
        out.add(at, "system", summary if isinstance(summary, str) else "")
    else:
        return False
    return True


def iter_pi(lines: Iterable[tuple[int, str]], state: ReadState) -> Iterator[Item]:
    """Items of a pi coding-agent session (``~/.pi/agent/sessions/--<path>--/<id>.jsonl``).

    The first line is the ``session`` header (its ``cwd``); ``message`` entries hold user,
    assistant (text, thinking and ``toolCall`` blocks, with usage), ``toolResult`` and
    ``bashExecution`` messages; a ``compaction`` entry holds the summary, ``tokensBefore`` and
    ``firstKeptEntryId``: the entries from that one on stay in the context verbatim, carried
    rather than replaced. The file lists of its ``details`` are part of what it carries.
    """
    out = _Out()
    positions: dict[str, int] = {}  # entry id → line, since the last compaction
    by_index: dict[int, int] = {}  # entry index → line (version 1 sessions name kept entries so)
    index = -1
    for at, obj in _objects(lines, state):
        if obj.get("type") != "session":
            index += 1
            if len(by_index) < 1_000_000:
                by_index[index] = at
        kind = obj.get("type")
        if kind not in _PI_TYPES:
            if isinstance(kind, str) and "id" in obj and "parentId" in obj:
                continue  # an entry of a type added since (extensions add their own)
            state.skip(at)
            continue
        entry_id = obj.get("id")
        if isinstance(entry_id, str) and kind != "session" and len(positions) < 1_000_000:
            positions[entry_id] = at
        if kind == "session":
            cwd = obj.get("cwd")
            ident = obj.get("id")
            yield Context(at, cwd if isinstance(cwd, str) else None, None,
                          (ident,) if isinstance(ident, str) else ())
        elif kind == "message":
            message = obj.get("message")
            if not isinstance(message, dict) or not _pi_message(at, message, out):
                state.skip(at)
                continue
            yield from out.take()
            if message.get("role") == "assistant":
                tokens = _pi_usage(message)
                if tokens is not None:
                    yield Usage(at, tokens)
        elif kind == "compaction":
            summary = obj.get("summary")
            if not isinstance(summary, str):
                state.skip(at)
                continue
            details = obj.get("details")
            if isinstance(details, dict):
                files = [f for key in ("readFiles", "modifiedFiles")
                         for f in (details.get(key) or []) if isinstance(f, str)]
                missing = [f for f in files if f not in summary]
                if missing:
                    summary = summary + "\n" + "\n".join(missing)
            kept = obj.get("firstKeptEntryId")
            kept_index = _int_or_none(obj.get("firstKeptEntryIndex"))
            kept_from = (positions.get(kept) if isinstance(kept, str) else
                         by_index.get(kept_index) if kept_index is not None else None)
            text = storable(summary)
            state.keep(text)
            yield Compaction(at, text, _int_or_none(obj.get("tokensBefore")), None,
                             trigger="extension" if obj.get("fromHook") is True else None,
                             kept_from=kept_from, carrier="text" if text.strip() else "empty")
            positions.clear()
            by_index.clear()
        elif kind in ("custom_message", "branch_summary"):
            body = obj.get("content") if kind == "custom_message" else obj.get("summary")
            out.add(at, "system", _block_text(body) or "")
            yield from out.take()


# --- generic JSONL -------------------------------------------------------------------------------


def _tool_call_text(call: Any) -> str | None:
    if not isinstance(call, dict):
        return None
    function = call.get("function")
    inner: dict[str, Any] = function if isinstance(function, dict) else call
    name = inner.get("name") if isinstance(inner.get("name"), str) else ""
    args = inner.get("arguments", inner.get("input"))
    if isinstance(args, str):
        args = _loads(args)
    return f"{name}\n{flatten(args)}".strip()


def iter_generic(lines: Iterable[tuple[int, str]], state: ReadState) -> Iterator[Item]:
    """Items of the generic session JSONL any runtime can emit (documented in the README).

    Message lines are ``{"role": "user"|"assistant"|"system"|"tool", "content": ...}`` (content a
    string or a list of ``{"type": "text", "text": ...}`` blocks), optionally with ``tool_calls``
    (``[{"name", "arguments"}]``, also the OpenAI ``{"function": {...}}`` shape). A compaction is
    ``{"type": "compaction", "summary": "...", "tokens_before": N, "tokens_after": N}`` (token
    counts and ``trigger`` optional). ``{"cwd": "/path"}`` on any line names the working directory.
    """
    out = _Out()
    for at, obj in _objects(lines, state):
        if isinstance(obj.get("cwd"), str):
            yield Context(at, obj["cwd"])
        if obj.get("type") == "compaction":
            summary = obj.get("summary")
            if not isinstance(summary, str):
                state.skip(at)
                continue
            trigger = obj.get("trigger") if isinstance(obj.get("trigger"), str) else None
            kept = storable(summary)
            state.keep(kept)
            yield Compaction(at, kept, _int_or_none(obj.get("tokens_before")),
                             _int_or_none(obj.get("tokens_after")), trigger=trigger,
                             carrier="text" if kept.strip() else "empty")
            continue
        role = obj.get("role")
        content = obj.get("content")
        text = _block_text(content) if content is not None else ""
        calls = obj.get("tool_calls")
        if not isinstance(role, str) or text is None or (calls is not None and not isinstance(calls, list)):
            if not (isinstance(obj.get("cwd"), str) and len(obj) == 1):
                state.skip(at)
            continue
        channel: Channel = ("tool_output" if role in _TOOL_ROLES else
                            "assistant" if role == "assistant" else
                            "system" if role in ("system", "developer") else "user")
        out.add(at, channel, text)
        for call in calls or []:
            call_text = _tool_call_text(call)
            if call_text:
                out.add(at, "tool_call", call_text)
        yield from out.take()


def read_generic(lines: Iterable[str], name: str | None = None) -> Session:
    """Read a generic session given as lines (see :func:`iter_generic`)."""
    state = ReadState("jsonl")
    items = list(iter_generic(_numbered(lines), state))
    return state.session(items, name)


_READERS: dict[str, Callable[[Iterable[tuple[int, str]], ReadState], Iterator[Item]]] = {
    "claude-code": iter_claude_code, "codex": iter_codex, "pi": iter_pi, "jsonl": iter_generic}


@dataclass
class _Builder:
    """Collects entries and compactions while the inspect reader walks a log's messages."""

    format: str
    items: list[Item] = field(default_factory=list)

    def add(self, at: int, channel: Channel, text: str) -> None:
        if text and text.strip():
            self.items.append(Entry(at, channel, storable(text)))

    def compaction(self, compaction: Compaction) -> None:
        self.items.append(replace(compaction, summary=storable(compaction.summary)))

    def session(self, name: str | None = None) -> Session:
        return Session(tuple(self.items), self.format, 0, (), name)


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
    check_eval_size(path)
    try:
        log = read_eval_log(str(path), resolve_attachments=True)
    except Exception as exc:  # noqa: BLE001 - inspect_ai raises many types for a bad file
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise SessionError(f"{path}: not a readable inspect_ai log: {first}") from None
    return [_inspect_sample(sample) for sample in (log.samples or [])]


# --- files ---------------------------------------------------------------------------------------


def _detect_object(obj: dict[str, Any]) -> str | None:
    kind = obj.get("type")
    if kind in _CODEX_TYPES and isinstance(obj.get("payload"), dict):
        return "codex"
    if kind == "session" and ("cwd" in obj or "version" in obj):
        return "pi"
    if kind in ("message", "compaction") and ("parentId" in obj or isinstance(obj.get("message"), dict)):
        return "pi"
    if obj.get("type") == "compaction" or "role" in obj:
        return "jsonl"
    if isinstance(kind, str) and kind in _CC_TYPES and {"message", "uuid", "sessionId", "subtype"} & set(obj):
        return "claude-code"
    return None


def _detect(path: Path, head: list[tuple[int, str]]) -> str:
    for _n, line in head:
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(obj, dict):
            fmt = _detect_object(obj)
            if fmt is not None:
                return fmt
    raise SessionError(f"{path}: cannot tell the session format (tried {', '.join(JSONL_FORMATS)}); "
                       "pass --format claude-code, codex, pi, inspect or jsonl")


def _check_path(path: Path, fmt: str) -> None:
    if fmt not in FORMATS:
        raise SessionError(f"unknown session format {fmt!r} (choose from {', '.join(FORMATS)})")
    if not path.exists():
        raise SessionError(f"session file not found: {path}")
    if path.is_dir():
        raise SessionError(f"session file is a directory: {path}")
    if not path.is_file():
        raise SessionError(f"session file is not a regular file: {path}")


@dataclass
class SessionStream:
    """A JSONL session being read: its items (an iterator: read once) and what the reader notes."""

    path: Path
    state: ReadState
    items: Iterator[Item]

    @property
    def format(self) -> str:
        return self.state.format

    def session(self, items: Iterable[Item] = ()) -> Session:
        """The session's record once its items were consumed (``items``: none kept, when
        streamed)."""
        return self.state.session(items, self.path.stem)


def stream_session(path: str | Path, fmt: str = "auto", *, follow: bool = False,
                   poll_s: float = 0.5, idle_s: float | None = None,
                   stop: Callable[[], bool] | None = None,
                   max_line: int = MAX_LINE_BYTES) -> SessionStream:
    """Open a JSONL session file for streaming.

    Args:
        path: the file.
        fmt: one of :data:`JSONL_FORMATS` or ``auto`` (told apart by the first lines' content).
        follow, poll_s, idle_s, stop: tail a file being written (see :func:`file_lines`).
        max_line: the line limit.

    Raises:
        SessionError: the path is missing or unreadable, or its format cannot be told (one line).
    """
    path = Path(path)
    _check_path(path, fmt)
    if fmt == "inspect":
        raise SessionError(f"{path}: an inspect log is not streamed; read it with read_sessions")
    state = ReadState(fmt, keep_summaries=not follow)
    lines = file_lines(path, state, follow=follow, poll_s=poll_s, idle_s=idle_s, stop=stop,
                       max_line=max_line)
    if fmt == "auto":
        head: list[tuple[int, str]] = []
        fmt_found: str | None = None
        for numbered in lines:
            head.append(numbered)
            try:
                obj = json.loads(numbered[1])
            except (ValueError, RecursionError):
                obj = None
            if isinstance(obj, dict):
                fmt_found = _detect_object(obj)
            if fmt_found is not None or len(head) >= 200:
                break
        fmt = fmt_found or _detect(path, head)
        state.format = fmt
        lines = _chain(head, lines)
    return SessionStream(path, state, _READERS[fmt](lines, state))


def _chain(head: list[tuple[int, str]], rest: Iterator[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    yield from head
    yield from rest


def check_read(stream: SessionStream, fmt_asked: str) -> None:
    """Refuse a file whose lines were mostly skipped: it is not in the format it was read as.

    Raises:
        SessionError: one line saying how many lines were skipped and which formats were tried.
    """
    state = stream.state
    if state.lines == 0 or state.skipped * 2 <= state.lines:
        return
    if state.lines < 4 and state.skipped < state.lines:
        return
    tried = state.format if fmt_asked != "auto" else f"{state.format} (auto-detected)"
    hint = ""
    if fmt_asked != "auto":
        hint = "; try --format auto, or one of " + ", ".join(f for f in JSONL_FORMATS
                                                             if f != state.format)
    raise SessionError(f"{stream.path}: {state.skipped:,} of {state.lines:,} lines skipped: not a "
                       f"{state.format} session (formats tried: {tried}){hint}")


def read_sessions(path: str | Path, fmt: str = "auto") -> list[Session]:
    """Read a session file whole.

    Args:
        path: the file.
        fmt: one of :data:`FORMATS`; ``auto`` tells them apart by content (``.eval`` is inspect).

    Returns:
        The sessions in the file: one for the JSONL formats, one per sample of an inspect log.

    Raises:
        SessionError: the path is missing, unreadable or not in the format (one line).
    """
    path = Path(path)
    _check_path(path, fmt)
    if fmt == "inspect" or (fmt == "auto" and _looks_like_inspect(path)):
        return read_inspect(path)
    stream = stream_session(path, fmt)
    items = list(stream.items)
    check_read(stream, fmt)
    return [stream.session(items)]


def is_inspect(path: str | Path, fmt: str) -> bool:
    """Whether ``path`` is read as an inspect log (named so, or ``auto`` and it looks like one)."""
    return fmt == "inspect" or (fmt == "auto" and _looks_like_inspect(Path(path)))


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


def check_eval_size(path: Path) -> None:
    """Refuse an inspect log that would unpack into more than the limits allow, before reading.

    Raises:
        SessionError: one line naming the file and the limit.
    """
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                total = 0
                for info in archive.infolist():
                    total += info.file_size
                    ratio = info.file_size / max(info.compress_size, 1)
                    if info.file_size > EVAL_RATIO_FLOOR and ratio > MAX_EVAL_RATIO:
                        raise SessionError(
                            f"{path}: member {info.filename!r} expands {ratio:,.0f}-fold to "
                            f"{info.file_size / 1e6:,.0f} MB (a zip bomb?); refused")
                    if total > MAX_EVAL_BYTES:
                        raise SessionError(f"{path}: unpacks to more than "
                                           f"{MAX_EVAL_BYTES / 1e9:,.1f} GB; refused")
        elif path.stat().st_size > MAX_EVAL_BYTES:
            raise SessionError(f"{path}: larger than {MAX_EVAL_BYTES / 1e9:,.1f} GB; refused")
    except (OSError, zipfile.BadZipFile) as exc:
        raise SessionError(f"{path}: not a readable inspect_ai log: {exc}") from None


def read_facts(path: str | Path, rules: Sequence[KindRule] | None = None) -> tuple[AuditFact, ...]:
    """Read a facts file (``[[facts]]`` tables with ``label``, ``value``, optional ``kind``).

    Raises:
        ConfigError: the file is missing or malformed (one line naming it).
    """
    return facts_from_data(read_toml_file(path, "facts file"), source=str(path), rules=rules)


# --- one line of a session, for a person to read ------------------------------------------------

SHOWN_LINE_BYTES = 4 * 1024 * 1024
"""Longest line read for display; a longer one is shown cut (its start, as raw text)."""


@dataclass(frozen=True)
class SessionLine:
    """What one line of a session file holds, as a person reads it: each entry's writer
    (``user``, ``assistant``, ``tool_call``, ``tool_output``, ``system``; ``summary`` for a
    compaction's summary; ``raw`` for a line no entry could be read from) and its text. Text is
    as the file has it: show it through :func:`foldscope.core.text.literal`."""

    at: int
    texts: tuple[tuple[str, str], ...]
    cut: bool = False


def session_line(path: str | Path, at: int, fmt: str) -> SessionLine:
    """Read line ``at`` (1-based) of a JSONL session file of format ``fmt`` (one of
    :data:`JSONL_FORMATS`), streaming past the lines before it.

    Raises:
        SessionError: the file cannot be read, or has no such line (one line).
    """
    if fmt not in JSONL_FORMATS:
        raise SessionError(f"a {fmt} log has no lines to show (only {', '.join(JSONL_FORMATS)})")
    path = Path(path)
    try:
        with path.open("rb") as fh:
            n = 1
            while n < at:
                chunk = fh.readline(1 << 20)
                if not chunk:
                    raise SessionError(f"{path}: has no line {at} (it has {n - 1})")
                if chunk.endswith(b"\n"):
                    n += 1
            data = fh.readline(SHOWN_LINE_BYTES)
            cut = len(data) >= SHOWN_LINE_BYTES and not data.endswith(b"\n") and bool(fh.read(1))
    except OSError as err:
        raise SessionError(f"{path}: cannot be read ({err.strerror or err})") from None
    if not data:
        raise SessionError(f"{path}: has no line {at}")
    text = data.decode("utf-8", errors="replace").rstrip("\n").rstrip("\r")
    if cut:
        return SessionLine(at, (("raw", text),), cut=True)
    texts: list[tuple[str, str]] = []
    for item in _READERS[fmt]([(at, text)], ReadState(fmt)):
        if isinstance(item, Entry) and item.text:
            texts.append((item.channel, item.text))
        elif isinstance(item, Compaction) and item.summary:
            texts.append(("summary", item.summary))
    return SessionLine(at, tuple(texts) or (("raw", text),))

"""Generated Claude Code sessions of any size, for measuring the audit (``make bench``) and for
tests of its speed and memory: varied code, tool output and prose with real-looking identifiers,
compactions at a fixed spacing. Deterministic for a seed; nobody's transcript."""

from __future__ import annotations

import json
import random
from pathlib import Path

_WORDS = ("ledger service config migrate deploy gateway worker queue retry cache token shard "
          "health check rollout backup restore schema index tenant billing invoice upload").split()
_PROSE = ("The {a} step retries the {b} call until it succeeds or the budget runs out; each "
          "attempt is logged with its duration and the reason it failed.\n")
_CODE = ("const {a} = await fetch(`${{base}}/api/{b}`);\n"
         "if (!res.ok) throw new Error(`{b} failed: ${{res.status}}`);\n"
         "export function {a}Handler(req, res) {{ return res.json({{ ok: true }}); }}\n"
         "import {{ {a} }} from './{b}/{a}.service';\n"
         "    self.{a} = config.get('{b}', {n})\n"
         "def {a}_{b}(path: str) -> dict:\n        return json.load(open(path))\n")


def _ident(rng: random.Random) -> dict[str, str]:
    word = rng.choice(_WORDS)
    return {
        "port": str(rng.randint(1025, 65000)),
        "host": f"{word}-{rng.randint(1, 99)}.{rng.choice(['internal', 'example.com', 'corp'])}",
        "path": f"/srv/app/{word}/{rng.choice(_WORDS)}_{rng.randint(1, 999)}.{rng.choice(['py', 'ts', 'conf'])}",
        "env": f"{word.upper()}_{rng.choice(_WORDS).upper()}_URL",
        "ticket": f"OPS-{rng.randint(100, 9999)}",
        "hash": "".join(rng.choice("0123456789abcdef") for _ in range(12)) + "a1",
    }


def _tool_output(rng: random.Random, size: int) -> str:
    parts: list[str] = []
    total = 0
    while total < size:
        a, b = rng.choice(_WORDS), rng.choice(_WORDS)
        chunk = (_CODE if rng.random() < 0.5 else _PROSE * 3).format(a=a, b=b, n=rng.randint(0, 5000))
        if rng.random() < 0.1:
            i = _ident(rng)
            chunk += f"# {i['env']}=http://{i['host']}:{i['port']} see {i['path']} ({i['ticket']})\n"
        parts.append(chunk)
        total += len(chunk)
    return "".join(parts)


def write_sample_session(path: Path, mb: float, *, compactions: int = 20, seed: int = 7) -> int:
    """Write a Claude Code session of about ``mb`` megabytes with ``compactions`` compactions.

    Returns:
        The bytes written.
    """
    rng = random.Random(seed)
    target = int(mb * 1_000_000)
    every = max(1, target // (compactions + 1))
    written = 0
    next_compaction = every
    done = 0
    line = 0
    base = {"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": "/srv/app",
            "sessionId": "5c1f0e2a-0000-4000-8000-00000000beef", "version": "2.1.0",
            "gitBranch": "feat/ledger-move"}
    with path.open("w", encoding="utf-8") as fh:
        def emit(obj: dict[str, object]) -> None:
            nonlocal written, line
            line += 1
            # Every line carries the metadata a real Claude Code line does (ids, clock, cwd,
            # branch, version), and a tool result its structured copy (toolUseResult).
            text = json.dumps({**base, **obj, "uuid": f"{rng.getrandbits(128):032x}",
                               "timestamp": f"2026-07-14T{line // 3600 % 24:02d}:{line // 60 % 60:02d}:"
                                            f"{line % 60:02d}.{line % 1000:03d}Z"},
                              ensure_ascii=False) + "\n"
            fh.write(text)
            written += len(text.encode("utf-8"))

        while written < target:
            i = _ident(rng)
            emit({"type": "user", "message": {"role": "user", "content":
                  f"Please move the {rng.choice(_WORDS)} to {i['host']} port {i['port']} ({i['ticket']})."}})
            emit({"type": "assistant", "requestId": f"req_{rng.getrandbits(96):024x}", "message": {
                "id": f"msg_{rng.getrandbits(96):024x}", "model": "claude-sonnet-4-5", "type": "message",
                "stop_reason": "tool_use", "role": "assistant", "content": [
                {"type": "text", "text": f"Reading {i['path']} first; then I set {i['env']}."},
                {"type": "tool_use", "id": f"toolu_{line:020d}", "name": "Read",
                 "input": {"file_path": i["path"]}}],
                "usage": {"input_tokens": 12, "cache_read_input_tokens": rng.randint(1000, 90000)}}})
            output = _tool_output(rng, rng.randint(2000, 24000))
            emit({"type": "user", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": f"toolu_{line:020d}", "content": output}]},
                "toolUseResult": {"type": "text", "file": {"filePath": i["path"], "content": output,
                                                           "numLines": output.count("\n"),
                                                           "startLine": 1}}})
            emit({"type": "assistant", "message": {"role": "assistant", "content": [
                {"type": "tool_use", "id": f"toolu_{line:020d}", "name": "Bash",
                 "input": {"command": f"curl -s http://{i['host']}:{i['port']}/health && git log {i['hash']}"}}]}})
            if written >= next_compaction and done < compactions:
                done += 1
                next_compaction += every
                emit({"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
                      "compactMetadata": {"trigger": "auto", "preTokens": 150000 + done}})
                emit({"type": "user", "isCompactSummary": True, "message": {"role": "user", "content":
                      f"Summary: working on {i['ticket']} at {i['host']}; config in {i['path']}."}})
    return written

"""The audit on untrusted and real-shaped session files: line splitting, limits, the Codex and pi
formats, following a file being written, and the rules that keep code and tool output from being
read as the task's identifiers (fixtures written here in the formats' shapes, nobody's transcript)."""

from __future__ import annotations

import json
import tracemalloc
import zipfile
from pathlib import Path

import pytest

from foldscope.cli.main import main
from foldscope.core.audit import (
    Compaction,
    Context,
    Entry,
    Session,
    SessionAuditor,
    audit_session,
)
from foldscope.core.errors import SessionError
from foldscope.engine.audit_readers import (
    ReadState,
    check_eval_size,
    file_lines,
    read_sessions,
    stream_session,
)

FIXTURES = Path(__file__).parent / "fixtures" / "audit"


def _run(capsys, *argv):
    code = main(["audit", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _cc(tmp_path: Path, lines: list[dict]) -> Path:
    path = tmp_path / "s.jsonl"
    base = {"sessionId": "5c1f0e2a-1111-4000-8000-00000000abcd", "cwd": "/home/dev/proj",
            "uuid": "x", "futureField": {"anything": [1, 2]}}
    path.write_text("".join(json.dumps({**base, **obj}, ensure_ascii=False) + "\n" for obj in lines),
                    encoding="utf-8")
    return path


def _user(text):
    return {"type": "user", "message": {"role": "user", "content": text}}


def _said(text, usage=None):
    message = {"role": "assistant", "content": [{"type": "text", "text": text}]}
    if usage:
        message["usage"] = usage
    return {"type": "assistant", "message": message}


def _tool(name, args, output):
    return [{"type": "assistant", "message": {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_01AbCdEfGhIjKlMnOp", "name": name, "input": args}]}},
            {"type": "user", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01AbCdEfGhIjKlMnOp", "content": output}]}}]


def _compact(summary, pre=90000):
    return [{"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
             "compactMetadata": {"trigger": "auto", "preTokens": pre}},
            {"type": "user", "isCompactSummary": True, "message": {"role": "user", "content": summary}}]


# --- lines --------------------------------------------------------------------------------------


def test_lines_split_on_newline_only_so_u2028_and_u0085_inside_json_keep_the_count(tmp_path):
    path = _cc(tmp_path, [_user("first\u2028second\u0085third port 62114"),
                          *_compact("carried: nothing"),
                          _said("using port 62114 again")])
    raw = path.read_text(encoding="utf-8")
    # ensure_ascii=False wrote the separators raw, as common serialisers do
    assert "\u2028" in raw and "\u0085" in raw
    [session] = read_sessions(path)
    [c] = session.compactions
    assert (c.at, c.summary_at) == (2, 3)
    [audit] = audit_session(session)
    assert [(n.value, n.used_at) for n in audit.lost_and_needed] == [("62114", 4)]


def test_an_over_long_line_is_skipped_with_a_note_and_never_held_whole(tmp_path):
    path = tmp_path / "big.jsonl"
    with path.open("w") as fh:
        fh.write(json.dumps({"role": "user", "content": "port 62114"}) + "\n")
        fh.write('{"role": "tool", "content": "' + "x" * 20_000_000 + '"}\n')
        fh.write(json.dumps({"type": "compaction", "summary": "nothing"}) + "\n")
    state = ReadState("jsonl")
    tracemalloc.start()
    lines = list(file_lines(path, state, max_line=64_000))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert [n for n, _ in lines] == [1, 3]
    assert state.skipped_at == [2] and "longer than" in state.notes[0]
    assert peak < 5_000_000  # far below the 20 MB line


def test_nesting_far_too_deep_is_a_skipped_line_not_a_traceback(tmp_path, capsys):
    deep = "[" * 100_000 + "]" * 100_000
    path = tmp_path / "deep.jsonl"
    path.write_text(json.dumps({"role": "user", "content": "port 62114"}) + "\n"
                    + '{"role": "tool", "content": ' + deep + "}\n"
                    + json.dumps({"role": "assistant", "content": "x", "tool_calls": [
                        {"name": "f", "arguments": deep}]}) + "\n"
                    + json.dumps({"type": "compaction", "summary": "nothing"}) + "\n")
    code, out, err = _run(capsys, str(path), "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["skipped_at"] == [2] and "nested too deep" in doc["notes"][0]
    assert len(doc["compactions"]) == 1


def test_a_zip_bomb_inspect_log_is_refused_before_it_is_unpacked(tmp_path):
    bomb = tmp_path / "bomb.eval"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        with archive.open("samples/1.json", "w") as member:
            block = b"\0" * (1 << 20)
            for _ in range(40):
                member.write(block)
    assert bomb.stat().st_size < 1_000_000
    with pytest.raises(SessionError, match="zip bomb"):
        check_eval_size(bomb)


def test_many_compactions_stream_in_one_pass(tmp_path):
    path = tmp_path / "many.jsonl"
    with path.open("w") as fh:
        for n in range(20_000):
            fh.write(f'{{"role":"tool","content":"port {20000 + n}"}}\n'
                     f'{{"type":"compaction","summary":"kept port {20000 + n}"}}\n')
    stream = stream_session(path)
    auditor = SessionAuditor()
    auditor.feed_all(stream.items)
    audits = auditor.audits()
    assert len(audits) == 20_000
    # each: this window's port carried, the previous summary's port dropped
    assert all((a.count("present"), a.count("missing")) == (1, 1) for a in audits[1:])


# --- formats ------------------------------------------------------------------------------------


def test_codex_rollout_has_two_compactions_the_second_opaque(capsys):
    code, out, err = _run(capsys, str(FIXTURES / "gateway.codex.jsonl"), "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["format"] == "codex"
    first, second = doc["compactions"]
    assert (first["carrier"], second["carrier"]) == ("text", "opaque")
    assert (first["tokens_before"], first["tokens_after"]) == (182000, 9100)
    states = {i["value"]: i["state"] for i in first["identifiers"]}
    assert states["PAY-311"] == states["kid-55AB90CD"] == states["18443"] == "present"
    # The gateway URL only the config file showed is not listed; its host, which the agent
    # writes again after the compaction, is — lost and needed.
    assert "https://pay-sandbox.acme-pay.io/v2" not in states
    assert states["pay-sandbox.acme-pay.io"] == "missing"
    assert [n["value"] for n in first["lost_and_needed"]] == ["pay-sandbox.acme-pay.io"]
    assert {i["state"] for i in second["identifiers"]} == {"unknown"}
    needed = {n["value"]: n for n in second["lost_and_needed"]}
    assert {"18443", "kid-55AB90CD"} <= set(needed)
    assert needed["kid-55AB90CD"]["recovered"] is True
    # The log's own call ids and the working directory itself are no values of the task.
    values = {i["value"] for c in doc["compactions"] for i in c["identifiers"]}
    assert not any(v.startswith("call_") or v == "/home/dev/shop" for v in values)


def test_pi_session_has_two_compactions_and_kept_entries_are_carried(capsys):
    code, out, err = _run(capsys, str(FIXTURES / "deploy.pi.jsonl"), "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["format"] == "pi"
    first, second = doc["compactions"]
    assert (first["tokens_before"], first["tokens_after"]) == (61000, 6000)
    states = {i["value"]: i["state"] for i in first["identifiers"]}
    # kept verbatim from firstKeptEntryId on; named in the file list of its details
    assert states["ghcr.io/ana/queue-worker:2.8.1"] == "present"
    assert states["/Users/ana/infra/deploy/compose.yaml"] == "present"
    assert states["feat/queue-backpressure"] == "present"
    assert {n["value"] for n in first["lost_and_needed"]} >= {"5672", "BROKER_URL"}
    assert len(second["identifiers"]) > 0


@pytest.mark.parametrize("name", ["gateway.codex.jsonl", "deploy.pi.jsonl"])
def test_jsonl_format_on_another_format_exits_2_with_one_line(capsys, name):
    code, out, err = _run(capsys, str(FIXTURES / name), "--format", "jsonl")
    assert code == 2 and out == ""
    assert "lines skipped: not a jsonl session (formats tried: jsonl)" in err
    assert len(err.strip().splitlines()) == 1


# --- the task's identifiers, not the code's -------------------------------------------------------


NOISY_OUTPUT = """src/upload/upload.service.ts:51:    const cfg = json.load(fh); this.config.get('x');
src/upload/upload.service.ts-52-    Object.entries(tokens.colors.primary).map(f);
@Injectable()
export class UploadService {
  @Get(':id') find() { return body.slice(0, 500); }
}
see report.pdf and Login.tsx, icon@2x.png, mod.rs:37-45, colour #1e1e2e and #fff
2025-11-03T10:22:31.123Z INFO 12:34:56 started
Co-Authored-By: Claude <noreply@anthropic.com>
\x1b[32mhttp://localhost:3000\x1b[0m and http://localhost:${port}/api
/dev/null
"""


def test_code_and_tool_output_are_not_tracked_and_the_real_losses_are_needed(tmp_path):
    path = _cc(tmp_path, [
        _user("Ship the upload fix on branch feat/phase-12-multi-factor, PR #123; the gateway "
              "listens on port 5001 and reads GATEWAY_URL. Use /clear if stuck."),
        *_tool("Bash", {"command": "grep -rn upload src/"}, NOISY_OUTPUT),
        _said("Found it in /home/dev/proj/src/upload/upload.service.ts.",
              {"input_tokens": 10, "cache_read_input_tokens": 80000}),
        *_compact("Working on the upload fix. The service is in src/upload/upload.service.ts; "
                  "the gateway reads GATEWAY_URL. @Request handling is the Primary Request and Intent."),
        _said("Pushing to feat/phase-12-multi-factor and pinging the gateway on port 5001.",
              {"input_tokens": 12, "cache_read_input_tokens": 4000}),
    ])
    [session] = read_sessions(path)
    [audit] = audit_session(session)
    tracked = {i.value: i.state for i in audit.identifiers}
    for noise in ("json.load", "this.config.get", "Object.entries", "tokens.colors.primary",
                  "report.pdf", "Login.tsx", "@Injectable", "@Get", "@2x", "37", "#1e1e2e", "#fff",
                  "/clear", "12:34:56", "noreply@anthropic.com", "/dev/null", "500", "0",
                  "toolu_01AbCdEfGhIjKlMnOp", "5c1f0e2a-1111-4000-8000-00000000abcd"):
        assert not any(noise == v or noise in v.split() for v in tracked), noise
    assert not any("\x1b" in v or "${" in v for v in tracked)
    # grep's prefixes stripped, and the absolute path is the same path as the repo-relative one
    # the summary carried: one identifier, present
    paths = [v for v in tracked if v.endswith("upload.service.ts")]
    assert paths == ["src/upload/upload.service.ts"] and tracked[paths[0]] == "present"
    assert tracked["GATEWAY_URL"] == "present"
    assert tracked["#123"] == "missing"
    assert tracked["feat/phase-12-multi-factor"] == "missing"
    assert tracked["5001"] == "missing"
    assert audit.count("mutated") == 0  # 500 is no garbled 5001
    needed = [n.value for n in audit.lost_and_needed]
    assert needed[:2] == ["feat/phase-12-multi-factor", "5001"] or set(needed) >= {
        "feat/phase-12-multi-factor", "5001"}
    assert all(n.used_in in ("assistant", "tool_call") for n in audit.lost_and_needed)
    assert audit.tokens_after == 4012  # the next model call's usage


def test_a_directory_carried_with_its_files_listed_carries_them():
    session = Session((
        Context(1, "/repo"),
        Entry(2, "tool_output", "wrote /repo/src/components/Login.tsx and /repo/src/components/Header.tsx"),
        Compaction(3, "Edited `src/components/`: Login.tsx, Header.tsx."),
    ), "jsonl")
    [audit] = audit_session(session)
    assert {i.value: i.state for i in audit.identifiers} == {
        "/repo/src/components/Login.tsx": "present", "/repo/src/components/Header.tsx": "present"}


def test_mutated_is_a_near_miss_of_a_whole_token_of_the_kind():
    session = Session((
        Entry(1, "assistant", "deploy to https://app-staging.ledgerly.io and port 62114; key kid-7F3A9C21"),
        Compaction(2, "Deploy: https://app-staging.ledgerly.io/v2 ; port 62115; key kid-7F3A9C2l"),
    ), "jsonl")
    [audit] = audit_session(session)
    states = {i.value: (i.state, i.altered) for i in audit.identifiers}
    assert states["62114"] == ("mutated", "62115")
    assert states["kid-7F3A9C21"] == ("mutated", "kid-7F3A9C2l")
    # carried inside a longer URL: not a mutation into another host
    assert states["https://app-staging.ledgerly.io"][0] == "missing"
    assert states["app-staging.ledgerly.io"][0] == "present"


def test_new_after_leaves_out_what_tool_output_showed_first_and_summary_values_point_at_it():
    session = Session((
        Entry(1, "tool_output", "listen port = 62114"),
        Compaction(2, "the ledger runs on port 9000", summary_at=3),
        Entry(4, "tool_output", "backup port 7001"),
        Entry(5, "assistant", "use port 7001 or port 8080"),
    ), "jsonl")
    [audit] = audit_session(session)
    new = {n.value: n.first_seen_at for n in audit.new_after}
    assert new == {"9000": 3, "8080": 5}


# --- following a session being written -----------------------------------------------------------


def test_follow_reports_each_compaction_as_it_lands(tmp_path):
    path = tmp_path / "live.jsonl"
    path.write_text(json.dumps({"role": "tool", "content": "port 62114"}) + "\n")
    more = [json.dumps({"type": "compaction", "summary": "nothing kept"}) + "\n",
            json.dumps({"role": "assistant", "content": "curl localhost:62114"}) + "\n"]
    landed: list[int] = []
    used: list[tuple[int, str]] = []

    def stop() -> bool:  # called at each end of file: the agent writes the next line
        if not more:
            return True
        with path.open("a") as fh:
            fh.write(more.pop(0))
        return False

    stream = stream_session(path, "jsonl", follow=True, poll_s=0, stop=stop)
    auditor = SessionAuditor(on_compaction=lambda c: landed.append(c.index),
                             on_use=lambda i, n: used.append((i, n.value)), keep=False)
    for item in stream.items:
        auditor.feed(item)
    assert landed == [1] and used == [(1, "62114")]
    assert auditor.audits() == []  # nothing kept: bounded memory


def test_follow_cli_stops_when_idle(tmp_path, capsys):
    path = tmp_path / "live.jsonl"
    path.write_text(json.dumps({"role": "tool", "content": "port 62114"}) + "\n"
                    + json.dumps({"type": "compaction", "summary": "nothing kept"}) + "\n"
                    + json.dumps({"role": "assistant", "content": "curl localhost:62114"}) + "\n")
    code, out, _ = _run(capsys, str(path), "--follow", "--idle", "0")
    assert code == 0
    assert "compaction 1 at line 2" in out and "NEEDED port 62114" in out


def test_redact_prints_its_key_once_and_stores_no_value(capsys, tmp_path):
    db = tmp_path / "audits.sqlite"
    code, out, err = _run(capsys, str(FIXTURES / "port-drop.jsonl"), "--json", "--redact",
                          "--db", str(db))
    assert code == 0
    assert err.count("redaction key of this audit (shown once, stored nowhere)") == 1
    key = err.strip().rsplit(" ", 1)[1]
    assert len(key) == 64 and key not in out
    assert "62114" not in out and "hmac:" in out
    raw = db.read_bytes()
    assert b"62114" not in raw and key.encode() not in raw


def test_record_types_added_since_are_ignored_not_skipped(tmp_path):
    path = _cc(tmp_path, [_user("port 62114"), *[{"type": f"new-kind-{n}", "timestamp": "t"}
                                                 for n in range(10)],
                          *_compact("nothing"), _said("port 62114 again")])
    [session] = read_sessions(path)  # not refused as mostly skipped
    assert session.skipped_lines == 0 and len(session.compactions) == 1


def test_a_record_type_without_a_timestamp_is_ignored_too(tmp_path):
    # Claude Code 2.1 writes {"type": "mode", "mode": "normal", "sessionId": ...} lines.
    path = _cc(tmp_path, [_user("port 62114"), *_compact("nothing"), _said("port 62114 again")])
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    mode = json.dumps({"type": "mode", "mode": "normal", "sessionId": "5c1f0e2a"}) + "\n"
    path.write_text(lines[0] + mode + "".join(lines[1:]) + mode, encoding="utf-8")
    [session] = read_sessions(path)
    assert session.skipped_lines == 0 and len(session.compactions) == 1


def test_a_version_1_pi_session_without_ids_is_read(tmp_path):
    path = tmp_path / "v1.jsonl"
    rows = [{"type": "message", "timestamp": "t", "message": {"role": "user", "content": "use port 62114"}},
            {"type": "message", "timestamp": "t", "message": {"role": "assistant", "content": "ok",
                                                              "usage": {"input": 10, "cacheRead": 5}}},
            {"type": "compaction", "timestamp": "t", "summary": "nothing", "firstKeptEntryIndex": 1,
             "tokensBefore": 900},
            {"type": "message", "timestamp": "t", "message": {"role": "assistant", "content": [
                {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "nc -z h 62114"}}]}}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    [session] = read_sessions(path)
    assert session.format == "pi" and session.skipped_lines == 0
    [audit] = audit_session(session)
    assert [(n.value, n.used_at) for n in audit.lost_and_needed] == [("62114", 4)]


def test_a_near_miss_the_session_had_shown_is_another_value_not_a_mutation():
    session = Session((
        Entry(1, "assistant", "staging on port 8081"),
        Compaction(2, "nothing yet"),
        Entry(3, "assistant", "prod on port 8080"),
        Compaction(4, "prod is on port 8081"),
    ), "jsonl")
    _, second = audit_session(session)
    assert {i.value: i.state for i in second.identifiers}["8080"] == "missing"


def test_the_runtimes_own_user_turns_are_system_not_the_person(tmp_path):
    path = _cc(tmp_path, [
        _user("<task-notification>\n<task-id>a7f8c69a352e8cd</task-id>\n<status>completed</status>"
              "\n</task-notification>"),
        _user("<command-name>/clear</command-name> port 62114"),
        _user("deploy to port 47031"),
        *_compact("nothing"),
    ])
    [session] = read_sessions(path)
    channels = [item.channel for item in session.items if isinstance(item, Entry)]
    assert channels == ["system", "system", "user"]
    [audit] = audit_session(session)
    assert [i.value for i in audit.identifiers] == ["47031"]


def test_feeding_raises_the_collectors_young_threshold_and_puts_every_threshold_back():
    import gc

    from foldscope.core.audit import GC_YOUNG_THRESHOLD

    seen: list[tuple[int, int, int]] = []

    def items(fail: bool):
        yield Entry(1, "user", "move the ledger to ledger-1.internal port 62114")
        seen.append(gc.get_threshold())
        if fail:
            raise RuntimeError("the reader broke")
        yield Compaction(2, "Summary: ledger moved.")

    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 11, 12)
        auditor = SessionAuditor()
        auditor.feed_all(items(False))
        assert seen[-1] == (GC_YOUNG_THRESHOLD, 11, 12)
        assert gc.get_threshold() == (700, 11, 12)
        assert auditor.audits()[0].count("missing") == 2  # the audit itself is unchanged
        with pytest.raises(RuntimeError):
            SessionAuditor().feed_all(items(True))
        assert gc.get_threshold() == (700, 11, 12)
        gc.set_threshold(0, 11, 12)  # a caller that turned collection off keeps it off
        SessionAuditor().feed_all(items(False))
        assert seen[-1] == (0, 11, 12) and gc.get_threshold() == (0, 11, 12)
        gc.set_threshold(GC_YOUNG_THRESHOLD * 2)  # never lowered
        SessionAuditor().feed_all(items(False))
        assert seen[-1][0] == GC_YOUNG_THRESHOLD * 2
    finally:
        gc.set_threshold(*before)

"""Tests for reading inspect_ai eval logs in ``foldscope audit`` (the optional ``inspect`` extra).

The logs are written through inspect_ai's own API (``write_eval_log``), in both its ``.eval`` and
``.json`` formats, with the records its compaction writes: a summary message flagged
``metadata["summary"]`` and ``CompactionEvent``s with token counts around the model calls.
"""

from __future__ import annotations

import json
import sys

import pytest

pytest.importorskip("inspect_ai", reason="inspect_ai not installed: pip install 'foldscope[inspect]'")

from inspect_ai.event import CompactionEvent, ModelEvent  # noqa: E402
from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalSample, EvalSpec, write_eval_log  # noqa: E402
from inspect_ai.model import (  # noqa: E402
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    GenerateConfig,
    ModelOutput,
)
from inspect_ai.tool import ToolCall  # noqa: E402

from foldscope.cli.main import main  # noqa: E402
from foldscope.core.errors import SessionError  # noqa: E402
from foldscope.engine.audit_readers import read_sessions  # noqa: E402


def _call(model_input, reply) -> ModelEvent:
    return ModelEvent(model="mockllm/model", input=model_input, tools=[], tool_choice="auto",
                      config=GenerateConfig(), output=ModelOutput.from_message(reply))


def _bash(call_id: str, cmd: str) -> ToolCall:
    return ToolCall(id=call_id, function="bash", arguments={"cmd": cmd})


def _summary_sample() -> EvalSample:
    system = ChatMessageSystem(content="You migrate services.")
    task = ChatMessageUser(content="Move the ledger. Ticket OPS-4821.")
    read = ChatMessageAssistant(content="Reading the config (it should listen on port 62114).",
                                tool_calls=[_bash("c1", "cat /opt/kestrel/ledger.conf")])
    conf = ChatMessageTool(content="listen port = 62114\nadmin_port = 47031\nsigning_key = kid-7F3A9C21",
                           tool_call_id="c1", function="bash")
    summary = ChatMessageUser(
        content="[CONTEXT COMPACTION SUMMARY]\n\n<summary>\nTicket OPS-4821; admin port 47031; "
                "key kid-7F3A9C2l.\n</summary>", metadata={"summary": True})
    guess = ChatMessageAssistant(content="Starting.", tool_calls=[_bash("c2", "ledgerctl start --port 8080")])
    failed = ChatMessageTool(content="refused on port 8080; config says port 62114", tool_call_id="c2",
                             function="bash")
    messages = [system, task, read, conf, summary, guess, failed]
    events = [_call([system, task], read),
              CompactionEvent(type="summary", tokens_before=48210, tokens_after=3120, source="inspect",
                              metadata={"trigger": "threshold"}),
              _call([system, task, summary], guess)]
    return EvalSample(id="ledger", epoch=1, input="Move the ledger.", target="", messages=messages,
                      events=events)


def _trim_sample() -> EvalSample:
    task = ChatMessageUser(content="Rotate key kid-11AA22BB and page @ops.lead")
    first = ChatMessageAssistant(content="Rotating kid-11AA22BB now; will page @ops.lead.")
    nudge = ChatMessageUser(content="continue")
    after = ChatMessageAssistant(content="Paging @ops.lead again.")
    events = [_call([task], first),
              CompactionEvent(type="trim", tokens_before=9000, tokens_after=4000),
              _call([task, nudge], after)]
    return EvalSample(id="rotate", epoch=1, input="Rotate", target="",
                      messages=[task, first, nudge, after], events=events)


def _log(samples) -> EvalLog:
    spec = EvalSpec(created="2026-07-14T09:00:00+00:00", task="ledger_move", dataset=EvalDataset(),
                    model="mockllm/model", config=EvalConfig())
    return EvalLog(eval=spec, samples=samples, status="success")


@pytest.fixture(params=["eval", "json"])
def log_path(request, tmp_path):
    path = tmp_path / f"run.{request.param}"
    write_eval_log(_log([_summary_sample(), _trim_sample()]), str(path))
    return path


def test_summary_compaction_is_read_with_its_event_token_counts(log_path):
    summary_session, trim_session = read_sessions(log_path)
    assert summary_session.format == "inspect" and summary_session.name == "ledger/1"
    [compaction] = summary_session.compactions
    assert (compaction.at, compaction.kind, compaction.tokens_before, compaction.tokens_after,
            compaction.trigger) == (5, "summary", 48210, 3120, "threshold")
    assert "kid-7F3A9C2l" in compaction.summary
    [trim] = trim_session.compactions
    # A trim leaves no message: what the next call was sent is what survived, placed before its reply.
    assert (trim.at, trim.kind, trim.tokens_before) == (4, "trim", 9000)
    assert "kid-11AA22BB" in trim.summary and "@ops.lead" in trim.summary


def test_cli_audits_every_sample_of_an_inspect_log(capsys, log_path):
    assert main(["audit", str(log_path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    first, trim = doc["compactions"]
    assert first["session"] == "ledger/1" and trim["session"] == "rotate/1"
    states = {i["value"]: i["state"] for i in first["identifiers"]}
    assert states == {"OPS-4821": "present", "/opt/kestrel/ledger.conf": "missing", "62114": "missing",
                      "47031": "present", "kid-7F3A9C21": "mutated"}
    # The port only came back in tool output (message 7): reappeared, not needed by the agent.
    assert first["lost_and_needed"] == []
    assert [(n["value"], n["at"], n["channel"]) for n in first["reappeared"]] == [
        ("62114", 7, "tool_output")]
    assert [n["value"] for n in first["new_after"]] == ["8080"]
    assert {i["value"]: i["state"] for i in trim["identifiers"]} == {"kid-11AA22BB": "present",
                                                                      "@ops.lead": "present"}
    assert main(["audit", str(log_path)]) == 0
    out = capsys.readouterr().out
    assert "compaction 1 at message 5 · summary · 48,210 → 3,120 tokens · threshold" in out


def test_a_bad_inspect_log_is_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.eval"
    bad.write_bytes(b"not a zip")
    assert main(["audit", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "not a readable inspect_ai log" in err and len(err.strip().splitlines()) == 1


def test_without_the_extra_the_error_names_it(monkeypatch, tmp_path):
    log = tmp_path / "x.eval"
    log.write_bytes(b"")
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)  # import fails as if not installed
    with pytest.raises(SessionError, match=r"pip install 'foldscope\[inspect\]'"):
        read_sessions(log)

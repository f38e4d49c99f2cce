"""The session audit screen as a person meets it: ``foldscope audit PATH`` on a terminal, the
compactions stepped, the states and lists matching ``audit --json``, stored audits in the
picker, and the rule that keeps pipes and scripts on plain text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import wait_group, wait_until
from textual.widgets import DataTable, Static, TabbedContent

from foldscope.cli import audit_cmd
from foldscope.cli.main import main
from foldscope.core.audit_view import audit_view, summary_spans
from foldscope.core.errors import ConfigError
from foldscope.ui.app import FoldscopeApp
from foldscope.ui.screens.audit import AuditHelpScreen, AuditScreen
from foldscope.ui.screens.picker import SweepPicker
from foldscope.ui.widgets.carrier_view import CarrierView
from foldscope.ui.widgets.diff_view import DiffView
from foldscope.ui.widgets.session_table import SessionTable

FIXTURES = Path(__file__).parent / "fixtures" / "audit"
PORT_DROP = FIXTURES / "port-drop.claude-code.jsonl"


def _doc(capsys, path: Path, *extra: str) -> dict:
    assert main(["audit", str(path), "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def _cells(table: DataTable, column: int) -> list[str]:
    return [table.get_row_at(r)[column].plain for r in range(table.row_count)]


def _assert_screen_matches(screen: AuditScreen, compaction: dict) -> None:
    """The tables show exactly the JSON's identifiers, lost-and-needed and new-after entries."""
    idents = screen.query_one("#identifiers", DataTable)
    shown = {(k, v, s.split()[-1]) for s, k, v in zip(_cells(idents, 0), _cells(idents, 1),
                                                      _cells(idents, 2))}
    assert shown == {(i["kind"], i["value"], i["state"]) for i in compaction["identifiers"]}
    lost = screen.query_one("#lost", DataTable)
    assert list(zip(_cells(lost, 0), _cells(lost, 1), _cells(lost, 3))) == [
        (x["kind"], x["value"], f"line {x['used_at']} ({x['used_in'].replace('_', ' ')})")
        for x in compaction["lost_and_needed"]]
    new = screen.query_one("#new-after", DataTable)
    assert list(zip(_cells(new, 0), _cells(new, 1), _cells(new, 3))) == [
        (x["kind"], x["value"], ", ".join(x["signatures"]) or "—")
        for x in compaction["new_after"]]


async def test_stepping_compactions_shows_what_audit_json_says(capsys):
    doc = _doc(capsys, PORT_DROP)
    first, second = doc["compactions"]
    app = FoldscopeApp(None, audits=[audit_view(doc)])
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, AuditScreen)
        _assert_screen_matches(screen, first)
        assert "62114" in _cells(screen.query_one("#lost", DataTable), 1)
        summary = screen.query_one("#summary", CarrierView)
        assert any("kid-7F3A9C2l" in line for line in summary.plain_lines)
        assert "compaction 1/2" in str(screen.query_one("#compaction-title").content)

        await pilot.press("right_square_bracket")
        await wait_until(pilot, lambda: "compaction 2/2" in str(
            screen.query_one("#compaction-title").content), "the second compaction")
        _assert_screen_matches(screen, second)
        await pilot.press("right_square_bracket")  # stays on the last
        assert screen.compaction_index == 1

        await pilot.press("d")
        await pilot.pause()
        diff = screen.query_one("#diff", DiffView)
        assert diff.plain_lines[0] == "summary 1 → 2"
        assert any(line.startswith("- ") and "kid-7F3A9C2l" in line for line in diff.plain_lines)
        assert any(line.startswith("+ ") and "62114" in line for line in diff.plain_lines)

        # Values the second summary lost are marked on the removed line in the lost style
        # (the wrapped diff fits the pane, so every row is drawn).
        lost_style = diff.get_component_rich_style("diff-view--lost", partial=True)
        segments = [seg for y in range(diff.size.height) for seg in diff.render_line(y)]
        marked = " ".join(seg.text for seg in segments
                          if seg.style is not None and seg.style.reverse and
                          seg.style.color == lost_style.color)
        assert "kid-7F3A9C2l" in marked and "/opt/kestrel/ledger.conf" in marked
        assert "Task" not in marked and "62114" not in marked
        await pilot.press("w")  # both panes show long lines whole, then wrap again
        assert not diff.wrap and not summary.wrap
        await pilot.press("w")
        assert diff.wrap and summary.wrap

        await pilot.press("left_square_bracket")
        await wait_until(pilot, lambda: screen.compaction_index == 0, "back to the first")
        _assert_screen_matches(screen, first)
        await pilot.press("escape")  # the first screen: escape never quits ...
        await pilot.pause()
        assert app.screen is screen and app.return_code is None
        await pilot.press("q")  # ... q does
        await pilot.pause()
    assert app.return_code == 0


def test_summary_highlights_follow_the_audit_states(capsys):
    doc = _doc(capsys, PORT_DROP)
    view = audit_view(doc)
    for c, summary in zip(view.compactions, view.summaries, strict=True):
        assert summary is not None
        spans = summary_spans(summary, c.identifiers)
        marked = {(summary[s.start:s.end], s.state) for s in spans}
        for i in c.identifiers:
            if i.state == "present":
                assert (i.value, "present") in marked or any(
                    i.value in text and state == "present" for text, state in marked)
            elif i.state == "mutated":
                assert (i.altered, "mutated") in marked
            else:
                assert all(i.value != text for text, _ in marked)


def test_the_audit_document_round_trips_and_bad_documents_are_one_line(capsys):
    doc = _doc(capsys, PORT_DROP)
    view = audit_view(doc)
    assert [c.index for c in view.compactions] == [1, 2]
    assert [(x.kind, x.value, x.used_at) for x in view.compactions[0].lost_and_needed] == [
        (x["kind"], x["value"], x["used_at"]) for x in doc["compactions"][0]["lost_and_needed"]]
    assert view.summaries[0] == doc["compactions"][0]["summary"]
    redacted = audit_view(_doc(capsys, PORT_DROP, "--redact"))
    assert redacted.redacted and redacted.summaries == (None, None)
    broken = json.loads(json.dumps(doc))
    broken["compactions"][0]["lost_and_needed"][0]["used_at"] = "soon"
    with pytest.raises(ConfigError, match="compaction #1: 'used_at'"):
        audit_view(broken)
    with pytest.raises(ConfigError):
        audit_view({"format": "jsonl"})


async def test_hostile_summary_text_is_shown_literally(tmp_path):
    session = tmp_path / "hostile.jsonl"
    hostile = "[bold red]port 62114[/] \x1b[31mred\x1b[0m \u202eevil"
    session.write_text("\n".join(json.dumps(x) for x in (
        {"role": "assistant", "content": "the ledger listens on port 62114"},
        {"type": "compaction", "summary": hostile},
        {"role": "assistant", "content": "still port 62114"})) + "\n", encoding="utf-8")
    import contextlib
    import io
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["audit", str(session), "--json"]) == 0
    app = FoldscopeApp(None, audits=[audit_view(json.loads(out.getvalue()))])
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        lines = app.screen.query_one("#summary", CarrierView).plain_lines
        assert lines == ["[bold red]port 62114[/] ␛[31mred␛[0m \ufffdevil"]
        await pilot.press("d")
        await pilot.pause()
        diff = app.screen.query_one("#diff", DiffView).plain_lines
        assert "+ [bold red]port 62114[/] ␛[31mred␛[0m \ufffdevil" in diff


async def test_stored_audits_are_sessions_in_the_picker(capsys, tmp_path):
    db = tmp_path / "audits.sqlite"
    assert main(["audit", str(PORT_DROP), "--db", str(db)]) == 0
    capsys.readouterr()
    doc = _doc(capsys, PORT_DROP)
    app = FoldscopeApp(str(db))
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, SweepPicker)
        await wait_group(app, "picker-load")
        await pilot.pause()
        sessions = app.screen.query_one(SessionTable)
        assert sessions.row_count == 1 and sessions.display
        assert sessions.get_row_at(0)[1].plain.endswith("port-drop.claude-code.jsonl")
        sessions.focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, AuditScreen), "the audit screen")
        _assert_screen_matches(app.screen, doc["compactions"][0])
        assert "stored as audit 1" in str(app.screen.query_one("#audit-title").content)
        await pilot.press("escape")  # back to the picker, not out of the app
        await wait_until(pilot, lambda: isinstance(app.screen, SweepPicker), "the picker again")


def test_the_tui_opens_only_on_a_terminal_without_json_or_plain(capsys, monkeypatch):
    opened: list[int] = []
    monkeypatch.setattr(audit_cmd, "open_tui", lambda docs, db: opened.append(len(docs)) or 0)
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    assert main(["audit", str(PORT_DROP)]) == 0 and opened == [1]
    assert main(["audit", str(PORT_DROP), "--plain"]) == 0 and opened == [1]
    assert "compaction 1 at line 9" in capsys.readouterr().out
    assert main(["audit", str(PORT_DROP), "--json"]) == 0 and opened == [1]
    monkeypatch.setattr("sys.stdout.isatty", lambda: False)
    assert main(["audit", str(PORT_DROP)]) == 0 and opened == [1]


def test_audit_screen_snapshot(snap_compare, capsys):
    doc = _doc(capsys, PORT_DROP)
    doc["source"] = "port-drop.claude-code.jsonl"  # the same picture from any working directory
    app = FoldscopeApp(None, audits=[audit_view(doc)])

    async def settle(pilot):
        await pilot.pause()

    assert snap_compare(app, terminal_size=(140, 36), run_before=settle)


def test_audit_screen_snapshot_80x24(snap_compare, capsys):
    doc = _doc(capsys, PORT_DROP)
    doc["source"] = "port-drop.claude-code.jsonl"  # the same picture from any working directory
    app = FoldscopeApp(None, audits=[audit_view(doc)])

    async def settle(pilot):
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=settle)


def test_a_database_of_only_session_audits_opens_the_picker(capsys, tmp_path, monkeypatch):
    from foldscope.ui import app as app_module

    db = tmp_path / "only-audits.sqlite"
    assert main(["audit", str(PORT_DROP), "--db", str(db)]) == 0
    opened: list[tuple] = []
    monkeypatch.setattr(app_module.FoldscopeApp, "run",
                        lambda self: opened.append((self.db_path, self.sweep_id, self.audits)))
    assert main(["--db", str(db)]) == 0
    assert opened == [(str(db), None, None)]


async def test_lost_first_filters_context_help_and_escape(capsys):
    doc = _doc(capsys, PORT_DROP)
    app = FoldscopeApp(None, audits=[audit_view(doc)])
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, AuditScreen)
        tabs = screen.query_one("#audit-tabs", TabbedContent)
        assert tabs.active == "lost-tab"  # lost and needed first
        lost = screen.query_one("#lost", DataTable)
        assert lost.has_focus and lost.row_count == len(doc["compactions"][0]["lost_and_needed"])
        assert [c.label.plain for c in lost.columns.values()] == [
            "kind", "value", "state", "used at", "recovered", "context"]
        # at 80 columns the context column is off screen: right scrolls to it
        before = lost.scroll_x
        await pilot.press("right", "right", "right", "right", "right", "right")
        await pilot.pause()
        assert lost.scroll_x > before
        # enter: where the value was used again, its context shown with the value marked
        await pilot.press("enter")
        await pilot.pause()
        pane = screen.query_one("#audit-context", Static)
        first = doc["compactions"][0]["lost_and_needed"][0]
        assert pane.display and f"line {first['used_at']}" in str(pane.render())
        # ... and the session line itself, read again from the file, the value marked
        await wait_group(app, "audit-line")
        await wait_until(pilot, lambda: "assistant, line 1 of 1" in str(pane.render()),
                         "the session line to be read")
        shown = pane.render()
        assert "The configured port is 62114, not 8080. Restarting." in str(shown)
        assert any(str(shown)[span.start:span.end] == "62114"
                   and (getattr(span.style, "reverse", False) or "reverse" in str(span.style))
                   for span in shown.spans)
        await pilot.press("escape")  # closes the context pane, the app stays
        await pilot.pause()
        assert not pane.display and app.return_code is None
        # kind filter: only ports
        kinds = sorted({i["kind"] for i in doc["compactions"][0]["identifiers"]})
        await pilot.press("k")
        await pilot.pause()
        assert screen.kind_filter == kinds[0]
        idents = screen.query_one("#identifiers", DataTable)
        assert set(_cells(idents, 1)) == {kinds[0]}
        while screen.kind_filter is not None:
            await pilot.press("k")
        # channel filter: tool calls only
        await pilot.press("h", "h")
        await pilot.pause()
        assert screen.channel_filter == "tool_call"
        assert all("tool call" in cell for cell in _cells(lost, 3))
        # its own help, closed by escape
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, AuditHelpScreen)
        assert "Lost and needed" in str(app.screen.query_one("#audit-help", Static).render())
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen
        await pilot.press("i")
        await pilot.pause()
        assert tabs.active == "ids-tab"
        await pilot.press("escape")  # back to the lost list, not out
        await pilot.pause()
        assert tabs.active == "lost-tab" and app.return_code is None


def test_a_session_line_is_read_again_and_its_value_marked(tmp_path):
    from foldscope.core.errors import SessionError
    from foldscope.engine.audit_readers import SHOWN_LINE_BYTES, session_line
    from foldscope.ui.screens.audit import line_excerpt

    line = session_line(PORT_DROP, 16, "claude-code")
    assert line.texts == (("assistant", "The configured port is 62114, not 8080. Restarting."),)
    text = line_excerpt(line, "port", "62114", "assistant", "reverse")
    assert text is not None and "62114, not 8080" in text.plain
    # A file that changed since: the value is not on that line any more.
    assert line_excerpt(session_line(PORT_DROP, 2, "claude-code"), "port", "62114", "assistant",
                        "reverse") is None
    with pytest.raises(SessionError, match="no line 999"):
        session_line(PORT_DROP, 999, "claude-code")
    with pytest.raises(SessionError):
        session_line(tmp_path / "gone.jsonl", 1, "claude-code")
    # Hostile text stays literal; a long entry shows the lines around the value; a path used
    # relative to the working directory is found by its last parts.
    hostile = tmp_path / "h.jsonl"
    body = "\n".join([f"row {i}" for i in range(40)] + ["cfg at src/app/settings.toml \x1b[2J!"]
                      + ["tail"] * 30)
    hostile.write_text(json.dumps({"role": "tool", "content": body}) + "\n"
                       + "x" * (SHOWN_LINE_BYTES + 10) + "\n")
    text = line_excerpt(session_line(hostile, 1, "jsonl"), "path", "/repo/src/app/settings.toml",
                        "tool_output", "reverse")
    assert text is not None and "\x1b" not in text.plain and "\u241b[2J" in text.plain
    assert "row 37" in text.plain and "row 36" not in text.plain and "⋮" in text.plain
    assert "line 41 of 71" in text.plain
    long = session_line(hostile, 2, "jsonl")
    assert long.cut and long.texts[0][0] == "raw"
    with pytest.raises(SessionError, match="no lines"):
        session_line(hostile, 1, "inspect")


async def test_a_malformed_stored_audit_is_read_in_a_worker_and_reported_in_one_line(tmp_path):
    from foldscope.engine.store import Store

    db = tmp_path / "audits.sqlite"
    with Store(db) as store:  # a compaction this version cannot read (stored by another one)
        store.add_audit({"format": "claude-code",
                         "compactions": [{"lost_and_needed": [], "used_at": []}]})
    app = FoldscopeApp(str(db))
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        await wait_group(app, "picker-load")
        await pilot.pause()
        app.screen.query_one(SessionTable).focus()
        await pilot.press("enter")
        await wait_group(app, "audit-read")
        await wait_until(pilot, lambda: any("compaction #1" in str(n.message)
                                            for n in app._notifications), "the error line")
        assert not isinstance(app.screen, AuditScreen)  # none of a malformed document

"""The session audit screen: a real agent session read like a row — its compactions as folds.
What the agent lost and needed comes first; then what only came back in tool output, every
identifier of the replaced history with its state, the values likely re-invented, the summary
(the carrier, identifiers highlighted by state) and its diff from the previous one. Each list is
a full-width table (every column reachable: left and right scroll it), filtered by kind and by
channel; enter shows where a value was used again: that line of the session file, read again
(through the literal-text function), with the value marked."""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.reactive import reactive
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Header, Static, TabbedContent, TabPane

from foldscope.core.audit import CompactionAudit, LostAndNeeded, Reappeared
from foldscope.core.audit_view import AuditView, summary_spans
from foldscope.core.errors import SessionError
from foldscope.core.forensics import MISSING, MUTATED, PRESENT, UNKNOWN
from foldscope.core.text import literal
from foldscope.engine.audit_readers import JSONL_FORMATS, SessionLine, session_line
from foldscope.ui.widgets.carrier_view import CarrierView
from foldscope.ui.widgets.diff_view import DiffView
from foldscope.ui.widgets.fact_history import STATE_MARKS
from foldscope.ui.widgets.keys_footer import KeysFooter

TABLE_TABS: tuple[tuple[str, str, str], ...] = (
    ("lost-tab", "lost", "Lost and needed"),
    ("back-tab", "reappeared", "Reappeared"),
    ("ids-tab", "identifiers", "Identifiers"),
    ("new-tab", "new-after", "New after"),
)
"""The list tabs, in order: (tab id, table id, title)."""

CHANNELS: tuple[str, ...] = ("assistant", "tool_call", "tool_output", "user")
"""Channels a filter can keep (where a value was used again, or came back)."""

_UNKNOWN_MARK = ("?", "fact-missing")


def _one_line(text: str) -> str:
    return literal(text, keep_newlines=False)


def _tokens(c: CompactionAudit) -> str:
    if c.tokens_before is None and c.tokens_after is None:
        return "tokens not recorded"
    show = (lambda n: "?" if n is None else f"{n:,}")
    return f"{show(c.tokens_before)} → {show(c.tokens_after)} tokens"


EXCERPT_BEFORE = 3
"""Lines of the entry shown before the one where the value stands (and twice as many after)."""

EXCERPT_LINE_CHARS = 240
"""A longer line of the entry is shown as this many characters around the value."""


def _needles(kind: str, value: str) -> list[str]:
    """What to look for in the line: the value, and for a path its last parts (the agent may
    have written it relative to its working directory)."""
    out = [value]
    if kind == "path":
        parts = value.rstrip("/").split("/")
        out += ["/".join(parts[-2:]), posixpath.basename(value.rstrip("/"))]
    elif kind == "env_var":
        out.append(value.strip("${}"))
    return [n for n in dict.fromkeys(out) if n]


def line_excerpt(line: SessionLine, kind: str, value: str, channel: str, style: str
                 ) -> Text | None:
    """The part of a session line where the value stands, shown literally with the value
    marked: the entry of ``channel`` holding it (else any entry holding it), a few of its lines
    around the first occurrence. None when no entry of the line holds the value."""
    for needle in _needles(kind, value):
        shown = _one_line(needle)
        for prefer in (True, False):
            for who, text in line.texts:
                if (who == channel) != prefer:
                    continue
                body = literal(text)
                at = body.find(shown)
                if at < 0:
                    continue
                lines = body.split("\n")
                row = body.count("\n", 0, at)
                lo, hi = max(0, row - EXCERPT_BEFORE), min(len(lines), row + 2 * EXCERPT_BEFORE + 1)
                out = Text()
                where = f"{who.replace('_', ' ')}, line {row + 1} of {len(lines)} of its text"
                out.append(f"[{where}{', cut: the file line is longer' if line.cut else ''}]\n",
                           style="dim")
                if lo > 0:
                    out.append("  ⋮\n", style="dim")
                for n in range(lo, hi):
                    part = lines[n]
                    if len(part) > EXCERPT_LINE_CHARS:
                        hit = part.find(shown)
                        start = max(0, (hit if hit >= 0 else 0) - EXCERPT_LINE_CHARS // 3)
                        part = (("…" if start else "") + part[start:start + EXCERPT_LINE_CHARS]
                                + ("…" if start + EXCERPT_LINE_CHARS < len(part) else ""))
                    out.append_text(_marked(part, needle, style))
                    out.append("\n")
                if hi < len(lines):
                    out.append("  ⋮\n", style="dim")
                out.rstrip()
                return out
    return None


def _marked(context: str, value: str, style: str) -> Text:
    """The context with every occurrence of the value marked (both shown literally)."""
    text = Text(context)
    shown = _one_line(value)
    if shown:
        start = context.find(shown)
        while start >= 0:
            text.stylize(style, start, start + len(shown))
            start = context.find(shown, start + len(shown))
    return text


AUDIT_HELP: tuple[tuple[str, str], ...] = (
    ("Lost and needed", "values the compaction's summary did not carry intact that the agent "
     "itself wrote again afterwards (its text or a tool call's input), soonest first, then by "
     "how much losing that kind costs. 'recovered': tool output had shown the value again "
     "before the agent wrote it."),
    ("Reappeared", "values the summary did not carry that so far only came back in tool output "
     "(a file re-read, a command's output) — the agent did not need to write them."),
    ("Identifiers", "the task's identifiers of the history the compaction replaced (the entries "
     "since the previous compaction, plus the previous summary) and their state in the summary: "
     "what the agent or the person wrote, what the summary carries, and what only tool output "
     "showed once the agent needs it again."),
    ("New after", "values of a lost kind written after the compaction that nothing had shown "
     "before (likely re-invented), with their stock-value signatures."),
    ("● ◐ ○ ?", "present (whole token; a path also relative to the session's working "
     "directory), mutated (a near miss of a token of its kind), missing, unknown (the carrier "
     "is opaque: a server-side compaction whose summary cannot be read)."),
    ("Filters", "k cycles the kind shown, h the channel (where a value was used again or came "
     "back); both apply to every list."),
)
"""What the audit screen's lists and marks mean (its help)."""


class AuditHelpScreen(ModalScreen[None]):
    """The audit screen's own help: its keys and what its lists mean."""

    DEFAULT_CSS = """
    AuditHelpScreen { align: center middle; }
    AuditHelpScreen > VerticalScroll {
        width: 90%; max-width: 110; height: 90%;
        border: round $primary; background: $surface; padding: 0 1;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark,f1", "dismiss", "Close help", show=True)]

    def __init__(self, bindings: Sequence[BindingType]) -> None:
        super().__init__()
        self.keys = [b for b in bindings if isinstance(b, Binding) and b.description]

    def compose(self) -> ComposeResult:
        text = Text()
        text.append("Session audit: keys\n", style="bold")
        for b in self.keys:
            key = b.key_display or ", ".join(
                self.app.get_key_display(Binding(k.strip(), b.action)) for k in b.key.split(","))
            text.append(f"  {key:<14}", style="bold")
            text.append(b.description)
            text.append(f" — {b.tooltip}\n" if b.tooltip else "\n", style="dim")
        text.append("  ←/→           scroll a list sideways (every column)\n", style="")
        text.append("\nWhat the lists mean\n", style="bold")
        for name, meaning in AUDIT_HELP:
            text.append(f"  {name}\n", style="bold")
            text.append(f"    {meaning}\n")
        with VerticalScroll():
            yield Static(text, id="audit-help")


class AuditScreen(Screen[None]):
    """One audited session (or several, from one inspect log), stepped compaction by compaction.

    Args:
        views: the audited sessions (a Claude Code, Codex, pi or JSONL file is one; an inspect
            log one per sample).
        quit_on_back: this screen is the app's first (``foldscope audit`` opened it): escape
            steps back inside it but never quits; ``q`` quits.
    """

    DEFAULT_CSS = """
    AuditScreen {
        #audit-body { padding: 0 1; }
        #audit-title { margin: 1 0 0 0; }
        #compaction-title { color: $text-muted; }
        #audit-filter { color: $text-muted; margin: 0 0 1 0; }
        #audit-tabs { height: 1fr; }
        #audit-tabs DataTable { height: 1fr; }
        #audit-context { height: auto; max-height: 14; border: round $primary; padding: 0 1; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", tooltip="Close the context pane, then back to the lost "
                "list, then back to the screen below (never quits)"),
        Binding("q", "leave", "Quit", tooltip="Quit when foldscope audit opened this screen, "
                "else back"),
        Binding("question_mark,f1", "audit_help", "Help", key_display="? F1",
                tooltip="This screen's keys and what its lists mean"),
        Binding("left_square_bracket", "step(-1)", "Prev compaction",
                tooltip="The previous compaction of the session"),
        Binding("right_square_bracket", "step(1)", "Next compaction",
                tooltip="The next compaction of the session"),
        Binding("l", "show_tab('lost-tab')", "Lost", tooltip="Lost and needed: values the agent "
                "wrote again after the summary dropped them"),
        Binding("r", "show_tab('back-tab')", "Reappeared", tooltip="Values that only came back "
                "in tool output"),
        Binding("i", "show_tab('ids-tab')", "Identifiers",
                tooltip="Every identifier of the replaced history and its state"),
        Binding("a", "show_tab('new-tab')", "New after",
                tooltip="Values of lost kinds nothing had shown before (likely re-invented)"),
        Binding("c", "show_tab('summary-tab')", "Summary",
                tooltip="The compaction's summary, identifiers highlighted by state"),
        Binding("d", "show_tab('diff-tab')", "Diff",
                tooltip="What changed from the previous summary"),
        Binding("k", "cycle_kind", "Kind", tooltip="Show one kind of value, the next, ... or all"),
        Binding("h", "cycle_channel", "Channel", tooltip="Show values used again (or come back) "
                "in one channel: assistant, tool call, tool output, user, or all"),
        Binding("w", "toggle_wrap", "Wrap", show=False, tooltip="Wrap the summary and diff panes "
                "at their width, or show long lines whole (scroll sideways)"),
        Binding("left_curly_bracket", "session(-1)", "Prev session",
                tooltip="The previous session of the log"),
        Binding("right_curly_bracket", "session(1)", "Next session",
                tooltip="The next session of the log"),
    ]
    """Key bindings of the session audit screen."""

    session_index: reactive[int] = reactive(0)
    """The session shown (an inspect log holds one per sample)."""
    compaction_index: reactive[int] = reactive(0)
    """The compaction whose lists, summary and diff are shown."""

    def __init__(self, views: Sequence[AuditView], *, quit_on_back: bool = False) -> None:
        super().__init__()
        self.views = list(views)
        self.quit_on_back = quit_on_back
        self.kind_filter: str | None = None
        self.channel_filter: str | None = None
        self._rows: dict[str, list[LostAndNeeded | Reappeared]] = {}
        self._asked = 0  # which enter the line being read belongs to

    @property
    def view(self) -> AuditView | None:
        """The session on display."""
        return self.views[self.session_index] if self.views else None

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="audit-body"):
            yield Static(id="audit-title")
            yield Static(id="compaction-title")
            yield Static(id="audit-filter")
            with TabbedContent(id="audit-tabs", initial="lost-tab"):
                for tab, table, title in TABLE_TABS:
                    with TabPane(title, id=tab):
                        yield DataTable(id=table, cursor_type="row", zebra_stripes=True)
                with TabPane("Summary", id="summary-tab"):
                    yield CarrierView(id="summary")
                with TabPane("Diff", id="diff-tab"):
                    yield DiffView(id="diff")
            yield Static(id="audit-context")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.query_one("#diff", DiffView).wrap = True  # summaries are long paragraphs
        self.query_one("#audit-context", Static).display = False
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._show())
        self._draw()
        self.query_one("#lost", DataTable).focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "session":
            return len(self.views) > 1
        return True

    # -- actions ------------------------------------------------------------------------------

    def action_back(self) -> None:
        """Step back: close the context pane, else return to the lost list, else leave the
        screen for the one below (when foldscope audit opened it, there is none: stay)."""
        context = self.query_one("#audit-context", Static)
        tabs = self.query_one("#audit-tabs", TabbedContent)
        if context.display:
            context.display = False
        elif tabs.active != "lost-tab":
            self.action_show_tab("lost-tab")
        elif not self.quit_on_back:
            self.dismiss(None)
        else:
            self.notify("this is the first screen: q quits", timeout=3)

    def action_leave(self) -> None:
        """Quit when ``foldscope audit`` opened this screen, else go back to the one below."""
        if self.quit_on_back:
            self.app.exit()
        else:
            self.dismiss(None)

    def action_audit_help(self) -> None:
        """Open this screen's help."""
        self.app.push_screen(AuditHelpScreen(self.BINDINGS))

    def action_step(self, delta: int) -> None:
        """Step to the previous or next compaction."""
        view = self.view
        if view is not None and view.compactions:
            self.compaction_index = min(max(0, self.compaction_index + delta),
                                        len(view.compactions) - 1)

    def action_session(self, delta: int) -> None:
        """Step to the previous or next session of a log (back to its first compaction)."""
        if self.views:
            self.session_index = (self.session_index + delta) % len(self.views)
            self.compaction_index = 0
            self._show()

    def action_show_tab(self, tab: str) -> None:
        """Show one list, the summary or the diff."""
        self.query_one("#audit-tabs", TabbedContent).active = tab
        target = {"summary-tab": "#summary", "diff-tab": "#diff"}.get(tab) or "#" + next(
            table for t, table, _ in TABLE_TABS if t == tab)
        self.call_after_refresh(self.query_one(target).focus)

    def action_cycle_kind(self) -> None:
        """Filter every list to the next kind present in this compaction (then all again)."""
        kinds = self._kinds()
        if not kinds:
            self.kind_filter = None
        elif self.kind_filter not in kinds:
            self.kind_filter = kinds[0]
        else:
            at = kinds.index(self.kind_filter) + 1
            self.kind_filter = kinds[at] if at < len(kinds) else None
        self._show()

    def action_cycle_channel(self) -> None:
        """Filter the lost and reappeared lists to the next channel (then all again)."""
        order = [None, *CHANNELS]
        self.channel_filter = order[(order.index(self.channel_filter) + 1) % len(order)]
        self._show()

    def action_toggle_wrap(self) -> None:
        """Wrap both text panes, or show their lines whole."""
        summary = self.query_one("#summary", CarrierView)
        summary.wrap = not summary.wrap
        self.query_one("#diff", DiffView).wrap = summary.wrap

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a lost or reappeared value: where it was used again, its context marked."""
        table_id = event.data_table.id or ""
        rows = self._rows.get(table_id, [])
        if event.cursor_row >= len(rows) or self.view is None:
            return
        self._show_context(rows[event.cursor_row], self.view)

    # -- drawing ------------------------------------------------------------------------------

    def watch_compaction_index(self, index: int) -> None:
        self._show()

    def _show(self) -> None:
        if self.is_mounted:
            self._draw()

    def _current(self) -> CompactionAudit | None:
        view = self.view
        if view is None or not view.compactions:
            return None
        return view.compactions[min(self.compaction_index, len(view.compactions) - 1)]

    def _kinds(self) -> list[str]:
        c = self._current()
        return sorted({i.kind for i in c.identifiers}) if c is not None else []

    def _keep(self, kind: str, channel: str | None = None) -> bool:
        if self.kind_filter is not None and kind != self.kind_filter:
            return False
        return self.channel_filter is None or channel is None or channel == self.channel_filter

    def _show_context(self, row: LostAndNeeded | Reappeared, view: AuditView) -> None:
        """Where the value was used again: the head at once, then the session line itself,
        read from the file in a worker (the stored context until then, or when the file cannot
        be read any more)."""
        colours = self.app.get_css_variables()
        style = f"reverse {colours.get('fact-missing', '')}"
        if isinstance(row, LostAndNeeded):
            at, channel, how = row.used_at, row.used_in, "written again by the agent"
            if row.recovered:
                how += " (tool output had shown it first)"
        else:
            at, channel, how = row.at, row.channel, "came back"
        head = Text(f"{view.where} {at} · {channel.replace('_', ' ')} · {row.kind} "
                    f"{_one_line(row.value)} · {how}\n", style="bold")
        stored = (_marked(row.context, row.value, style)
                  if row.context else Text("(no context kept: a redacted audit)", style="dim"))
        self._asked += 1
        readable = (view.source is not None and not view.redacted
                    and view.format in JSONL_FORMATS)
        note = Text(f"\n(reading {view.where} {at} of the file…)" if readable else "", style="dim")
        pane = self.query_one("#audit-context", Static)
        pane.update(head + stored + note)
        pane.display = True
        if readable:
            assert view.source is not None
            self._read_line(self._asked, view.source, view.format, at, row, head, stored, style)

    @work(thread=True, exclusive=True, group="audit-line", exit_on_error=False,
          description="read a session line")
    def _read_line(self, asked: int, source: str, fmt: str, at: int,
                   row: LostAndNeeded | Reappeared, head: Text, stored: Text, style: str) -> None:
        try:
            line = session_line(source, at, fmt)
        except SessionError as err:
            body = stored + Text(f"\n({literal(str(err), keep_newlines=False)}: the stored "
                                 "context is shown)", style="dim")
        else:
            channel = row.used_in if isinstance(row, LostAndNeeded) else row.channel
            excerpt = line_excerpt(line, row.kind, row.value, channel, style)
            body = excerpt if excerpt is not None else stored + Text(
                f"\n(the file's line {at} no longer holds this value: the stored context is "
                "shown)", style="dim")
        self.app.call_from_thread(self._line_read, asked, head + body)

    def _line_read(self, asked: int, text: Text) -> None:
        if asked != self._asked or not self.is_mounted:
            return  # another value was chosen since, or the screen is gone
        pane = self.query_one("#audit-context", Static)
        if pane.display:
            pane.update(text)

    def _draw(self) -> None:
        """Map the selected session and compaction onto the titles, lists and panes."""
        view = self.view
        summary_view = self.query_one("#summary", CarrierView)
        diff = self.query_one("#diff", DiffView)
        tables = {table: self.query_one(f"#{table}", DataTable) for _, table, _ in TABLE_TABS}
        if view is None:
            self.query_one("#audit-title", Static).update(Text("no session in this log"))
            return
        self.query_one("#audit-title", Static).update(self._session_title(view))
        c = self._current()
        if c is None:
            self.query_one("#compaction-title", Static).update(
                Text("no compaction in this session: nothing was summarised away", style="dim"))
            summary_view.show("")
            diff.show_values_diff("no compaction", None, "")
            for table in tables.values():
                table.clear(columns=True)
            return
        index = view.compactions.index(c)
        previous = view.compactions[index - 1] if index > 0 else None
        summary = view.summaries[index]
        unknown = f" · {c.count(UNKNOWN)} unknown" if c.count(UNKNOWN) else ""
        carrier = "" if c.carrier == "text" else f" · carrier {c.carrier}"
        self.query_one("#compaction-title", Static).update(Text(
            f"compaction {c.index}/{len(view.compactions)} at {view.where} {c.at} · "
            f"{_one_line(c.kind)} · {_tokens(c)}"
            + (f" · {_one_line(c.trigger)}" if c.trigger else "") + carrier
            + f" · {c.count(PRESENT)} present · {c.count(MUTATED)} mutated · "
            f"{c.count(MISSING)} missing{unknown} · {len(c.lost_and_needed)} lost and needed"
            f" · {len(c.reappeared)} reappeared   [ ] step compactions"))
        self.query_one("#audit-filter", Static).update(Text(
            f"showing kind: {self.kind_filter or 'all'} (k) · channel: "
            f"{(self.channel_filter or 'all').replace('_', ' ')} (h) · enter: where a value was "
            "used again · ? help"))
        if summary is None:
            why = "redacted audit" if view.redacted else "not stored with this audit"
            summary_view.show(f"(summary {why}: identifier states are in the table)")
            diff.show_values_diff(f"no summary to compare ({why})", None, "")
        else:
            # Session text is data: CarrierView and DiffView show it through
            # core.text.literal and never parse it as markup.
            summary_view.show(summary, summary_spans(summary, c.identifiers))
            lost = [i.value for i in c.identifiers if i.state != PRESENT]
            gained = ([i.altered for i in c.identifiers if i.altered]
                      + [n.value for n in c.new_after])
            before = view.summaries[index - 1] if previous is not None else None
            title = (f"summary {previous.index} → {c.index}" if previous is not None
                     else f"summary {c.index} (no summary before it)")
            diff.show_values_diff(title, before, summary, lost=lost, gained=gained)
        self._fill_tables(view, c, tables)

    def _session_title(self, view: AuditView) -> Text:
        name = "(redacted session)" if view.redacted else _one_line(view.source or "session")
        parts = [name, view.format]
        if view.session and not view.redacted and view.format == "inspect":
            parts.append(f"sample {_one_line(view.session)}")
        if len(self.views) > 1:
            parts.append(f"session {self.session_index + 1}/{len(self.views)}  {{ }} step")
        parts.append(f"{len(view.compactions)} compaction(s)")
        if view.skipped_lines:
            parts.append(f"{view.skipped_lines} unreadable line(s) skipped")
        if view.stored_as is not None:
            parts.append(f"stored as audit {view.stored_as}")
        return Text(" · ".join(parts), style="bold")

    def _fill_tables(self, view: AuditView, c: CompactionAudit,
                     tables: dict[str, DataTable]) -> None:
        """The four lists, states marked and coloured as in the sweep's fact table."""
        colours = self.app.get_css_variables()

        def mark(state: str) -> Text:
            symbol, var = STATE_MARKS.get(state, _UNKNOWN_MARK)
            return Text(f"{symbol} {state}", style=colours.get(var, ""))

        lost = tables["lost"]
        lost.clear(columns=True)
        for label in ("kind", "value", "state", "used at", "recovered", "context"):
            lost.add_column(label, key=label)
        kept_lost = [x for x in c.lost_and_needed if self._keep(x.kind, x.used_in)]
        for n, x in enumerate(kept_lost):
            where = f"{view.where} {x.used_at}" + (f" ({x.used_in.replace('_', ' ')})"
                                                   if x.used_in else "")
            lost.add_row(Text(x.kind), Text(_one_line(x.value)), mark(x.state), Text(where),
                         Text("yes" if x.recovered else "—"), Text(_one_line(x.context)),
                         key=f"l{n}")
        back = tables["reappeared"]
        back.clear(columns=True)
        for label in ("kind", "value", "state", "at", "context"):
            back.add_column(label, key=label)
        kept_back = [x for x in c.reappeared if self._keep(x.kind, x.channel)]
        for n, r in enumerate(kept_back):
            back.add_row(Text(r.kind), Text(_one_line(r.value)), mark(r.state),
                         Text(f"{view.where} {r.at} ({r.channel.replace('_', ' ')})"),
                         Text(_one_line(r.context)), key=f"r{n}")
        self._rows = {"lost": list(kept_lost), "reappeared": list(kept_back)}
        idents = tables["identifiers"]
        idents.clear(columns=True)
        for label in ("state", "kind", "value", "altered to"):
            idents.add_column(label, key=label)
        order: dict[str, int] = {MISSING: 0, MUTATED: 1, UNKNOWN: 2, PRESENT: 3}
        kept = [i for i in c.identifiers if self._keep(i.kind)]
        for n, i in enumerate(sorted(kept, key=lambda i: order.get(i.state, 4))):
            value = _one_line(i.value) + (f" ({_one_line(i.label)})" if i.label else "")
            idents.add_row(mark(i.state), Text(i.kind), Text(value),
                           Text(_one_line(i.altered or "")), key=f"i{n}")
        new = tables["new-after"]
        new.clear(columns=True)
        for label in ("kind", "value", "first at", "signatures"):
            new.add_column(label, key=label)
        for n, na in enumerate(a for a in c.new_after if self._keep(a.kind)):
            new.add_row(Text(na.kind), Text(_one_line(na.value)),
                        Text(f"{view.where} {na.first_seen_at}"),
                        Text(", ".join(na.signatures) or "—"), key=f"n{n}")

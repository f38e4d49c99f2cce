"""The session audit screen: a real agent session read like a row — its compactions as folds,
each summary as the carrier with its identifiers highlighted by state, the diff from the previous
summary, and what was lost and needed afterwards."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static, TabbedContent, TabPane

from foldscope.core.audit import CompactionAudit
from foldscope.core.audit_view import AuditView, summary_spans
from foldscope.core.text import literal
from foldscope.ui.widgets.carrier_view import CarrierView
from foldscope.ui.widgets.diff_view import DiffView
from foldscope.ui.widgets.fact_history import STATE_MARKS


def _one_line(text: str) -> str:
    return literal(text, keep_newlines=False)


def _tokens(c: CompactionAudit) -> str:
    if c.tokens_before is None and c.tokens_after is None:
        return "tokens not recorded"
    show = (lambda n: "?" if n is None else f"{n:,}")
    return f"{show(c.tokens_before)} → {show(c.tokens_after)} tokens"


class AuditScreen(Screen[None]):
    """One audited session (or several, from one inspect log), stepped compaction by compaction.

    Args:
        views: the audited sessions (a Claude Code or JSONL file is one; an inspect log one per
            sample).
        quit_on_back: escape quits the app (the screen ``foldscope audit`` opened) instead of
            going back to the screen below.
    """

    DEFAULT_CSS = """
    AuditScreen {
        #audit-body { padding: 0 1; }
        #audit-title { margin: 1 0 0 0; }
        #compaction-title { margin: 0 0 1 0; color: $text-muted; }
        #audit-pane { height: 1fr; }
        #audit-text { width: 1fr; }
        #audit-lists { width: 68; }
        #audit-lists > Static { color: $text-muted; }
        #identifiers { height: 1fr; }
        #lost { height: auto; max-height: 10; }
        #new-after { height: auto; max-height: 8; }
    }
    """

    BINDINGS = [
        Binding("escape", "back", "Back", tooltip="Back (quits when foldscope audit opened it)"),
        Binding("left_square_bracket", "step(-1)", "Prev compaction",
                tooltip="The previous compaction of the session"),
        Binding("right_square_bracket", "step(1)", "Next compaction",
                tooltip="The next compaction of the session"),
        Binding("c", "show_tab('summary-tab')", "Summary",
                tooltip="The compaction's summary, identifiers highlighted by state"),
        Binding("d", "show_tab('diff-tab')", "Diff",
                tooltip="What changed from the previous summary"),
        Binding("w", "toggle_wrap", "Wrap", tooltip="Wrap the summary and diff panes at their "
                "width, or show long lines whole (scroll sideways)"),
        Binding("left_curly_bracket", "session(-1)", "Prev session",
                tooltip="The previous session of the log"),
        Binding("right_curly_bracket", "session(1)", "Next session",
                tooltip="The next session of the log"),
    ]
    """Key bindings of the session audit screen."""

    session_index: reactive[int] = reactive(0)
    """The session shown (an inspect log holds one per sample)."""
    compaction_index: reactive[int] = reactive(0)
    """The compaction whose summary, diff and lists are shown."""

    def __init__(self, views: Sequence[AuditView], *, quit_on_back: bool = False) -> None:
        super().__init__()
        self.views = list(views)
        self.quit_on_back = quit_on_back

    @property
    def view(self) -> AuditView | None:
        """The session on display."""
        return self.views[self.session_index] if self.views else None

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="audit-body"):
            yield Static(id="audit-title")
            yield Static(id="compaction-title")
            with Horizontal(id="audit-pane"):
                with TabbedContent(id="audit-text"):
                    with TabPane("Summary", id="summary-tab"):
                        yield CarrierView(id="summary")
                    with TabPane("Diff", id="diff-tab"):
                        yield DiffView(id="diff")
                with Vertical(id="audit-lists"):
                    yield Static("Identifiers of the history it replaced", markup=False)
                    yield DataTable(id="identifiers", cursor_type="row", zebra_stripes=True)
                    yield Static("Lost and needed: not carried, used again afterwards",
                                 markup=False)
                    yield DataTable(id="lost", cursor_type="row")
                    yield Static("New after: values of lost kinds never seen before",
                                 markup=False)
                    yield DataTable(id="new-after", cursor_type="row")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#diff", DiffView).wrap = True  # summaries are long paragraphs
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._show())
        self._draw()
        self.query_one("#identifiers", DataTable).focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "session":
            return len(self.views) > 1
        return True

    def action_back(self) -> None:
        """Back to the screen below, or quit when ``foldscope audit`` opened this screen."""
        if self.quit_on_back:
            self.app.exit()
        else:
            self.dismiss(None)

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
        """Show the summary or the diff."""
        self.query_one("#audit-text", TabbedContent).active = tab
        target = "#summary" if tab == "summary-tab" else "#diff"
        self.call_after_refresh(self.query_one(target).focus)

    def action_toggle_wrap(self) -> None:
        """Wrap both text panes, or show their lines whole."""
        summary = self.query_one("#summary", CarrierView)
        summary.wrap = not summary.wrap
        self.query_one("#diff", DiffView).wrap = summary.wrap

    def watch_compaction_index(self, index: int) -> None:
        self._show()

    def _show(self) -> None:
        if self.is_mounted:
            self._draw()

    def _draw(self) -> None:
        """Map the selected session and compaction onto the titles, panes and tables."""
        view = self.view
        summary_view = self.query_one("#summary", CarrierView)
        diff = self.query_one("#diff", DiffView)
        tables = [self.query_one(f"#{name}", DataTable)
                  for name in ("identifiers", "lost", "new-after")]
        if view is None:
            self.query_one("#audit-title", Static).update(Text("no session in this log"))
            return
        self.query_one("#audit-title", Static).update(self._session_title(view))
        if not view.compactions:
            self.query_one("#compaction-title", Static).update(
                Text("no compaction in this session: nothing was summarised away", style="dim"))
            summary_view.show("")
            diff.show_values_diff("no compaction", None, "")
            for table in tables:
                table.clear(columns=True)
            return
        index = min(self.compaction_index, len(view.compactions) - 1)
        c = view.compactions[index]
        previous = view.compactions[index - 1] if index > 0 else None
        summary = view.summaries[index]
        self.query_one("#compaction-title", Static).update(Text(
            f"compaction {c.index}/{len(view.compactions)} at {view.where} {c.at} · "
            f"{_one_line(c.kind)} · {_tokens(c)}"
            + (f" · {_one_line(c.trigger)}" if c.trigger else "")
            + f" · {c.count('present')} present · {c.count('mutated')} mutated · "
            f"{c.count('missing')} missing · {len(c.lost_and_needed)} lost and needed"
            + "   [ ] step compactions"))
        if summary is None:
            why = "redacted audit" if view.redacted else "not stored with this audit"
            summary_view.show(f"(summary {why}: identifier states are in the table)")
            diff.show_values_diff(f"no summary to compare ({why})", None, "")
        else:
            # Session text is data: CarrierView and DiffView show it through
            # core.text.literal and never parse it as markup.
            summary_view.show(summary, summary_spans(summary, c.identifiers))
            lost = [i.value for i in c.identifiers if i.state != "present"]
            gained = ([i.altered for i in c.identifiers if i.altered]
                      + [n.value for n in c.new_after])
            before = view.summaries[index - 1] if previous is not None else None
            title = (f"summary {previous.index} → {c.index}" if previous is not None
                     else f"summary {c.index} (no summary before it)")
            diff.show_values_diff(title, before, summary, lost=lost, gained=gained)
        self._fill_tables(view, c, *tables)

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

    def _fill_tables(self, view: AuditView, c: CompactionAudit, idents: DataTable,
                     lost: DataTable, new: DataTable) -> None:
        """The three lists, states marked and coloured as in the sweep's fact table."""
        colours = self.app.get_css_variables()

        def mark(state: str) -> Text:
            symbol, var = STATE_MARKS.get(state, STATE_MARKS["missing"])
            return Text(f"{symbol} {state}", style=colours.get(var, ""))

        idents.clear(columns=True)
        for label in ("state", "kind", "value", "altered to"):
            idents.add_column(label, key=label)
        order = {"missing": 0, "mutated": 1, "present": 2}
        for n, i in enumerate(sorted(c.identifiers, key=lambda i: order.get(i.state, 3))):
            value = _one_line(i.value) + (f" ({_one_line(i.label)})" if i.label else "")
            idents.add_row(mark(i.state), Text(i.kind), Text(value),
                           Text(_one_line(i.altered or "")), key=f"i{n}")
        lost.clear(columns=True)
        for label in ("kind", "value", "state", "used at"):
            lost.add_column(label, key=label)
        for n, x in enumerate(c.lost_and_needed):
            where = f"{view.where} {x.used_at}" + (f" ({x.used_in.replace('_', ' ')})"
                                                   if x.used_in else "")
            lost.add_row(Text(x.kind), Text(_one_line(x.value)), mark(x.state), Text(where),
                         key=f"l{n}")
        new.clear(columns=True)
        for label in ("kind", "value", "first at", "signatures"):
            new.add_column(label, key=label)
        for n, after in enumerate(c.new_after):
            new.add_row(Text(after.kind), Text(_one_line(after.value)),
                        Text(f"{view.where} {after.first_seen_at}"),
                        Text(", ".join(after.signatures) or "—"), key=f"n{n}")

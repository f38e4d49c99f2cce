"""The input chunk(s) one fold read, with the values planted in them highlighted (virtualised)."""

from __future__ import annotations

from collections.abc import Sequence

from textual import work
from textual.message import Message
from textual.worker import Worker, WorkerState, get_current_worker

from foldscope.core.forensics import fact_spans
from foldscope.core.scenario import Fact
from foldscope.core.text import literal
from foldscope.engine.loader import load_scenario
from foldscope.ui.widgets.literal_lines import (
    LiteralLines,
    PaneLayout,
    StyledLine,
    lay_out,
    styled_lines,
)


class ChunkView(LiteralLines):
    """A fold's input, regenerated from its scenario (chunks are not stored): graded values in
    ``$fact-present``, decoys dimmer; a rule line names each chunk."""

    COMPONENT_CLASSES = {"chunk-view--graded", "chunk-view--decoy", "chunk-view--rule"}
    """Styles of graded values, decoy values and the chunk rule lines."""

    DEFAULT_CSS = """
    ChunkView > .chunk-view--graded { color: $fact-present; text-style: bold reverse; }
    ChunkView > .chunk-view--decoy { color: $fact-mutated; text-style: underline; }
    ChunkView > .chunk-view--rule { color: $text-muted; text-style: bold; }
    """

    class Loaded(Message):
        """The chunks of a fold were read and laid out."""

        def __init__(self, view: ChunkView, key: tuple[str, int, int]) -> None:
            super().__init__()
            self.view = view
            self.key = key

        @property
        def control(self) -> ChunkView:
            """The view that loaded."""
            return self.view

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.shown: tuple[str, int, int] | None = None
        """(scenario, first chunk, last chunk) on screen, once loaded."""

    def reset(self) -> None:
        """Nothing loaded, wrapped, scrolled home (a chunk still being read is dropped when it lands)."""
        self.workers.cancel_group(self, "chunk-load")
        self.shown = None
        super().reset()

    def show_chunks(self, scenario: str, first: int, last: int) -> None:
        """Show chunks ``first..last`` (0-based) of a scenario; generated in a thread."""
        if self.shown == (scenario, first, last):
            return
        self.load(scenario, first, last, self.layout_request())

    @work(thread=True, group="chunk-load", exclusive=True, exit_on_error=False,
          description="regenerate a fold's input chunks")
    def load(self, scenario: str, first: int, last: int,
             layout: tuple[int, bool] | None = None) -> None:
        """Regenerate the chunks (loaded scenarios are cached), find the planted values and lay
        the lines out at ``layout`` (the pane's width and wrap state; default: read here)."""
        sc = load_scenario(scenario)
        lines: list[StyledLine] = []
        for index in range(first, min(last, len(sc.chunks) - 1) + 1):
            if get_current_worker().is_cancelled:
                return
            facts = sc.facts_in_chunk(index)
            lines.append(StyledLine(
                f"── chunk {index + 1} of {len(sc.chunks)} · {len(facts)} planted values "
                f"({sum(f.graded for f in facts)} graded) ──", (), "chunk-view--rule"))
            lines.extend(styled_lines(sc.chunks[index].text, _spans(sc.chunks[index].text, facts)))
        key = (scenario, first, last)
        width, wrap = layout or self.layout_request()
        if get_current_worker().is_cancelled:
            return
        self.app.call_from_thread(self._done, lay_out(lines, width, wrap, self.app.console), key)

    def worker_ended(self, event: Worker.StateChanged) -> bool:
        """The chunk could not be regenerated (its scenario file changed or went away)."""
        if event.worker.group == "chunk-load" and event.state == WorkerState.ERROR:
            self.shown = None
            self.set_lines([StyledLine(literal(
                f"cannot regenerate this fold's input: {event.worker.error}",
                keep_newlines=False), (), "chunk-view--rule")])
            return True
        return False

    def _done(self, layout: PaneLayout, key: tuple[str, int, int]) -> None:
        self.shown = key
        self.set_layout(layout)
        self.post_message(self.Loaded(self, key))


def _spans(text: str, facts: Sequence[Fact]) -> list[tuple[int, int, str]]:
    graded = {f.label: f.graded for f in facts}
    return [(s.start, s.end, "chunk-view--graded" if graded[s.label] else "chunk-view--decoy")
            for s in fact_spans(text, facts)]

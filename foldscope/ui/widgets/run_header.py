"""The sweep screen's header: what the sweep is, and how its run is going (numbers from the
engine's ``RunState``; this widget only lays them out)."""

from __future__ import annotations

import os

from rich.text import Text
from textual.widgets import Static

from foldscope.core.pace import format_duration, format_rate
from foldscope.core.status import LIVE_SWEEP_STATUSES, RESUMABLE_SWEEP_STATUSES
from foldscope.core.tally import Progress
from foldscope.core.text import cost_text, literal
from foldscope.engine.live import RunState, SweepHeader

RESUMABLE = RESUMABLE_SWEEP_STATUSES
"""Statuses of a sweep no process runs that has rows left: ``R`` resumes it."""


def plural(n: int, word: str) -> str:
    """``1 repeat``, ``2 repeats``."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def header_text(h: SweepHeader, simulated: bool) -> Text:
    """The first line: sweep, scenario(s), models, arms, repeats, design, execution mode."""
    sim = " · simulated models" if simulated else ""
    return Text.assemble(
        (f"sweep {h.id}", "bold"),
        literal(f" · {', '.join(h.scenarios)} · models {', '.join(h.models)}",
                keep_newlines=False),
        f" · arms {' '.join(h.arms)} · {plural(h.repeats, 'repeat')} · {h.design} · "
        f"{h.mode} mode{sim}")


def run_text(run: RunState, p: Progress, stop_reason: str | None,
             own_runner: int | None = None, runner_error: str | None = None) -> Text:
    """The second line: status, time, pace, progress, spend, retries and invalid rows."""
    status = run.status
    if run.runner_pid is not None and run.runner_pid not in (os.getpid(), own_runner):
        status = f"{status} · watching — run by pid {run.runner_pid}"
    # A runner that died leaves rows marked running: they are interrupted, not running.
    running = (f"{p.running} running" if run.runner_pid is not None or not p.running
               else f"{p.running} interrupted")
    parts = [status + (f" · {literal(stop_reason, keep_newlines=False)}" if stop_reason
                       and run.status not in LIVE_SWEEP_STATUSES else "")]
    if run.elapsed_s is not None:
        eta = format_duration(run.eta_s) if run.eta_s is not None else "—"
        parts.append(f"elapsed {format_duration(run.elapsed_s)} · ETA {eta} · "
                     f"{format_rate(run.folds_per_s)}")
    parts.append(f"rows {p.finished}/{p.total} ({running}, {p.failed} failed) · "
                 f"{p.folds} folds")
    parts.append(f"{cost_text(run.spend_usd, run.unpriced_calls)} · retries {run.call_retries} calls, "
                 f"{run.row_retries} rows · {plural(run.invalid_rows, 'invalid row')}")
    if run.runner_pid is None and run.status in RESUMABLE:
        parts.append("R resumes")
    line = Text(" · ".join(parts))
    line.stylize("bold", 0, len(status))
    if runner_error is not None:
        line.append(f" · runner: {literal(runner_error, keep_newlines=False)}", style="bold")
    return line


class RunHeader(Static):
    """Two lines over the grid: the sweep's definition and its run's live numbers."""

    DEFAULT_CSS = """
    RunHeader { height: auto; margin: 1 0 0 0; }
    """

    def show(self, header: SweepHeader, run: RunState, progress: Progress, simulated: bool, *,
             own_runner: int | None = None, runner_error: str | None = None) -> None:
        """Show a poll's numbers (redrawn only when the text changed).

        Args:
            own_runner: the pid of the runner this app started (its run is not "watched").
            runner_error: why that runner failed, if it did.
        """
        text = Text("\n").join([header_text(header, simulated),
                                run_text(run, progress, header.stop_reason, own_runner,
                                         runner_error)])
        if text != getattr(self, "_shown", None):
            self._shown = text
            # Repainted in place; the screen is laid out again only when the text's height
            # changed (it wraps on a narrow terminal): a layout pass on each poll costs the UI
            # thread ~10 ms while the runner wants the cores.
            self.update(text, layout=False)
            width, height = self.content_size
            if not width or self.get_content_height(self.size, self.size, width) != height:
                self.refresh(layout=True)

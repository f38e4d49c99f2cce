"""Headless progress for sweeps: a live status line on a TTY, plain lines in logs, or JSON events."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from foldscope.core.pace import format_duration, format_rate, run_pace
from foldscope.core.text import cost_text, literal
from foldscope.engine.events import Event, RowDone, RowFailed, Stopped, SweepFinished, SweepStarted
from foldscope.engine.runner import Totals


def status_line(totals: Totals, now: float | None = None) -> str:
    """One line: rows done/total, folds/s, ETA, retries, errors and spend."""
    now = time.monotonic() if now is None else now
    finished = totals.rows_done + totals.rows_failed
    pace = run_pace(now - totals.started, totals.folds, finished - totals.initial_finished,
                    max(0, totals.rows_total - finished))
    eta = "--:--" if pace.eta_s is None else format_duration(pace.eta_s)
    return (f"rows {finished}/{totals.rows_total} · {format_rate(pace.folds_per_s)} · ETA {eta} · "
            f"retries {totals.call_retries}+{totals.row_retries} rows · errors {totals.errors} · "
            f"{cost_text(totals.cost_usd, totals.unknown_cost_calls)}")


class HeadlessProgress:
    """Consume runner events and report progress on a stream (stderr by default).

    On a TTY the status line is redrawn in place at most ``hz`` times a second; otherwise one
    plain line is written per finished row (and for stops), which reads well in CI logs.
    With ``json_events`` every event is also written as one JSON line to ``events_stream``.
    A stream whose reader has gone (a closed pipe) is dropped: progress never stops a run.
    """

    def __init__(self, totals: Totals, stream: TextIO | None = None, *, json_events: bool = False,
                 events_stream: TextIO | None = None, hz: float = 4.0) -> None:
        self.totals = totals
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.json_events = json_events
        self.events_stream = events_stream or sys.stdout
        self.min_interval = 1.0 / hz
        self._last = 0.0
        self.stream_open = True
        """False once the progress stream's reader has gone."""

    def __call__(self, event: Event) -> None:
        if self.json_events:
            self.json_events = self._write(self.events_stream, event.to_line() + "\n")
        if isinstance(event, Stopped):
            self._line(f"stopped: {event.reason}")
        elif isinstance(event, RowFailed):
            self._line(f"row {event.row} ({event.model} × {event.arm}) failed: "
                       f"{event.error}" + (" — will retry" if event.will_retry else ""))
        if self.tty:
            now = time.monotonic()
            if now - self._last >= self.min_interval or isinstance(event, SweepFinished):
                self._last = now
                self._say("\r\x1b[2K" + status_line(self.totals))
        elif isinstance(event, (RowDone, RowFailed, SweepStarted, SweepFinished)):
            self._say(status_line(self.totals) + "\n")

    def _line(self, text: str) -> None:
        text = literal(text, keep_newlines=False)  # errors quote endpoint replies
        self._say(("\r\x1b[2K" if self.tty else "") + text + "\n")

    def _say(self, text: str) -> None:
        if self.stream_open:
            self.stream_open = self._write(self.stream, text)

    @staticmethod
    def _write(stream: TextIO, text: str) -> bool:
        """Write and flush; False when the stream's reader has gone."""
        try:
            stream.write(text)
            stream.flush()
        except (BrokenPipeError, ValueError):  # a closed pipe, or a closed file
            return False
        return True

    def close(self) -> None:
        """End the live line so the shell prompt starts on a fresh line."""
        if self.tty:
            self._say("\n")

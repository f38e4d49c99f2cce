"""Headless progress: a redrawn line on a TTY, plain lines in logs, JSON events on request."""

import io
import json

from foldscope.engine.events import FoldCommitted, RowDone, Stopped
from foldscope.engine.progress import HeadlessProgress, format_duration, status_line
from foldscope.engine.runner import Totals


class TTY(io.StringIO):
    def isatty(self):
        return True


def test_status_line_fields():
    t = Totals(rows_total=10, rows_done=4, rows_failed=1, folds=30, call_retries=2,
               row_retries=1, errors=1, cost_usd=0.125, started=0.0)
    line = status_line(t, now=10.0)
    assert "rows 5/10" in line and "3.0 folds/s" in line and "ETA 0:10" in line
    assert "retries 2+1 rows" in line and "errors 1" in line and "$0.1250" in line


def test_format_duration():
    assert format_duration(59) == "0:59" and format_duration(3725) == "1:02:05"


def test_plain_mode_writes_a_line_per_finished_row():
    t = Totals(rows_total=2)
    out = io.StringIO()
    progress = HeadlessProgress(t, out)
    progress(FoldCommitted(row=1, fold=0, chunks=(0, 0), carrier_chars=10, finish="stop", parse="ok"))
    assert out.getvalue() == ""
    t.rows_done = 1
    progress(RowDone(row=1, model="sim/faithful", arm="j", recall=1.0, valid=True, reason="ok"))
    assert out.getvalue().count("\n") == 1 and "\r" not in out.getvalue()


def test_tty_mode_redraws_in_place_and_json_events_go_to_stdout():
    t = Totals(rows_total=2)
    err, events = TTY(), io.StringIO()
    progress = HeadlessProgress(t, err, json_events=True, events_stream=events, hz=1000)
    progress(FoldCommitted(row=1, fold=0, chunks=(0, 0), carrier_chars=10, finish="stop", parse="ok"))
    progress(Stopped(reason="budget reached"))
    progress.close()
    assert err.getvalue().startswith("\r\x1b[2K") and "stopped: budget reached" in err.getvalue()
    assert [json.loads(line)["event"] for line in events.getvalue().splitlines()] == ["fold", "stopped"]

"""Cancellation lands at full speed (zero-latency sims answer every call at once), from any
thread, SIGINT, SIGTERM and the TUI's ctrl+q; the stored status says what actually happened.

Landing is measured by counting: rows that started after the cancel was sent. Without a yield
per call a zero-latency sweep ran to its end first, so that count was every remaining row.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest
from conftest import definition

from foldscope.engine.events import RowDone, RowStarted, SweepFinished
from foldscope.engine.launch import prepare_sweep
from foldscope.engine.runner import SweepRunner
from foldscope.engine.store import Store

CONCURRENCY = 4
ARMS = ("j", "q", "m", "o")
MODELS = ("sim/faithful", "sim/gister")


def _big(db, repeats: int = 12, latency_s: float = 0.0) -> str:
    """A sweep far longer than any cancellation should take to land (2 x 4 x 12 = 96 rows).

    ``latency_s`` gives each simulated call a latency: the TUI tests watch the database, and a
    runner whose writes leave the event loop can fold every row at zero latency before the
    first one is visible there, leaving nothing for the quit to stop."""
    models = tuple({"id": m, "faults": {"latency_s": latency_s}} for m in MODELS) if latency_s \
        else MODELS
    data = definition(models=models, arms=ARMS, repeats=repeats, concurrency=CONCURRENCY)
    return prepare_sweep(db, data, "test").sweep_id


def test_cancel_from_another_thread_lands_before_more_rows_start(db):
    sweep_id = _big(db)
    events: list = []
    first_done = threading.Event()
    sent: list[int] = []  # how many events had been seen when the cancel was sent

    def sink(event) -> None:
        events.append(event)
        if isinstance(event, RowDone):
            first_done.set()

    runner = SweepRunner(db, sweep_id, latency_scale=0.0, on_event=sink)

    def canceller() -> None:
        first_done.wait()
        sent.append(len(events))
        runner.cancel()
        runner.cancel()  # a second request changes nothing

    thread = threading.Thread(target=canceller)
    thread.start()
    status = asyncio.run(runner.run())
    thread.join()
    late = [e for e in events[sent[0]:] if isinstance(e, RowStarted)]
    assert len(late) <= CONCURRENCY  # at most one per worker, already past its last yield
    assert status == "stopped"
    finished = events[-1]
    assert isinstance(finished, SweepFinished) and finished.status == "stopped"
    with Store(db, readonly=True) as store:
        sweep = store.sweep(sweep_id)
        assert sweep.status == "stopped" and "cancelled" in sweep.stop_reason
        assert store.progress(sweep_id)["done"] < 96


def test_a_cancel_after_the_last_row_leaves_the_sweep_done(db):
    sweep_id = prepare_sweep(db, definition(models=("sim/faithful",), arms=("j", "q")),
                             "test").sweep_id
    runner = SweepRunner(db, sweep_id, latency_scale=0.0)

    def sink(event) -> None:
        if isinstance(event, RowDone) and runner.totals.rows_done == runner.totals.rows_total:
            runner.cancel()  # lands while the run is closing its clients

    runner.on_event = sink
    assert asyncio.run(runner.run()) == "done"
    with Store(db, readonly=True) as store:
        assert store.sweep(sweep_id).status == "done"


def test_a_cancel_before_the_run_starts_stops_it_at_once(db):
    sweep_id = _big(db)
    runner = SweepRunner(db, sweep_id, latency_scale=0.0)
    runner.cancel("quit from the TUI")
    assert asyncio.run(runner.run()) == "stopped"
    with Store(db, readonly=True) as store:
        assert store.progress(sweep_id)["done"] == 0
        assert store.sweep(sweep_id).stop_reason.startswith("quit from the TUI")


def test_someone_elses_cancellation_still_propagates(db):
    sweep_id = _big(db)

    async def outer() -> None:
        task = asyncio.create_task(SweepRunner(db, sweep_id, latency_scale=0.0).run())
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        task.cancel()
        await task

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(outer())


@pytest.mark.parametrize("sig, kills, code", [
    (signal.SIGINT, 2, 130),  # and a second ctrl+c while the first is landing
    (signal.SIGTERM, 1, 143),
])
def test_signals_stop_a_full_speed_run_cleanly(tmp_path, sig, kills, code):
    db = tmp_path / "sig.sqlite"
    sweep_id = _big(db, repeats=24)
    proc = subprocess.Popen(
        [sys.executable, "-m", "foldscope.cli.main", "run", "--resume", sweep_id, "--db", str(db),
         "--headless", "--json-events", "--latency-scale", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert proc.stdout is not None
    for line in proc.stdout:
        if json.loads(line)["event"] == "row_done":
            break
    sent = time.time()
    for _ in range(kills):
        proc.send_signal(sig)
    rest, err = proc.communicate(timeout=120)
    events = [json.loads(line) for line in rest.splitlines()]
    assert proc.returncode == code, err
    assert "Traceback" not in err and "Task exception" not in err, err
    # The handler marks the run cancelled at once: no row starts after the signal (one may be
    # mid-start as it lands; event times are rounded to the millisecond).
    late = [e for e in events if e["event"] == "row_started" and e["t"] > sent + 0.001]
    assert len(late) <= 1
    finished = events[-1]
    assert finished["event"] == "sweep_finished" and finished["status"] == "stopped"
    assert f"interrupted by {sig.name}" in finished["reason"]
    assert err.strip().splitlines()[-1].startswith(
        f"foldscope: sweep {sweep_id} stopped (interrupted by {sig.name})")
    with Store(db, readonly=True) as store:
        assert store.sweep(sweep_id).status == "stopped"
        assert store.live_status(store.sweep(sweep_id)) == "stopped"
        assert store.progress(sweep_id)["done"] < 192


async def test_ctrl_q_stops_a_full_speed_sweep(tmp_path):
    from foldscope.ui.app import FoldscopeApp

    db = tmp_path / "quit.sqlite"
    sweep_id = _big(db, latency_s=0.02)
    app = FoldscopeApp(str(db), sweep_id=sweep_id, run=True, latency_scale=1.0)
    async with app.run_test(size=(110, 30)) as pilot:
        reader = Store(db, readonly=True)
        while not reader.progress(sweep_id)["done"]:
            await pilot.pause()
        reader.close()
        sent = time.time()
        await pilot.press("ctrl+q")
    with Store(db, readonly=True) as store:
        assert store.sweep(sweep_id).status == "stopped"
        late = store.db.execute("SELECT COUNT(*) FROM rows WHERE sweep_id=? AND started_at > ?",
                                [sweep_id, sent]).fetchone()[0]
        assert late <= CONCURRENCY
        assert store.progress(sweep_id)["done"] < 96


async def test_sigterm_quits_the_tui_like_ctrl_q(tmp_path):
    from foldscope.ui.app import FoldscopeApp

    db = tmp_path / "term.sqlite"
    sweep_id = _big(db, latency_s=0.02)
    app = FoldscopeApp(str(db), sweep_id=sweep_id, run=True, latency_scale=1.0)
    async with app.run_test(size=(110, 30)) as pilot:
        reader = Store(db, readonly=True)
        while not reader.progress(sweep_id)["done"]:
            await pilot.pause()
        reader.close()
        # The app's loop handles SIGTERM (never the default, which would end the test run).
        assert signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, signal.SIG_IGN, None)
        os.kill(os.getpid(), signal.SIGTERM)
        # The app goes at once; the child records its stop, waited for as the app's run ends.
        while app.is_running:
            await pilot.pause()
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL  # given back on the way out
    with Store(db, readonly=True) as store:
        sweep = store.sweep(sweep_id)
        assert sweep.status == "stopped"
        assert sweep.stop_reason.startswith("interrupted by SIGTERM")

"""``make bench``: the harness's own cost on the kestrel scenario with in-process simulated models.

Prints and writes to ``bench-results.json``:

- ``cpu_ms_per_fold`` / ``folds_per_s``: harness CPU per fold at zero simulated latency,
  including the simulated model, the SQLite commit and per-fold fact tracking;
- ``latency_efficiency``: achieved call throughput ÷ (concurrency ÷ latency) with 1 s simulated
  latency at concurrency 64 (1.0 means the harness never leaves a slot idle);
- ``latency_efficiency_few_sequences``: 1 model × 2 repeats × 12 arms at concurrency 24 with
  1 s simulated latency, in the default (blocked) execution mode: mean calls in flight ÷ 24
  over the run (calls × latency ÷ wall time ÷ 24);
- ``http_latency_efficiency`` / ``http_latency_efficiency_256``: free mode over ``foldscope sim
  serve`` in another process on loopback (the path a real sweep takes): mean calls on the wire
  ÷ concurrency, at concurrency 1,000 with 10 s simulated latency (1,000 rows) and at 256 with
  2 s (512 rows); ``runner_cpu_ms_per_call`` is the runner's CPU per call in the first;
- ``cli_start_ms`` / ``report_cold_ms``: ``foldscope --help`` in a fresh process (median of 5),
  and ``report --format json`` on a generated 1,000-row database;
- ``report_ms_per_1k_rows`` / ``export_peak_mb_50k``: ``report`` wall time per 1,000 rows and
  ``export``'s peak RSS on a generated 50,000-row database (``--sweep-rows``; a fifth of it is
  measured too, to see time grow linearly), ``check`` beside them;
- ``cpu_per_fold_vs_inspect`` (when ``INSPECT_VENV`` names a venv with inspect_ai): CPU per fold
  of a CPU run of as many rows (804 × 6 folds) ÷ inspect_ai's on 800 samples × 6 kestrel
  chunks with ``inspect eval`` on its mock model
  (replying carriers the size foldscope's simulated folders write, with usage, scored by
  ``includes``; the run's log must show every sample done);
- ``first_poll_ms_10k_rows``: the first, full live poll of the 10,000-row database;
- ``poll_ms_10k_rows``: one live poll (``engine.live.LiveSweep``, what the TUI grid runs at
  4 Hz) on a 10,000-row database while a runner appends to it: the median over the run (the
  first, full read that fills the grid is reported beside it as ``first_poll_ms``);
- ``watch_slowdown``: wall time of the same full-speed sweep run from the TUI (Pilot; the app
  runs it in a child process and polls the database) ÷ run headless alone (the same child
  command with nothing watching); each timed from the child's start to its exit;
- ``keystroke_ms_p95``: key → repaint under Pilot while a sweep runs at full speed in the TUI's
  child runner (``v`` and the arrows in turn; from the key press to the first frame the
  compositor renders after the key's action ran), the worse p95 of two sweeps: the small
  ``watch_slowdown`` sweep and a 10,000-row sweep whose last 400 rows are still to run;
- ``open_cell_ms``, ``fold_step_ms`` (and ``fold_step_ms_9600`` / ``fold_step_ms_100000``, the
  carrier's characters), ``theme_switch_ms``, ``quit_ms``: key → answer in the TUI, each the
  worst of several presses (``measure_ui_keys``; target ≤ 100 ms);
- ``peak_rss_mb`` / ``db_bytes_per_fold``: peak resident memory of a 1,000-row sweep and the
  database size it leaves, per fold.

Each measurement runs in a fresh subprocess so that one cannot inflate another's memory.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from foldscope.core.status import SweepStatus

MODELS = ("sim/faithful", "sim/describer")
CPU_ARMS = ("j", "q", "m")
"""The arms of the CPU run (``measure_cpu``): rows are models × arms × repeats, 6 folds each."""
INSPECT_ROWS = 800
"""Samples of inspect_ai's run (``measure_inspect``), 6 folds each: the issue's 800 × 6."""


def _definition(arms: list[str], repeats: int, models: list[dict[str, Any]],
                concurrency: int) -> dict[str, Any]:
    return {"sweep": {"name": "bench", "scenario": "kestrel", "arms": arms, "repeats": repeats,
                      "concurrency": concurrency, "seed": 1},
            "models": models}


def _run(db: Path, data: dict[str, Any], latency_scale: float | None
         ) -> tuple[Any, float, float]:
    from foldscope.engine.launch import prepare_sweep
    from foldscope.engine.runner import SweepRunner

    prepared = prepare_sweep(db, data, "bench", fresh=True)
    runner = SweepRunner(db, prepared.sweep_id, latency_scale=latency_scale)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    asyncio.run(runner.run())
    return runner.totals, time.process_time() - cpu0, time.perf_counter() - wall0


def measure_cpu(rows_per_model_arm: int) -> dict[str, float]:
    """Zero-latency sweep: harness CPU per fold and folds per second."""
    import foldscope.engine.sim.transport  # noqa: F401 - one-off import cost, not per fold
    from foldscope.engine.loader import load_scenario

    load_scenario("kestrel")  # generation is a one-off cost, not per fold
    with tempfile.TemporaryDirectory() as tmp:
        data = _definition(list(CPU_ARMS), rows_per_model_arm,
                           [{"id": m} for m in MODELS], concurrency=8)
        totals, cpu, wall = _run(Path(tmp) / "cpu.sqlite", data, 0.0)
    return {"folds": totals.folds, "cpu_ms_per_fold": 1000 * cpu / totals.folds,
            "folds_per_s": totals.folds / wall}


def measure_latency(concurrency: int, latency_s: float, rows: int) -> dict[str, float]:
    """Sweep with fixed simulated latency: how close calls/s gets to concurrency ÷ latency."""
    with tempfile.TemporaryDirectory() as tmp:
        model = {"id": "sim/faithful", "faults": {"latency_s": latency_s, "latency_jitter": 0.0}}
        data = _definition(["j", "q", "m", "o"], max(1, rows // 4), [model], concurrency)
        totals, _, wall = _run(Path(tmp) / "lat.sqlite", data, 1.0)
    calls = totals.folds + totals.rows_done  # every fold plus one recall turn per row
    ideal = concurrency / latency_s
    return {"calls": calls, "wall_s": wall, "latency_efficiency": (calls / wall) / ideal}


ALL_ARMS = ["f", "n", "j", "p", "q", "k", "o", "m", "t", "u", "l", "g"]


def measure_few_sequences(concurrency: int, latency_s: float) -> dict[str, float]:
    """Few model x repeat sequences, many arms: does concurrency get spent across arms?"""
    from foldscope.engine.loader import load_scenario

    load_scenario("kestrel")  # generation is a one-off cost, not the run's
    with tempfile.TemporaryDirectory() as tmp:
        model = {"id": "sim/faithful", "faults": {"latency_s": latency_s, "latency_jitter": 0.0}}
        data = _definition(ALL_ARMS, 2, [model], concurrency)
        totals, _, wall = _run(Path(tmp) / "few.sqlite", data, 1.0)
    calls = totals.folds + totals.rows_done
    in_flight = calls * latency_s / wall
    return {"calls": calls, "wall_s": wall, "mean_in_flight": in_flight,
            "latency_efficiency_few_sequences": in_flight / concurrency}


def _fill_finished(db: Path, sweep_id: str, donor: int, keep_planned: int) -> None:
    """Mark all but the last ``keep_planned`` rows done, each with a copy of the ``donor`` row's
    checks: a large finished sweep without hours of folding (only the read path is measured)."""
    import sqlite3

    conn = sqlite3.connect(db)
    with conn:
        total = conn.execute("SELECT COUNT(*) FROM rows WHERE sweep_id=?", [sweep_id]).fetchone()[0]
        cutoff = total - keep_planned
        conn.execute(
            "UPDATE rows SET status='done', valid=1, validity_reason='ok', recall=0.5, correct=3, "
            "graded=6, folds_done=3, next_chunk=3, answer='a', "
            "seq=(SELECT MAX(seq) FROM rows) + position + 1 "
            "WHERE sweep_id=? AND position < ? AND status='planned'", [sweep_id, cutoff])
        cols = [r[1] for r in conn.execute("PRAGMA table_info(checks)") if r[1] not in ("id", "row_id")]
        conn.execute(
            f"INSERT INTO checks (row_id, {', '.join(cols)}) SELECT r.id, "
            f"{', '.join('c.' + c for c in cols)} FROM rows r JOIN checks c ON c.row_id=? "
            "WHERE r.sweep_id=? AND r.position < ? AND r.status='done' "
            "AND NOT EXISTS (SELECT 1 FROM checks k WHERE k.row_id=r.id)",
            [donor, sweep_id, cutoff])
    conn.close()


def measure_poll(rows: int) -> dict[str, float]:
    """Live polls on a ``rows``-row database while a runner (another process) appends."""
    from foldscope.engine.live import LiveSweep

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "poll.sqlite"
        arms = ALL_ARMS[:10]
        repeats = rows // (len(arms) * len(MODELS))
        data = _definition(arms, repeats, [{"id": m} for m in MODELS], concurrency=8)
        data["sweep"]["scenario"] = "smoke"
        from foldscope.engine.launch import prepare_sweep
        from foldscope.engine.runner import SweepRunner
        from foldscope.engine.store import Store

        # One real row first, in a sweep of its own: its checks are copied to every filled row.
        donor_sweep = prepare_sweep(db, _definition(["j"], 1, [{"id": MODELS[0]}], 1) | {
            "sweep": {"name": "donor", "scenario": "smoke", "arms": ["j"], "seed": 1}}, "bench")
        asyncio.run(SweepRunner(db, donor_sweep.sweep_id, latency_scale=0.0).run())
        with Store(db, readonly=True) as store:
            donor = store.rows(donor_sweep.sweep_id)[0].id
        prepared = prepare_sweep(db, data, "bench", fresh=True)
        _fill_finished(db, prepared.sweep_id, donor, keep_planned=400)
        live = LiveSweep(db, prepared.sweep_id)
        t0 = time.perf_counter()
        view = live.poll()
        first_ms = 1000 * (time.perf_counter() - t0)
        assert view is not None and view.progress.total == repeats * len(arms) * len(MODELS)
        runner = subprocess.Popen(
            [sys.executable, "-c", "import sys; from foldscope.cli.main import main; "
             "sys.exit(main(sys.argv[1:]))", "run", "--resume", prepared.sweep_id, "--db",
             str(db), "--headless", "--latency-scale", "0"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        times, changed = [], 0
        try:
            while runner.poll() is None:
                time.sleep(0.25)  # the TUI's poll interval
                t0 = time.perf_counter()
                view = live.poll()
                times.append(1000 * (time.perf_counter() - t0))
                changed += view.changed_rows if view else 0
        finally:
            _, err = runner.communicate()
        if runner.returncode:
            raise RuntimeError(f"the appending runner failed: {err.strip()[-500:]}")
        times.sort()
    return {"rows": view.progress.total if view else 0, "first_poll_ms": first_ms,
            "polls": len(times), "rows_changed_while_polling": changed,
            "poll_ms_10k_rows": times[len(times) // 2] if times else float("nan"),
            "poll_ms_p95": times[int(len(times) * 0.95)] if times else float("nan")}


def _watch_definition() -> dict[str, Any]:
    data = _definition(ALL_ARMS, 20, [{"id": m} for m in MODELS], concurrency=8)
    data["sweep"]["scenario"] = "smoke"
    return data


def _sweep_span(db: Path, sweep_id: str) -> tuple[int, float]:
    """Rows done and the span from the first row's start to the last row's end (seconds)."""
    from foldscope.engine.store import Store

    with Store(db, readonly=True) as store:
        span = store.run_span(sweep_id)
    return span.rows_done, float((span.last_finished or 0.0) - (span.first_started or 0.0))


def _child_wall(child: Any) -> float:
    if child.started is None or child.ended is None:
        raise RuntimeError("the sweep's child runner did not run")
    return float(child.ended - child.started)


def measure_headless_wall() -> dict[str, float]:
    """The watch_slowdown sweep run headless alone: the child command the TUI starts, with
    nothing watching; wall time from its start to its exit."""
    from foldscope.engine.launch import prepare_sweep
    from foldscope.engine.runner_process import RunnerProcess

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "watch.sqlite"
        prepared = prepare_sweep(db, _watch_definition(), "bench", fresh=True)
        child = RunnerProcess(db, prepared.sweep_id, latency_scale=0.0)
        runner_cpu0 = _children_cpu_s()
        child.start()
        outcome = child.wait()
        if outcome.error is not None or outcome.status != SweepStatus.DONE:
            raise RuntimeError(f"the headless run ended {outcome.status}: {outcome.error}")
        runner_cpu = _children_cpu_s() - runner_cpu0
        rows, span = _sweep_span(db, prepared.sweep_id)
    return {"rows": rows, "wall_s": _child_wall(child), "rows_span_s": span,
            "runner_cpu_s": runner_cpu}


def _children_cpu_s() -> float:
    """CPU seconds (user + system) of this process's waited-for children so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure_tui_wall() -> dict[str, float]:
    """The same sweep run from the TUI under Pilot (the product path: the app starts the child
    runner and polls the database at 4 Hz): wall time from the child's start to its exit."""
    from foldscope.engine.launch import prepare_sweep
    from foldscope.ui.app import FoldscopeApp

    watching: dict[str, float] = {}

    async def watch(db: Path) -> tuple[float, str]:
        prepared = prepare_sweep(db, _watch_definition(), "bench", fresh=True)
        app = FoldscopeApp(str(db), sweep_id=prepared.sweep_id, run=True, latency_scale=0.0)
        async with app.run_test(size=(140, 40)):
            while getattr(app.runner, "started", None) is None:  # noqa: ASYNC110 (a thread sets it)
                await asyncio.sleep(0.005)
            watching["cpu0"] = time.process_time()  # the child runner has just started
            for worker in [w for w in app.workers if w.group == "sweep"]:
                await worker.wait()
            watching["cpu"] = time.process_time() - watching["cpu0"]
            if app.sweep_status != SweepStatus.DONE:
                raise RuntimeError(f"the TUI's run ended {app.sweep_status}")
            return _child_wall(app.runner), prepared.sweep_id

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "watch.sqlite"
        cpu0, runner_cpu0 = time.process_time(), _children_cpu_s()
        wall, sweep_id = asyncio.run(watch(db))
        tui_cpu, runner_cpu = time.process_time() - cpu0, _children_cpu_s() - runner_cpu0
        rows, span = _sweep_span(db, sweep_id)
    # tui_cpu_s: this process's CPU (every thread) while the child runner ran, from its start
    # to its exit (tui_cpu_run_s: from the app's start to its exit, the sweep's preparation
    # included); runner_cpu_s: the child runner's.
    return {"rows": rows, "wall_s": wall, "rows_span_s": span, "tui_cpu_s": watching["cpu"],
            "tui_cpu_run_s": tui_cpu, "runner_cpu_s": runner_cpu}


KEYS = ("v", "down", "right", "up", "left")
"""Keys pressed in turn: each changes the screen (a metric, or the grid cursor's cell)."""


def _then_stamp(action: Callable[..., Any], stamps: list[float]) -> Callable[..., None]:
    """``action``, then the time it returned appended to ``stamps``."""
    def stamped(*args: Any) -> None:
        action(*args)
        stamps.append(time.perf_counter())
    return stamped


async def _keystrokes(app: Any, presses: int, think_s: float = 0.05) -> list[float]:
    """Press ``KEYS`` in turn while the app's sweep runs; ms from each press to the first frame
    rendered after its action ran."""
    from foldscope.ui.screens.sweep import SweepScreen
    from foldscope.ui.widgets.sweep_grid import SweepGrid

    frames: list[float] = []
    display = app._display

    def timed_display(screen: Any, renderable: Any) -> None:
        if renderable is not None:
            frames.append(time.perf_counter())  # the compositor has rendered this frame
        display(screen, renderable)

    app._display = timed_display
    acted: list[float] = []
    screen = app.screen
    assert isinstance(screen, SweepScreen)
    grid = screen.query_one(SweepGrid)
    for name in ("action_next_view",):
        original = getattr(screen, name)
        setattr(screen, name, _then_stamp(original, acted))
    for name in ("action_cursor_down", "action_cursor_up", "action_cursor_left",
                 "action_cursor_right"):
        original = getattr(grid, name)
        setattr(grid, name, _then_stamp(original, acted))
    sweep = next(w for w in app.workers if w.group == "sweep")
    times: list[float] = []
    for i in range(presses):
        if sweep.is_finished:
            break
        before = len(acted)
        t0 = time.perf_counter()
        # The key goes in as the terminal driver sends it: a Key event to the app.
        app.post_message(_key_event(KEYS[i % len(KEYS)]))
        deadline = t0 + 2.0
        while time.perf_counter() < deadline:
            if len(acted) > before and any(f > acted[before] for f in frames[-5:]):
                break
            await asyncio.sleep(0.0005)
        if len(acted) > before:
            frame = next((f for f in frames if f > acted[before]), time.perf_counter())
            times.append(1000 * (frame - t0))
        await asyncio.sleep(think_s)  # a person's pause between keys; the sweep runs on
    return times


def _key_event(key: str) -> Any:
    from textual import events

    return events.Key(key, None if len(key) > 1 else key)


def _p95(times: list[float]) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))] if ordered else float("nan")


def measure_keystrokes(kind: str) -> dict[str, float]:
    """Key → repaint in the TUI while a sweep runs at full speed (``small`` or ``10k`` rows)."""
    from foldscope.engine.launch import prepare_sweep
    from foldscope.engine.loader import load_scenario
    from foldscope.engine.runner import SweepRunner
    from foldscope.engine.store import Store
    from foldscope.ui.app import FoldscopeApp
    from foldscope.ui.widgets.sweep_grid import SweepGrid

    load_scenario("smoke")

    async def watch(db: Path, sweep_id: str) -> tuple[list[float], float]:
        app = FoldscopeApp(str(db), sweep_id=sweep_id, run=True, latency_scale=0.0)
        async with app.run_test(size=(160, 45)) as pilot:
            t0 = time.perf_counter()
            while not app.screen.query(SweepGrid) or not app.screen.query_one(SweepGrid).row_count:
                await pilot.pause()  # the first poll (a full read) fills the grid
            first = time.perf_counter() - t0
            times = await _keystrokes(app, presses=400)
            return times, first

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "keys.sqlite"
        if kind == "small":
            sweep_id = prepare_sweep(db, _watch_definition(), "bench", fresh=True).sweep_id
        else:
            arms = ALL_ARMS[:10]
            data = _definition(arms, 10_000 // (len(arms) * len(MODELS)),
                               [{"id": m} for m in MODELS], concurrency=8)
            data["sweep"]["scenario"] = "smoke"
            donor_sweep = prepare_sweep(db, _definition(["j"], 1, [{"id": MODELS[0]}], 1) | {
                "sweep": {"name": "donor", "scenario": "smoke", "arms": ["j"], "seed": 1}},
                "bench")
            asyncio.run(SweepRunner(db, donor_sweep.sweep_id, latency_scale=0.0).run())
            with Store(db, readonly=True) as store:
                donor = store.rows(donor_sweep.sweep_id)[0].id
            sweep_id = prepare_sweep(db, data, "bench", fresh=True).sweep_id
            _fill_finished(db, sweep_id, donor, keep_planned=400)
        times, first = asyncio.run(watch(db, sweep_id))
    times.sort()
    return {"presses": len(times), "first_fill_s": first,
            "keystroke_ms_median": times[len(times) // 2] if times else float("nan"),
            "keystroke_ms_p95": _p95(times), "keystroke_ms_max": times[-1] if times else 0.0}


UI_CARRIER_CHARS = (9_600, 100_000)
"""Carrier sizes the fold-step key is timed at (a kestrel carrier, and a very long one)."""


def _long_carrier(facts: Any, chars: int, seed: int) -> str:
    """A carrier of ``chars`` characters holding every planted value (as a model's long
    summary would): scenario-like lines, the values spread through them."""
    lines: list[str] = []
    i, total = seed, 0
    values = [f"- {f.label}: {f.value}" for f in facts]
    while total < chars:
        lines.append(values[i % len(values)] if i % 3 == 0 else
                     f"- step {i}: the operator re-ran the deploy check on host ledger{i % 17:02d}"
                     f" and noted {i * 7919 % 100_000} items in queue {i % 5}")
        total += len(lines[-1]) + 1
        i += 1
    return "\n".join(lines)[:chars]


def _ui_database(db: Path) -> str:
    """A finished sweep whose one cell has a row per carrier size, each fold's carrier that
    long; return its id."""
    import sqlite3

    from foldscope.engine.launch import prepare_sweep
    from foldscope.engine.loader import load_scenario
    from foldscope.engine.runner import SweepRunner

    data = _definition(["j"], len(UI_CARRIER_CHARS), [{"id": MODELS[0]}], concurrency=2)
    data["sweep"]["scenario"] = "smoke"
    sweep_id = prepare_sweep(db, data, "bench", fresh=True).sweep_id
    asyncio.run(SweepRunner(db, sweep_id, latency_scale=0.0).run())
    facts = load_scenario("smoke").facts
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT id FROM rows WHERE sweep_id = ? ORDER BY repeat",
                            (sweep_id,)).fetchall()
        for (row_id,), chars in zip(rows, UI_CARRIER_CHARS):
            for (fold_id, index) in conn.execute("SELECT id, fold_index FROM folds WHERE "
                                                 "row_id = ?", (row_id,)).fetchall():
                carrier = _long_carrier(facts, chars, index)
                conn.execute("UPDATE folds SET carrier = ?, carrier_chars = ? WHERE id = ?",
                             (carrier, len(carrier), fold_id))
    return sweep_id


def measure_ui_keys(presses: int = 8) -> dict[str, Any]:
    """Key → answer in the TUI (Pilot, 160×48): ``open_cell_ms`` (enter on a grid cell until the
    cell screen has drawn its rows and the row's last fold), ``fold_step_ms`` (← or → until the
    new fold is drawn) on carriers of 9,600 and 100,000 characters, ``theme_switch_ms`` (T
    until the frame in the new theme) and ``quit_ms`` (ctrl+q while the TUI's child runner
    runs a sweep, until the app has exited). Each figure is the worst of ``presses`` presses
    (quit: of three runs), to the first frame the compositor renders after the key's work."""
    from foldscope.ui.app import FoldscopeApp
    from foldscope.ui.screens.cell import CellScreen
    from foldscope.ui.widgets.fold_inspector import FoldInspector
    from foldscope.ui.widgets.sweep_grid import SweepGrid

    cpu: dict[str, list[float]] = {}
    """Per key: the UI thread's CPU time (ms) from the key event to the frame it is timed to."""

    async def frame_after(app: Any, frames: list[float], done: Any, t0: float,
                          key: str) -> float:
        c0 = time.thread_time()  # the app runs on this thread (Pilot): its CPU, not the load's
        deadline = t0 + 20.0
        while time.perf_counter() < deadline:
            if done():
                break
            await asyncio.sleep(0.0005)
        mark = time.perf_counter()
        while time.perf_counter() < deadline:
            if any(f >= mark for f in frames[-3:]):
                break
            await asyncio.sleep(0.0005)
        i = next((i for i, f in enumerate(frames) if f >= mark), None)
        frame = frames[i] if i is not None else time.perf_counter()
        c1 = frame_cpu[i] if i is not None else time.thread_time()
        cpu.setdefault(key, []).append(1000 * (c1 - c0))
        return 1000 * (frame - t0)

    frame_cpu: list[float] = []

    def watch_frames(app: Any) -> list[float]:
        frames: list[float] = []
        display = app._display

        def timed_display(screen: Any, renderable: Any) -> None:
            display(screen, renderable)
            if renderable is not None:
                frames.append(time.perf_counter())
                frame_cpu.append(time.thread_time())

        app._display = timed_display
        return frames

    async def keys(db: Path, sweep_id: str) -> dict[str, Any]:
        app = FoldscopeApp(str(db), sweep_id=sweep_id)
        out: dict[str, Any] = {"open_cell": [], "theme_switch": []}
        async with app.run_test(size=(160, 48)) as pilot:
            while not app.screen.query(SweepGrid) or not app.screen.query_one(SweepGrid).row_count:
                await pilot.pause()
            frames = watch_frames(app)
            sweep_screen = app.screen
            for _ in range(presses):
                grid = sweep_screen.query_one(SweepGrid)
                grid.focus()
                grid.move_cursor(row=0, column=1)
                await pilot.pause()
                t0 = time.perf_counter()
                app.post_message(_key_event("enter"))

                def opened() -> bool:
                    screen = app.screen
                    return (isinstance(screen, CellScreen) and screen._data is not None
                            and screen.query_one(FoldInspector).shown is not None)
                out["open_cell"].append(await frame_after(app, frames, opened, t0, "open_cell"))
                cell = app.screen
                assert isinstance(cell, CellScreen) and cell._data is not None
                for chars, row in zip(UI_CARRIER_CHARS, list(cell._data.rows)):
                    cell.row_id = row.id
                    inspector = cell.query_one(FoldInspector)
                    await pilot.pause()
                    while inspector.shown != cell.fold_index:
                        await pilot.pause()
                    times = out.setdefault(f"fold_step_{chars}", [])
                    for _ in range(presses if not out.get(f"stepped_{chars}") else 0):
                        want = cell.fold_index + (-1 if cell.fold_index > 0 else 1)
                        t0 = time.perf_counter()
                        app.post_message(_key_event("left" if want < cell.fold_index
                                                    else "right"))
                        times.append(await frame_after(
                            app, frames, lambda w=want, i=inspector: i.shown == w, t0,
                            f"fold_step_{chars}"))
                    out[f"stepped_{chars}"] = True
                await pilot.press("escape")
                while app.screen is not sweep_screen:
                    await pilot.pause()
            for _ in range(presses):
                before = app.theme
                t0 = time.perf_counter()
                app.post_message(_key_event("T"))
                out["theme_switch"].append(await frame_after(
                    app, frames, lambda b=before: app.theme != b, t0, "theme_switch"))
                await pilot.pause()
        return out

    async def quit_once(db: Path) -> float:
        from foldscope.engine.launch import prepare_sweep

        sweep_id = prepare_sweep(db, _watch_definition(), "bench", fresh=True).sweep_id
        app = FoldscopeApp(str(db), sweep_id=sweep_id, run=True, latency_scale=1.0)
        async with app.run_test(size=(160, 48)) as pilot:
            while app.runner is None or not app.screen.query(SweepGrid):
                await pilot.pause()
            for _ in range(20):
                await pilot.pause()
            t0, c0 = time.perf_counter(), time.thread_time()
            app.post_message(_key_event("ctrl+q"))
            while True:
                if not app.is_running:
                    cpu.setdefault("quit", []).append(1000 * (time.thread_time() - c0))
                    return 1000 * (time.perf_counter() - t0)
                await asyncio.sleep(0.0005)

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "ui.sqlite"
        sweep_id = _ui_database(db)
        got = asyncio.run(keys(db, sweep_id))
        quits = [asyncio.run(quit_once(Path(tmp) / f"quit{i}.sqlite")) for i in range(3)]
    result: dict[str, Any] = {
        "open_cell_ms": max(got["open_cell"]), "theme_switch_ms": max(got["theme_switch"]),
        "quit_ms": max(quits), "presses": presses,
        "open_cell_ms_median": sorted(got["open_cell"])[len(got["open_cell"]) // 2],
        "quit_runs_ms": quits}
    for chars in UI_CARRIER_CHARS:
        steps = got[f"fold_step_{chars}"]
        result[f"fold_step_ms_{chars}"] = max(steps)
        result[f"fold_step_ms_{chars}_median"] = sorted(steps)[len(steps) // 2]
    result["fold_step_ms"] = max(result[f"fold_step_ms_{c}"] for c in UI_CARRIER_CHARS)
    # The UI thread's own CPU per key (worst and median): what the key costs on a quiet
    # machine, whatever the load the wall figures above were taken under.
    for key, spent in cpu.items():
        result[f"{key}_cpu_ms"] = max(spent)
        result[f"{key}_cpu_ms_median"] = sorted(spent)[len(spent) // 2]
    return result


def _print_ui_keys(ui: dict[str, Any]) -> None:
    print(f"  open cell             {ui['open_cell_ms']:8.1f} ms   (target ≤ 100 ms; enter on a "
          f"grid cell to its rows and last fold drawn, worst of {ui['presses']}, median "
          f"{ui['open_cell_ms_median']:.1f})")
    print(f"  fold step             {ui['fold_step_ms']:8.1f} ms   (target ≤ 100 ms; ← → to the "
          f"fold drawn: 9,600-character carrier worst {ui['fold_step_ms_9600']:.1f} (median "
          f"{ui['fold_step_ms_9600_median']:.1f}), 100,000 worst "
          f"{ui['fold_step_ms_100000']:.1f} (median {ui['fold_step_ms_100000_median']:.1f}))")
    print(f"  theme switch          {ui['theme_switch_ms']:8.1f} ms   (target ≤ 100 ms; T to the "
          f"frame in the new theme, worst of {ui['presses']})")
    print(f"  quit                  {ui['quit_ms']:8.1f} ms   (target ≤ 100 ms; ctrl+q while the "
          f"child runner runs a sweep, to the app gone, worst of 3)")
    _print_ui_cpu(ui)


def _print_ui_cpu(ui: dict[str, Any]) -> None:
    keys = [k[:-7] for k in ui if k.endswith("_cpu_ms")]
    print("  UI thread CPU per key (worst / median ms): " + ", ".join(
        f"{k} {ui[k + '_cpu_ms']:.1f} / {ui[k + '_cpu_ms_median']:.1f}" for k in keys))


def ui_key_results(ui: dict[str, Any]) -> dict[str, float]:
    """The key-latency figures ``bench-results.json`` keeps at its top level."""
    return {"open_cell_ms": round(ui["open_cell_ms"], 1),
            "fold_step_ms": round(ui["fold_step_ms"], 1),
            "fold_step_ms_9600": round(ui["fold_step_ms_9600"], 1),
            "fold_step_ms_100000": round(ui["fold_step_ms_100000"], 1),
            "theme_switch_ms": round(ui["theme_switch_ms"], 1),
            "quit_ms": round(ui["quit_ms"], 1),
            # The UI thread's CPU per key (worst of the presses): what the key itself costs,
            # beside the wall figures a loaded machine inflates.
            **{k: round(v, 1) for k, v in ui.items() if k.endswith("_cpu_ms")}}


def measure_memory(rows: int) -> dict[str, float]:
    """A 1,000-row sweep at full speed: peak RSS and database bytes per fold."""
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "mem.sqlite"
        arms = ["f", "n", "j", "p", "q", "k", "o", "m", "t", "u"]  # 10 arms x 2 models x 50
        per_cell = max(1, rows // (len(arms) * len(MODELS)))
        data = _definition(arms, per_cell, [{"id": m} for m in MODELS], concurrency=16)
        totals, _, wall = _run(db, data, 0.0)
        size = sum(p.stat().st_size for p in Path(tmp).iterdir() if p.name.startswith("mem.sqlite"))
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"rows": totals.rows_done, "folds": totals.folds, "wall_s": wall,
            "peak_rss_mb": peak_kb / 1024, "db_bytes_per_fold": size / totals.folds}


def _serve_sims(models_toml: Path) -> tuple[subprocess.Popen[str], str]:
    """Start ``foldscope sim serve`` on a free loopback port; return it and its base URL."""
    server = subprocess.Popen(
        [sys.executable, "-c", "import sys; from foldscope.cli.main import main; "
         "sys.exit(main(sys.argv[1:]))", "sim", "serve", "--port", "0", "--config",
         str(models_toml)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert server.stderr is not None
    line = server.stderr.readline()  # "foldscope sim: serving N simulated models at URL (...)"
    if " at http://" not in line:
        server.kill()
        raise RuntimeError(f"sim serve did not start: {line.strip()}")
    return server, line.split(" at ", 1)[1].split()[0]


def measure_http(concurrency: int, latency_s: float, rows: int) -> dict[str, float]:
    """Free mode over ``foldscope sim serve`` (another process) on loopback: the path a real
    sweep takes. Mean calls on the wire ÷ concurrency, and the runner's CPU per call."""
    from foldscope.engine.loader import load_scenario

    load_scenario("kestrel")  # generation is a one-off cost, not the run's
    with tempfile.TemporaryDirectory() as tmp:
        models_toml = Path(tmp) / "models.toml"
        models_toml.write_text('[[models]]\nid = "sim/faithful"\n[models.faults]\n'
                               f'latency_s = {latency_s}\nlatency_jitter = 0.0\n')
        server, base_url = _serve_sims(models_toml)
        try:
            arms = ["j", "q", "m", "o"]
            model = {"id": "bench/faithful", "provider": "vllm", "base_url": base_url,
                     "model": "sim/faithful", "timeout_s": 120 + 4 * latency_s}
            data = _definition(arms, max(1, -(-rows // len(arms))), [model], concurrency)
            data["sweep"]["mode"] = "free"
            totals, cpu, wall = _run(Path(tmp) / "http.sqlite", data, None)
            server_cpu = _process_cpu_s(server.pid)
        finally:
            server.terminate()
            server.wait(timeout=10)
    calls = totals.folds + totals.rows_done
    in_flight = calls * latency_s / wall
    return {"rows": totals.rows_done, "rows_failed": totals.rows_failed, "calls": calls,
            "call_retries": totals.call_retries, "wall_s": wall,
            "mean_in_flight": in_flight, "latency_efficiency": in_flight / concurrency,
            "runner_cpu_ms_per_call": 1000 * cpu / max(1, calls),
            "server_cpu_ms_per_call": 1000 * server_cpu / max(1, calls)}


def _process_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) another process has used so far (Linux /proc; else nan)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure_audit(mb: float) -> dict[str, float]:
    """``foldscope audit`` on a generated ``mb``-MB Claude Code session with 20 compactions:
    MB of session read per CPU-second, and peak RSS (this child process does nothing else)."""
    from foldscope.core.audit import SessionAuditor
    from foldscope.engine.audit_readers import check_read, stream_session
    from foldscope.engine.audit_sample import write_sample_session

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "session.jsonl"
        size = write_sample_session(path, mb, compactions=20)
        before_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        start = time.process_time()
        stream = stream_session(path)
        auditor = SessionAuditor()
        auditor.feed_all(stream.items)
        check_read(stream, "auto")
        audits = auditor.audits()
        cpu = time.process_time() - start
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"audit_mb_per_s": size / 1e6 / cpu, "audit_mb": size / 1e6, "audit_cpu_s": cpu,
            "audit_peak_rss_mb": peak_kb / 1024, "audit_rss_before_mb": before_kb / 1024,
            "compactions": len(audits)}


SWEEP_MODELS = ("sim/faithful", "sim/describer", "sim/gister", "sim/garbler", "sim/inventor")


def generate_sweep_db(db: Path, rows: int) -> str:
    """A finished kestrel sweep of at least ``rows`` rows (whole repeats), five simulated
    models × all twelve arms, made quickly: one repeat is really run, then its rows (with their
    folds, checks and fact courses) are copied as further repeats by direct inserts, doubling
    until there are enough; returns the sweep's id. Only read paths are measured on it, so
    copies of real rows serve."""
    import sqlite3

    from foldscope.engine.launch import prepare_sweep
    from foldscope.engine.runner import SweepRunner

    cell_count = len(SWEEP_MODELS) * len(ALL_ARMS)
    repeats = max(1, -(-rows // cell_count))
    rows = repeats * cell_count  # every planned row is stored: the definition's count holds
    data = _definition(ALL_ARMS, repeats, [{"id": m} for m in SWEEP_MODELS], concurrency=8)
    data["sweep"]["mode"] = "free"
    prepared = prepare_sweep(db, data, "bench", fresh=True)
    sweep_id = prepared.sweep_id
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        # Keep the first repeat's rows only, run them, then fill the others from them.
        conn.execute("DELETE FROM rows WHERE sweep_id=? AND repeat > 0", [sweep_id])
        asyncio.run(SweepRunner(db, sweep_id, latency_scale=0.0).run())

        def columns(table: str, skip: tuple[str, ...]) -> list[str]:
            return [r[1] for r in conn.execute(f"PRAGMA table_info({table})") if r[1] not in skip]

        row_cols = columns("rows", ("id", "repeat", "position", "seq"))
        fold_cols = columns("folds", ("id", "row_id", "seq"))
        check_cols = columns("checks", ("id", "row_id"))
        history_cols = columns("fact_histories", ("row_id",))
        have = conn.execute("SELECT COUNT(*) FROM rows WHERE sweep_id=?", [sweep_id]).fetchone()[0]
        while have < rows:
            shift = conn.execute("SELECT MAX(repeat) + 1 FROM rows WHERE sweep_id=?",
                                 [sweep_id]).fetchone()[0]
            take = min(have, rows - have)
            conn.execute("BEGIN")
            conn.execute(
                f"INSERT INTO rows (repeat, position, seq, {', '.join(row_cols)}) "
                f"SELECT repeat + ?, position + ?, seq + ?, {', '.join(row_cols)} FROM rows "
                "WHERE sweep_id=? ORDER BY position LIMIT ?",
                [shift, have, 10 * have, sweep_id, take])
            pairs = ("FROM rows o JOIN rows n ON n.sweep_id=o.sweep_id AND n.scenario=o.scenario "
                     "AND n.model=o.model AND n.arm=o.arm AND n.repeat=o.repeat + ? "
                     "WHERE o.sweep_id=? AND o.repeat < ?")
            conn.execute(f"INSERT INTO folds (row_id, seq, {', '.join(fold_cols)}) SELECT n.id, "
                         f"f.seq, {', '.join('f.' + c for c in fold_cols)} FROM folds f "
                         f"JOIN ({'SELECT o.id AS old, n.id AS id ' + pairs}) n ON n.old=f.row_id",
                         [shift, sweep_id, shift])
            for table, cols in (("checks", check_cols), ("fact_histories", history_cols)):
                conn.execute(f"INSERT INTO {table} (row_id, {', '.join(cols)}) SELECT n.id, "
                             f"{', '.join('t.' + c for c in cols)} FROM {table} t JOIN "
                             f"({'SELECT o.id AS old, n.id AS id ' + pairs}) n ON n.old=t.row_id",
                             [shift, sweep_id, shift])
            conn.execute("COMMIT")
            have += take
    finally:
        conn.close()
    return sweep_id


_LAST_CPU_S: list[float] = [0.0]
"""The CPU seconds (user + system) of the last command :func:`_wall_and_peak` ran."""


def _wall_and_peak(argv: list[str]) -> tuple[float, float]:
    """Run a foldscope command in a fresh process: its wall time (s) and peak RSS (MB); its CPU
    time goes to ``_LAST_CPU_S`` (on a shared machine the figure that says more)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", "import sys; from foldscope.cli.main import "
                             "main; sys.exit(main(sys.argv[1:]))", *argv],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.returncode:
        raise RuntimeError(f"foldscope {' '.join(argv)} failed: {err.strip()[-300:]}")
    _LAST_CPU_S[0] = usage.ru_utime + usage.ru_stime
    return wall, usage.ru_maxrss / 1024


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def measure_start(runs: int = 5) -> dict[str, Any]:
    """``foldscope --help`` from a fresh process, and ``report`` on a 1,000-row database."""
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "report.sqlite"
        sweep_id = generate_sweep_db(db, 1000)
        help_s, help_cpu, report_s, report_cpu = [], [], [], []
        for _ in range(runs):
            help_s.append(_wall_and_peak(["--help"])[0])
            help_cpu.append(_LAST_CPU_S[0])
        for _ in range(max(1, runs // 2)):
            report_s.append(_wall_and_peak(["report", "--db", str(db), "--sweep", sweep_id,
                                            "--format", "json"])[0])
            report_cpu.append(_LAST_CPU_S[0])
    return {"cli_start_ms": 1000 * _median(help_s), "report_cold_ms": 1000 * _median(report_s),
            "cli_start_cpu_ms": 1000 * _median(help_cpu),
            "report_cold_cpu_ms": 1000 * _median(report_cpu),
            "help_runs_ms": [round(1000 * t, 1) for t in help_s],
            "report_runs_ms": [round(1000 * t, 1) for t in report_s]}


def measure_whole_sweep(rows: int) -> dict[str, float]:
    """``report --format json`` and ``export`` on a generated database of ``rows`` rows (and of
    a fifth of it, to see time grow linearly): wall time per 1,000 rows and peak RSS."""
    out: dict[str, Any] = {"rows": rows}
    with tempfile.TemporaryDirectory() as tmp:
        for n in (max(1000, rows // 5), rows):
            db = Path(tmp) / f"sweep{n}.sqlite"
            t0 = time.perf_counter()
            sweep_id = generate_sweep_db(db, n)
            out[f"generate_s_{n}"] = time.perf_counter() - t0
            report_s, report_mb = _wall_and_peak(["report", "--db", str(db), "--sweep", sweep_id,
                                                  "--format", "json"])
            export_s, export_mb = _wall_and_peak(["export", "--db", str(db), "--out",
                                                  str(Path(tmp) / f"package{n}")])
            check_s, check_mb = _wall_and_peak(["check", "--db", str(db)])
            out.update({f"report_ms_per_1k_rows_{n}": 1000 * report_s / (n / 1000),
                        f"report_peak_mb_{n}": report_mb,
                        f"export_ms_per_1k_rows_{n}": 1000 * export_s / (n / 1000),
                        f"export_peak_mb_{n}": export_mb,
                        f"check_ms_per_1k_rows_{n}": 1000 * check_s / (n / 1000),
                        f"check_peak_mb_{n}": check_mb,
                        f"db_mb_{n}": db.stat().st_size / 1e6})
            db.unlink()
    out["report_ms_per_1k_rows"] = out[f"report_ms_per_1k_rows_{rows}"]
    out["export_peak_mb"] = out[f"export_peak_mb_{rows}"]
    return out


INSPECT_TASK = """
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import (ChatMessageSystem, ChatMessageUser, ModelOutput, ModelUsage,
                              get_model)
from inspect_ai.scorer import includes
from inspect_ai.solver import Generate, TaskState, solver

CHUNKS = {chunks!r}
MARK = "\\n\\n<chunk>\\n"


def fold_reply(input, tools, tool_choice, config):
    # The mock's reply is a carrier the size a faithful folder writes (the carrier so far and a
    # slice of the chunk: 0.7 to 4 kB, as the simulated models' carriers run), with its usage
    # stated as an API reply states it: without usage the mock counts the 100 kB prompt with a
    # tokenizer it downloads (none can be fetched offline, and the eval fails on the first call).
    carrier, _, chunk = input[-1].text.partition(MARK)
    reply = carrier + "\\n" + chunk[:{keep}]
    prompt = sum(len(m.text) for m in input) // 4
    return ModelOutput.from_content(model="mockllm", content=reply).model_copy(
        update={{"usage": ModelUsage(input_tokens=prompt, output_tokens=len(reply) // 4,
                                    total_tokens=prompt + len(reply) // 4)}})


@solver
def fold_forward():
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        carrier = f"carrier of sample {{state.sample_id}}"
        for chunk in CHUNKS:  # one fold per chunk: the carrier so far plus the chunk
            state.messages = [ChatMessageSystem(content="Summarise into the carrier."),
                              ChatMessageUser(content=carrier + MARK + chunk)]
            state = await generate(state)
            carrier = state.output.completion
        return state
    return solve


@task
def folds():
    return Task(dataset=[Sample(input="fold", target={target!r}, id=i) for i in range({rows})],
                solver=fold_forward(), scorer=includes(),
                model=get_model("mockllm/model", custom_outputs=fold_reply))
"""

INSPECT_LOG_CHECK = (
    "import sys\n"
    "from inspect_ai.log import list_eval_logs, read_eval_log\n"
    "logs = list_eval_logs(sys.argv[1])\n"
    "log = read_eval_log(logs[0], header_only=True) if logs else None\n"
    "done = log.results.completed_samples if log is not None and log.results else 0\n"
    "why = (log.error.message if log is not None and log.error else 'no log')\n"
    "print(log.status if log is not None else 'missing', done, why.splitlines()[0][:200])\n")
"""Prints an eval log's status, its completed samples and its error: ``inspect eval`` exits 0
even when the eval stops on an error, so its exit status proves nothing."""


def measure_inspect(inspect_venv: Path, rows: int = INSPECT_ROWS) -> dict[str, float]:
    """inspect_ai's CPU per fold on the same workload: ``rows`` samples, each folding the six
    kestrel chunks one generate call at a time on its mock model (``inspect eval``), whose
    reply is a carrier of the size foldscope's simulated folders write, scored by ``includes``.
    The eval's log must say it succeeded with every sample done, or this raises."""
    from foldscope.engine.loader import load_scenario

    scenario = load_scenario("kestrel")
    chunks = [c.text for c in scenario.chunks]
    with tempfile.TemporaryDirectory() as tmp:
        task = Path(tmp) / "folds.py"
        task.write_text(INSPECT_TASK.format(chunks=chunks, rows=rows, keep=700,
                                            target=scenario.graded[0].value))
        venv = inspect_venv.resolve()
        logs = Path(tmp) / "logs"
        proc = subprocess.Popen([str(venv / "bin" / "inspect"), "eval", task.name,
                                 "--log-dir", str(logs), "--display", "none",
                                 "--max-connections", "8"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=tmp)
        _, status, usage = os.wait4(proc.pid, 0)
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        if os.waitstatus_to_exitcode(status):
            raise RuntimeError(f"inspect eval failed: {err.strip()[-300:]}")
        check = subprocess.run([str(venv / "bin" / "python"), "-c", INSPECT_LOG_CHECK,
                                str(logs)], capture_output=True, text=True, check=True)
        state, done, why = (check.stdout.strip().split(" ", 2) + ["", ""])[:3]
        if state != "success" or int(done) != rows:
            raise RuntimeError(f"inspect eval did not finish: {state}, {done} of {rows} samples "
                               f"({why})")
    folds = rows * len(chunks)
    return {"inspect_folds": folds,
            "inspect_cpu_ms_per_fold": 1000 * (usage.ru_utime + usage.ru_stime) / folds}


def _measure_speed_keys(args: argparse.Namespace, cpu: dict[str, float]) -> dict[str, Any]:
    """Issue 24's start-up, whole-sweep and inspect_ai keys, printed; returns the keys plus
    ``detail``."""
    keys: dict[str, Any] = {}
    detail: dict[str, Any] = {}
    start = detail["start"] = _child("start", [])
    keys["cli_start_ms"] = round(start["cli_start_ms"], 1)
    keys["report_cold_ms"] = round(start["report_cold_ms"], 1)
    print(f"  CLI start             {start['cli_start_ms']:8.1f} ms   (target ≤ 300 ms; "
          f"foldscope --help, median of {len(start['help_runs_ms'])}; "
          f"{start['cli_start_cpu_ms']:.0f} ms CPU)")
    print(f"  report, cold          {start['report_cold_ms']:8.1f} ms   (target ≤ 1,000 ms; "
          f"report --format json on a 1,000-row database in a fresh process; "
          f"{start['report_cold_cpu_ms']:.0f} ms CPU)")
    if args.sweep_rows:
        whole = detail["whole_sweep"] = _child("sweep_db", [str(args.sweep_rows)])
        keys["report_ms_per_1k_rows"] = round(whole["report_ms_per_1k_rows"], 1)
        keys[f"export_peak_mb_{args.sweep_rows // 1000}k"] = round(whole["export_peak_mb"], 1)
        small = max(1000, args.sweep_rows // 5)
        print(f"  report per 1k rows    {whole['report_ms_per_1k_rows']:8.1f} ms   "
              f"({args.sweep_rows} rows, peak {whole[f'report_peak_mb_{args.sweep_rows}']:.0f} MB; "
              f"{whole[f'report_ms_per_1k_rows_{small}']:.0f} ms per 1k at {small} rows)")
        print(f"  export peak RSS       {whole['export_peak_mb']:8.1f} MB   (target ≤ 300 MB; "
              f"{args.sweep_rows} rows, {whole[f'export_ms_per_1k_rows_{args.sweep_rows}']:.0f} ms "
              f"per 1k rows; check {whole[f'check_peak_mb_{args.sweep_rows}']:.0f} MB)")
    venv = os.environ.get("INSPECT_VENV")
    if venv:
        # The same workload on both sides: as many rows of six folds as inspect_ai's samples (a
        # 360-fold run spreads its one-off warm-up, ~16 % of its instructions, over 13 times
        # fewer folds than inspect_ai's 4,800), run one after the other.
        repeats = -(-INSPECT_ROWS // (len(MODELS) * len(CPU_ARMS)))
        ours = detail["cpu_beside_inspect"] = _child("cpu", [str(repeats)])
        theirs = detail["inspect"] = _child("inspect", [venv, str(INSPECT_ROWS)])
        ratio = ours["cpu_ms_per_fold"] / theirs["inspect_cpu_ms_per_fold"]
        keys["cpu_per_fold_vs_inspect"] = round(ratio, 3)
        print(f"  CPU per fold ÷ inspect {ratio:7.3f}      (target ≤ 0.15; ours "
              f"{ours['cpu_ms_per_fold']:.2f} ms per fold on {ours['folds']} folds, inspect_ai "
              f"{theirs['inspect_cpu_ms_per_fold']:.2f} ms on {theirs['inspect_folds']} "
              f"mock folds)")
    keys["detail"] = detail
    return keys


def _child(kind: str, args: list[str]) -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-m", "foldscope.bench", "--child", kind, *args],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _measure_watch(runs: int) -> tuple[float, dict[str, Any]]:
    """watch_slowdown: ``runs`` headless/TUI pairs (alternating, so drift in the machine's load
    falls on both); the median ratio, printed, and each run's figures."""
    pairs: list[dict[str, Any]] = []
    for _ in range(max(1, runs)):
        headless = _child("headless", [])
        tui = _child("tui", [])
        pairs.append({"headless": headless, "tui": tui,
                      "ratio": tui["wall_s"] / headless["wall_s"]})
    ratios = sorted(pair["ratio"] for pair in pairs)
    slowdown = ratios[len(ratios) // 2]
    last = pairs[-1]
    tui_cpu = ", ".join(f"{pair['tui']['tui_cpu_s']:.1f}" for pair in pairs)
    print(f"  watch slowdown        {slowdown:8.3f}      (target ≤ 1.05; {last['headless']['rows']} "
          f"rows at full speed in a child process: watched by the TUI "
          f"{last['tui']['wall_s']:.1f} s, headless alone {last['headless']['wall_s']:.1f} s; "
          f"median of {len(pairs)}: {', '.join(f'{r:.3f}' for r in ratios)}; the TUI's own "
          f"CPU {tui_cpu} s)")
    return slowdown, {"runs": pairs, "headless": last["headless"], "tui": last["tui"]}


def _measure_http(args: argparse.Namespace) -> tuple[dict[str, float], dict[str, Any]]:
    """The two HTTP keys (and the runner's CPU per call beside them), printed."""
    runs = {"http_latency_efficiency": (1000, 10.0, args.http_rows),
            "http_latency_efficiency_256": (256, 2.0, args.http_rows_256)}
    keys: dict[str, float] = {}
    detail: dict[str, Any] = {}
    for key, (concurrency, latency_s, rows) in runs.items():
        got = detail[key] = _child("http", [str(concurrency), str(latency_s), str(rows)])
        keys[key] = round(got["latency_efficiency"], 4)
        target = 0.9 if concurrency == 1000 else 0.8
        print(f"  {key:<28}{got['latency_efficiency']:6.3f}   (target ≥ {target}; free mode over "
              f"sim serve on loopback, {latency_s:g} s latency, concurrency {concurrency}, "
              f"{got['rows']} rows, {got['calls']} calls in {got['wall_s']:.1f} s, "
              f"{got['mean_in_flight']:.0f} on the wire on average; runner CPU per call "
              f"{got['runner_cpu_ms_per_call']:.2f} ms, server "
              f"{got['server_cpu_ms_per_call']:.2f} ms)")
    keys["runner_cpu_ms_per_call"] = round(
        detail["http_latency_efficiency"]["runner_cpu_ms_per_call"], 3)
    return keys, detail


def main(argv: list[str] | None = None) -> int:
    """Run every measurement, print a table and write bench-results.json."""
    p = argparse.ArgumentParser(prog="python -m foldscope.bench", description=__doc__.splitlines()[0])
    p.add_argument("--cpu-repeats", type=int, default=10, help="rows per model × arm for the CPU run")
    p.add_argument("--latency-rows", type=int, default=256,
                   help="rows in the latency run (4 arms, so rows/4 model x repeat sequences)")
    p.add_argument("--memory-rows", type=int, default=1000, help="rows in the memory run")
    p.add_argument("--out", default="bench-results.json", help="where to write the figures")
    p.add_argument("--audit-mb", type=float, default=100.0,
                   help="size of the generated session foldscope audit reads (audit_mb_per_s)")
    p.add_argument("--sweep-rows", type=int, default=50_000,
                   help="rows of the generated database report/export/check read (0: skip)")
    p.add_argument("--http-rows", type=int, default=1000,
                   help="rows in the HTTP run at concurrency 1,000 (7 calls each)")
    p.add_argument("--http-rows-256", type=int, default=512,
                   help="rows in the HTTP run at concurrency 256")
    p.add_argument("--watch-runs", type=int, default=1,
                   help="headless/TUI pairs for watch_slowdown, alternating (the median ratio)")
    p.add_argument("--only", choices=["watch", "ui"],
                   help="run only this measurement and update its keys in --out (watch: "
                   "watch_slowdown, e.g. alone on a busy machine; ui: the key latencies "
                   "open_cell_ms, fold_step_ms, theme_switch_ms, quit_ms)")
    p.add_argument("--child", help=argparse.SUPPRESS)
    args, rest = p.parse_known_args(argv)
    if args.child:
        fn = {"cpu": lambda: measure_cpu(int(rest[0])),
              "latency": lambda: measure_latency(64, 1.0, int(rest[0])),
              "few": lambda: measure_few_sequences(24, 1.0),
              "poll": lambda: measure_poll(10_000),
              "headless": measure_headless_wall,
              "tui": measure_tui_wall,
              "keys": lambda: measure_keystrokes(rest[0]),
              "ui": measure_ui_keys,
              "memory": lambda: measure_memory(int(rest[0])),
              "audit": lambda: measure_audit(float(rest[0])),
              "http": lambda: measure_http(int(rest[0]), float(rest[1]), int(rest[2])),
              "start": measure_start,
              "sweep_db": lambda: measure_whole_sweep(int(rest[0])),
              "inspect": lambda: measure_inspect(Path(rest[0]),
                                                 *(int(r) for r in rest[1:2]))}[args.child]
        print(json.dumps(fn()))
        return 0
    if args.only == "ui":
        ui = _child("ui", [])
        _print_ui_keys(ui)
        out = Path(args.out)
        results = json.loads(out.read_text()) if out.exists() else {}
        results.update(ui_key_results(ui))
        results.setdefault("detail", {})["ui_keys"] = ui
        out.write_text(json.dumps(results, indent=2) + "\n")
        print(f"updated the key latencies in {args.out}", file=sys.stderr)
        return 0
    if args.only == "watch":
        slowdown, watch = _measure_watch(args.watch_runs)
        out = Path(args.out)
        results = json.loads(out.read_text()) if out.exists() else {}
        results["watch_slowdown"] = round(slowdown, 4)
        results.setdefault("detail", {})["watch"] = watch
        out.write_text(json.dumps(results, indent=2) + "\n")
        print(f"updated watch_slowdown in {args.out}", file=sys.stderr)
        return 0
    print("foldscope bench · kestrel · in-process simulated models", file=sys.stderr)
    cpu = _child("cpu", [str(args.cpu_repeats)])
    print(f"  CPU per fold          {cpu['cpu_ms_per_fold']:8.2f} ms   (target ≤ 2 ms; "
          f"{cpu['folds']} folds)")
    print(f"  folds per second      {cpu['folds_per_s']:8.1f}      (zero simulated latency)")
    lat = _child("latency", [str(args.latency_rows)])
    print(f"  latency efficiency    {lat['latency_efficiency']:8.3f}      (target ≥ 0.95; "
          f"{lat['calls']} calls, 1 s latency, concurrency 64, {lat['wall_s']:.1f} s)")
    few = _child("few", [])
    print(f"  few-sequence efficiency {few['latency_efficiency_few_sequences']:6.3f}      "
          f"(target ≥ 0.9; 1 model × 2 repeats × 12 arms, concurrency 24, "
          f"{few['mean_in_flight']:.1f} calls in flight on average, {few['wall_s']:.1f} s)")
    http, http_detail = _measure_http(args)
    speed = _measure_speed_keys(args, cpu)
    speed_detail = speed.pop("detail")
    poll = _child("poll", [])
    print(f"  live poll, 10k rows    {poll['poll_ms_10k_rows']:7.2f} ms   (target ≤ 15 ms; median of "
          f"{poll['polls']} polls while a runner appended {poll['rows_changed_while_polling']} "
          f"row changes; p95 {poll['poll_ms_p95']:.1f} ms; first full read "
          f"{poll['first_poll_ms']:.0f} ms)")
    slowdown, watch = _measure_watch(args.watch_runs)
    keys = {kind: _child("keys", [kind]) for kind in ("small", "10k")}
    keystroke = max(k["keystroke_ms_p95"] for k in keys.values())
    print(f"  keystroke → repaint   {keystroke:8.1f} ms   (target p95 ≤ 50 ms; v and arrows "
          f"while a sweep runs at full speed: small sweep p95 "
          f"{keys['small']['keystroke_ms_p95']:.1f} ms (median "
          f"{keys['small']['keystroke_ms_median']:.1f}, {keys['small']['presses']} keys), "
          f"10k rows p95 {keys['10k']['keystroke_ms_p95']:.1f} ms (median "
          f"{keys['10k']['keystroke_ms_median']:.1f}, {keys['10k']['presses']} keys))")
    ui = _child("ui", [])
    _print_ui_keys(ui)
    mem = _child("memory", [str(args.memory_rows)])
    print(f"  peak RSS              {mem['peak_rss_mb']:8.1f} MB   (target ≤ 200 MB; "
          f"{mem['rows']} rows, {mem['folds']} folds, {mem['wall_s']:.0f} s)")
    print(f"  database per fold     {mem['db_bytes_per_fold']:8.0f} bytes")
    audit = _child("audit", [str(args.audit_mb)])
    print(f"  audit throughput      {audit['audit_mb_per_s']:8.1f} MB/s (target ≥ 20; a generated "
          f"{audit['audit_mb']:.0f} MB session, {audit['compactions']:.0f} compactions, "
          f"{audit['audit_cpu_s']:.1f} CPU-s, peak RSS {audit['audit_peak_rss_mb']:.0f} MB)")
    results = {"cpu_ms_per_fold": round(cpu["cpu_ms_per_fold"], 3),
               "folds_per_s": round(cpu["folds_per_s"], 1),
               "latency_efficiency": round(lat["latency_efficiency"], 4),
               "latency_efficiency_few_sequences": round(
                   few["latency_efficiency_few_sequences"], 4),
               **http, **speed,
               "poll_ms_10k_rows": round(poll["poll_ms_10k_rows"], 3),
               "first_poll_ms_10k_rows": round(poll["first_poll_ms"], 1),
               "watch_slowdown": round(slowdown, 4),
               "keystroke_ms_p95": round(keystroke, 1),
               **ui_key_results(ui),
               "peak_rss_mb": round(mem["peak_rss_mb"], 1),
               "db_bytes_per_fold": round(mem["db_bytes_per_fold"], 1),
               "audit_mb_per_s": round(audit["audit_mb_per_s"], 2),
               "detail": {"cpu": cpu, "latency": lat, "few_sequences": few, "poll": poll,
                          "http": http_detail, "speed": speed_detail,
                          "watch": watch, "keystrokes": keys, "ui_keys": ui, "memory": mem,
                          "audit": audit,
                          "python": sys.version.split()[0], "cpus": os.cpu_count()}}
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Sweep control through the database: a headless runner in another process is paused, resumed
and cancelled from the command line; its event log and status reach a reader in this one."""

import json
import subprocess
import sys
import threading

import pytest

from foldscope.cli.main import main
from foldscope.engine.activity import RunnerStatus
from foldscope.engine.events import Paused, Retry, RowDone, SweepStarted
from foldscope.engine.live import LiveSweep
from foldscope.engine.store import EVENT_CAP, Store

SWEEP = """
[sweep]
scenario = "smoke"
arms = ["j", "q", "m"]
repeats = 4
concurrency = 2

[[models]]
id = "sim/describer"
[models.faults]
latency_s = 0.15
rate_429 = 0.15
retry_after_s = 0.05
"""


class EventReader:
    """Reads a run's --json-events in a thread, so a test waits on what the runner did."""

    def __init__(self, proc):
        self.proc = proc
        self.events = []
        self.cond = threading.Condition()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        for line in self.proc.stdout:
            with self.cond:
                self.events.append(json.loads(line))
                self.cond.notify_all()
        with self.cond:
            self.events.append({"event": "<eof>"})
            self.cond.notify_all()

    def count(self, kind):
        with self.cond:
            return sum(e["event"] == kind for e in self.events)

    def wait_for(self, kind, at_least=1, timeout=60):
        with self.cond:
            ok = self.cond.wait_for(lambda: sum(e["event"] == kind for e in self.events)
                                    >= at_least or self.events[-1:] == [{"event": "<eof>"}],
                                    timeout=timeout)
        assert ok and self.count(kind) >= at_least, f"no {kind} event (saw {self.events[-3:]})"


def _folds(db):
    with Store(db, readonly=True) as store:
        return store.db.execute("SELECT COUNT(*) FROM folds").fetchone()[0]


def _status(db, sweep_id):
    with Store(db, readonly=True) as store:
        sweep = store.sweep(sweep_id)
        return store.live_status(sweep), sweep.stop_reason, store.runner_status(sweep_id)


def _wait_db(db, sweep_id, predicate, tries=600):
    """Poll the database (a bounded number of reads, each a real round trip) until true."""
    import time

    for _ in range(tries):
        got = _status(db, sweep_id)
        if predicate(*got):
            return got
        time.sleep(0.05)
    raise AssertionError(f"condition never held: {got}")


def test_headless_run_is_paused_resumed_and_cancelled_from_the_cli(tmp_path, capsys):
    sweep_file = tmp_path / "sweep.toml"
    sweep_file.write_text(SWEEP)
    db = tmp_path / "c.sqlite"
    proc = subprocess.Popen([sys.executable, "-m", "foldscope.cli.main", "run", str(sweep_file),
                             "--db", str(db), "--headless", "--json-events"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        reader = EventReader(proc)
        reader.wait_for("fold")
        with Store(db, readonly=True) as store:
            sweep_id = store.latest_sweep_id()

        assert main(["pause", sweep_id, "--db", str(db)]) == 0
        assert f"sweep {sweep_id} paused" in capsys.readouterr().err
        reader.wait_for("paused")
        # Calls in flight finish and commit; then nothing moves while paused.
        status, _, runner = _wait_db(db, sweep_id, lambda s, r, rs: rs is not None and rs.paused
                                     and all(e.in_flight == 0 for e in rs.endpoints))
        assert status == "paused" and proc.poll() is None
        # A watcher in this process reads the header, the endpoint line and the log from the db.
        view = LiveSweep(db, sweep_id).poll()
        assert view.run.status == "paused" and view.run.runner_pid == proc.pid
        assert view.run.elapsed_s > 0 and view.run.eta_s is None
        (line,) = view.endpoints
        assert line.endpoint == "sim:sim/describer" and line.in_flight == 0
        assert 1 <= line.limit <= line.ceiling == 2
        # Calls in flight at the pause still finish: their successes may raise the limit and
        # their faults be retried after it, but nothing new starts: the pause is the last of
        # what the run itself did.
        kinds = [e.kind for e in view.new_events]
        after = kinds[len(kinds) - 1 - kinds[::-1].index("paused") + 1:]
        assert set(after) <= {"limit", "retry"}, after
        held = _folds(db)
        assert main(["pause", sweep_id, "--db", str(db), "--no-wait"]) == 0  # again: no change
        assert _status(db, sweep_id)[0] == "paused" and _folds(db) == held
        folds_seen = reader.count("fold")

        assert main(["resume", sweep_id, "--db", str(db)]) == 0
        reader.wait_for("resumed")
        reader.wait_for("fold", at_least=folds_seen + 1)
        assert _folds(db) > held

        assert main(["cancel", sweep_id, "--db", str(db), "--reason", "enough for today"]) == 0
        assert proc.wait(timeout=60) == 0
        status, reason, runner = _status(db, sweep_id)
        assert status == "stopped" and reason.startswith("enough for today")
        assert runner.finished_at is not None and not runner.paused
        # The runner's log reached the database: a reader in another process sees it.
        with Store(db, readonly=True) as store:
            kinds = [e.kind for e in store.events(sweep_id)]
        assert kinds[0] == "sweep_started" and kinds[-1] == "sweep_finished"
        assert "paused" in kinds and "resumed" in kinds and "fold" not in kinds
        assert kinds.index("paused") < kinds.index("resumed")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_control_of_a_sweep_nobody_runs_is_one_line_exit_2(tmp_path, capsys):
    db = tmp_path / "n.sqlite"
    assert main(["run", "--scenario", "smoke", "--models", "sim/faithful", "--arms", "j",
                 "--repeats", "1", "--db", str(db), "--headless"]) == 0
    with Store(db, readonly=True) as store:
        sweep_id = store.latest_sweep_id()
    capsys.readouterr()
    assert main(["pause", sweep_id, "--db", str(db)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "is not running (status done)" in err
    assert main(["cancel", "nope", "--db", str(db)]) == 2
    assert "no sweep 'nope'" in capsys.readouterr().err


def test_event_log_is_capped_and_read_incrementally(tmp_path):
    with Store(tmp_path / "e.sqlite") as store:
        store.add_events("s", [SweepStarted(sweep="s", rows=3, pending=3, mode="free", units=3)])
        store.add_events("s", [Retry(fault="rate_limited", delay_s=0.5, limit=2, model="m[x]")
                               for _ in range(EVENT_CAP + 5)])
        events = store.events("s")
        assert len(events) == EVENT_CAP and events[-1].fault == "rate_limited"
        assert events[-1].model == "m[x]"
        assert store.events("s", since=events[-2].id) == events[-1:]
        assert store.events("other") == []


def test_only_what_a_watcher_needs_is_persisted():
    assert not RowDone(row=1, model="m", arm="j", recall=1.0, valid=True, reason="ok").persisted()
    assert RowDone(row=1, model="m", arm="j", recall=0.0, valid=False,
                   reason="incomplete").persisted()
    assert Paused(reason="x").persisted()


def test_runner_status_round_trips(tmp_path):
    from foldscope.engine.activity import EndpointState

    status = RunnerStatus(pid=7, started_at=1.0, updated_at=2.0, finished_at=None,
                          folds_at_start=3, finished_at_start=1, paused=True,
                          endpoints=(EndpointState("sim:m", ("m",), 1, 2, 4),))
    with Store(tmp_path / "r.sqlite") as store:
        store.set_runner_status("s", status)
        assert store.runner_status("s") == status
        with pytest.raises(Exception, match="unknown control request"):
            store.request_control("s", "explode", "x")

"""Durability: a sweep killed with SIGKILL at random moments and resumed ends exactly as an
uninterrupted run with the same seed — planned rows only, no duplicates, no lost fold."""

import json
import random
import signal
import subprocess
import sys

from foldscope.engine.store import Store

SWEEP = """
[sweep]
scenario = "smoke"
arms = ["j", "q", "m"]
repeats = 2
concurrency = 4
seed = 11

[[models]]
id = "sim/faithful"
[models.faults]
latency_s = 0.08

[[models]]
id = "sim/describer"
[models.faults]
latency_s = 0.08
"""


def _run(sweep_file, db, *, events=False):
    # With events, each committed fold is a JSON line on stdout; progress goes to stderr, which
    # is read only at the end, so it is discarded rather than left to fill a pipe.
    return subprocess.Popen([sys.executable, "-m", "foldscope.cli.main", "run", str(sweep_file),
                             "--db", str(db), "--headless"] + (["--json-events"] if events else []),
                            stdout=subprocess.PIPE if events else subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL if events else subprocess.PIPE, text=True)


def _wait_for_folds(proc, count):
    """Read the run's events until ``count`` folds have been committed (or the run ends)."""
    seen = 0
    while seen < count:
        line = proc.stdout.readline()
        if not line:  # the run ended
            return
        if json.loads(line).get("event") == "fold":
            seen += 1


def _snapshot(db):
    store = Store(db)
    sweep_id = store.latest_sweep_id()
    rows = store.rows(sweep_id)
    out = []
    for row in rows:
        full = store.row(row.id)
        folds = store.folds(row.id)
        out.append((row.scenario, row.model, row.arm, row.repeat, row.status,
                    row.recall, full.answer, row.folds_done,
                    tuple(f.carrier for f in folds), tuple(f.fold_index for f in folds)))
    store.close()
    return sweep_id, out


def test_kill_9_and_resume_matches_an_uninterrupted_run(tmp_path):
    sweep_file = tmp_path / "sweep.toml"
    sweep_file.write_text(SWEEP)
    reference = tmp_path / "reference.sqlite"
    proc = _run(sweep_file, reference)
    assert proc.wait(timeout=120) == 0, proc.stderr.read()

    killed = tmp_path / "killed.sqlite"
    rng = random.Random(5)
    kills = 0
    for _ in range(4):
        proc = _run(sweep_file, killed, events=True)
        # Kill this run after it has committed a random number (1-4) of new folds: the kill
        # lands mid-sweep, at a varying point, however fast or slow the machine is.
        _wait_for_folds(proc, rng.randint(1, 4))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait(timeout=60)
        proc.stdout.close()
    proc = _run(sweep_file, killed)  # re-running the same sweep file resumes it
    assert proc.wait(timeout=120) == 0, proc.stderr.read()
    assert kills >= 3

    ref_id, ref_rows = _snapshot(reference)
    got_id, got_rows = _snapshot(killed)
    assert len(got_rows) == 12 and all(r[4] == "done" for r in got_rows)
    # Everything but the random sweep id is identical to the uninterrupted run.
    assert got_rows == ref_rows
    store = Store(killed)
    assert len(store.sweeps()) == 1
    dupes = store.db.execute("SELECT row_id, fold_index, COUNT(*) FROM folds GROUP BY 1, 2 "
                             "HAVING COUNT(*) > 1").fetchall()
    assert dupes == []

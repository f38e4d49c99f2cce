"""Durability: a sweep killed with SIGKILL at random moments and resumed ends exactly as an
uninterrupted run with the same seed — planned rows only, no duplicates, no lost fold."""

import random
import signal
import subprocess
import sys
import time

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


def _run(sweep_file, db):
    return subprocess.Popen([sys.executable, "-m", "foldscope.cli.main", "run", str(sweep_file),
                             "--db", str(db), "--headless"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def _folds(db):
    if not db.exists():
        return 0
    try:
        store = Store(db, readonly=True)
    except Exception:  # the first run has not created its schema yet
        return 0
    try:
        return store.db.execute("SELECT COUNT(*) FROM folds").fetchone()[0]
    except Exception:
        return 0
    finally:
        store.close()


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
    committed = 0
    for _ in range(4):
        proc = _run(sweep_file, killed)
        # Wait for this run to commit something new, then kill it a random moment later: the
        # kill lands mid-sweep however fast or slow the machine is.
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            if _folds(killed) > committed:
                break
            time.sleep(0.02)
        time.sleep(rng.uniform(0.0, 0.3))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait(timeout=60)
        committed = _folds(killed)
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

"""Several planners and runners on one database at once: one sweep per definition, one runner
per sweep, the others told so in one line, and no "database is locked" anywhere."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from conftest import definition

from foldscope.engine.integrity import check_database
from foldscope.engine.launch import prepare_sweep
from foldscope.engine.store import Store


def test_four_simultaneous_plans_of_one_definition_make_one_sweep(tmp_path):
    db = tmp_path / "plans.sqlite"
    data = definition(models=("sim/faithful",), arms=("j", "q"))
    start = threading.Barrier(4)
    results: list[object] = []

    def plan() -> None:
        start.wait()
        try:
            results.append(prepare_sweep(db, data, "test"))
        except Exception as exc:  # noqa: BLE001 - the test reports whatever went wrong
            results.append(exc)

    threads = [threading.Thread(target=plan) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not [r for r in results if isinstance(r, Exception)], results
    ids = {r.sweep_id for r in results}  # type: ignore[union-attr]
    assert len(ids) == 1
    assert sum(not r.resumed for r in results) == 1  # type: ignore[union-attr]
    with Store(db, readonly=True) as store:
        assert len(store.sweeps()) == 1


def test_eight_simultaneous_runs_plan_once_and_run_once(tmp_path):
    db = tmp_path / "runs.sqlite"  # new: the schema is created under contention too
    argv = [sys.executable, "-m", "foldscope.cli.main", "run", "--scenario", "smoke",
            "--models", "sim/faithful", "--arms", "j,q", "--repeats", "2",
            "--db", str(db), "--headless", "--latency-scale", "0"]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    procs = [subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                              env=env) for _ in range(8)]
    outcomes = [(proc.wait(timeout=300), proc.stderr.read()) for proc in procs]  # type: ignore[union-attr]
    for proc in procs:
        proc.stderr.close()  # type: ignore[union-attr]
    for code, err in outcomes:
        assert "Traceback" not in err and "locked" not in err, err
        assert code in (0, 2), err
        if code == 2:  # lost the claim to a live runner: one line saying so
            assert len(err.strip().splitlines()) == 1 and "already being run by process" in err
    assert any(code == 0 for code, _ in outcomes)
    with Store(db, readonly=True) as store:
        sweeps = store.sweeps()
        assert len(sweeps) == 1 and sweeps[0].status == "done"
        progress = store.progress(sweeps[0].id)
        assert progress["done"] == progress["total"] == 4
    report = check_database(Path(db))
    assert report.clean, report.as_json()

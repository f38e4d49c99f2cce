"""What a run reports (summary line, ``sweep_finished``, totals) matches what the database holds,
with rows that fail after all retries and calls that fail after theirs; ``--retry-failed``."""

from __future__ import annotations

import json
import re

from conftest import definition

from foldscope.cli.main import main
from foldscope.engine.launch import prepare_sweep
from foldscope.engine.store import Store

# Half the calls meet a 5xx and a call gives up after two attempts, a row after two: some rows
# end failed, some done (the draws are deterministic, so always the same ones).
FLAKY = {"id": "sim/faithful", "faults": {"rate_5xx": 0.5}, "max_retries": 1,
         "backoff_base_s": 0.0}


def _run(capsys, db, sweep_id, *extra: str) -> tuple[list[dict], str]:
    code = main(["run", "--resume", sweep_id, "--db", str(db), "--headless", "--json-events",
                 "--latency-scale", "0", *extra])
    assert code == 0
    out, err = capsys.readouterr()
    return [json.loads(line) for line in out.splitlines()], err


def _db_counts(db, sweep_id) -> dict[str, int]:
    with Store(db, readonly=True) as store:
        rows = store.rows(sweep_id)
    return {"done": sum(r.status == "done" for r in rows),
            "failed": sum(r.status == "failed" for r in rows),
            "call_retries": sum(r.call_retries for r in rows),
            "row_retries": sum(r.infra_retries for r in rows),
            "attempts": {r.id: r.attempt for r in rows if r.status == "failed"}}  # type: ignore[dict-item]


def test_reported_counts_match_the_database(tmp_path, capsys):
    db = tmp_path / "counts.sqlite"
    data = definition(models=(FLAKY,), arms=("j", "q", "m"), repeats=2, max_row_retries=1)
    sweep_id = prepare_sweep(db, data, "test").sweep_id
    events, err = _run(capsys, db, sweep_id)
    stored = _db_counts(db, sweep_id)
    assert stored["failed"] >= 1 and stored["done"] >= 1  # the case that was miscounted
    finished = events[-1]
    assert finished["event"] == "sweep_finished"
    assert (finished["rows_done"], finished["rows_failed"]) == (stored["done"], stored["failed"])
    summary = err.strip().splitlines()[-1]
    assert f"{stored['done']} rows done, {stored['failed']} failed" in summary
    # Every retry event is a retry counted on its row, calls that finally failed included.
    retries = [e for e in events if e["event"] == "retry"]
    assert len(retries) == stored["call_retries"] > 0
    assert sum(e["event"] == "row_retry" for e in events) == stored["row_retries"] > 0
    # Resuming changes nothing: the counts read back from the database agree.
    events, err = _run(capsys, db, sweep_id)
    assert (events[-1]["rows_done"], events[-1]["rows_failed"]) == (stored["done"],
                                                                     stored["failed"])
    assert not [e for e in events if e["event"] == "row_started"]  # failed rows stay failed


def test_retry_failed_runs_infrastructure_failures_again_at_their_limit(tmp_path, capsys):
    db = tmp_path / "again.sqlite"
    data = definition(models=(FLAKY,), arms=("j", "q", "m"), repeats=2, max_row_retries=0)
    sweep_id = prepare_sweep(db, data, "test").sweep_id
    _run(capsys, db, sweep_id)
    before = _db_counts(db, sweep_id)
    assert before["failed"] >= 1
    events, err = _run(capsys, db, sweep_id, "--retry-failed")
    after = _db_counts(db, sweep_id)
    started = {e["row"] for e in events if e["event"] == "row_started"}
    assert started == set(before["attempts"])  # exactly the failed rows, each run again
    with Store(db, readonly=True) as store:
        for row_id, attempt in before["attempts"].items():  # type: ignore[union-attr]
            assert store.row(row_id).attempt == attempt + 1  # fresh draws: a new attempt
    assert after["done"] + after["failed"] == 6 and after["done"] >= before["done"]
    assert (events[-1]["rows_done"], events[-1]["rows_failed"]) == (after["done"],
                                                                    after["failed"])
    assert re.search(rf"{after['done']} rows done, {after['failed']} failed", err)

"""A sweep run by a child process: it is the headless runner, its errors come back as one line,
it stops when asked, and it stops by itself when the process that started it dies."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from conftest import definition

from foldscope.engine.launch import prepare_sweep
from foldscope.engine.procinfo import process_alive
from foldscope.engine.runner_process import (
    PARENT_GONE,
    RunnerProcess,
    RunnerStartError,
    error_line,
    runner_command,
)
from foldscope.engine.store import Store


def slow_sweep(db) -> str:
    """A sweep long enough to be stopped mid-way (kestrel, 0.2 s per simulated call)."""
    data = definition(scenario="kestrel", models=({"id": "sim/faithful",
                                                  "faults": {"latency_s": 0.2}},),
                      arms=("j", "q", "m"), repeats=2)
    return prepare_sweep(db, data, "test").sweep_id


def wait_for(condition, what: str, timeout: float = 60.0) -> None:
    """Poll a condition another process makes true; fail naming it if it never does."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.05)


def folds(db, sweep_id) -> int:
    with Store(db, readonly=True) as store:
        return store.progress(sweep_id)["folds"]


def test_the_child_is_the_headless_runner_tied_to_its_parent():
    cmd = runner_command("x.sqlite", "abc", latency_scale=0.0, retry_failed=True)
    assert cmd[0] == sys.executable
    assert cmd[1:] == ["-m", "foldscope.cli.main", "run", "--headless", "--resume", "abc",
                       "--db", "x.sqlite", "--stop-with-parent", "--latency-scale", "0.0",
                       "--retry-failed"]
    assert "--latency-scale" not in runner_command("x.sqlite", "abc")  # the sweep's own latency


@pytest.mark.parametrize(("lines", "code", "error"), [
    (["rows 1/2 · ...", "foldscope: sweep s done: 2 rows done"], 0, None),
    (["foldscope: sweep s stopped (interrupted by SIGTERM)"], 143, None),
    (["foldscope: error: model 'x': environment variable K (api_key_env) is not set"], 2,
     "model 'x': environment variable K (api_key_env) is not set"),
    (["Traceback (most recent call last):", '  File "x"', "OSError: disk full", ""], 1,
     "OSError: disk full"),
    (["rows 1/2"], -9, "the sweep's runner was killed by SIGKILL"),
    (["something odd"], 3, "the sweep's runner exited with code 3: something odd"),
])
def test_error_line_reads_the_childs_stderr_and_exit(lines, code, error):
    assert error_line(lines, code) == error


def test_a_child_that_cannot_start_is_an_error(tmp_path):
    db = tmp_path / "nostart.sqlite"
    sweep_id = slow_sweep(db)
    child = RunnerProcess(db, sweep_id, command=[str(tmp_path / "no-such-python"), "-V"])
    with pytest.raises(RunnerStartError, match="cannot start the sweep's runner"):
        child.start()


def test_a_missing_api_key_comes_back_as_one_line(tmp_path, monkeypatch):
    monkeypatch.delenv("FOLDSCOPE_TEST_KEY", raising=False)
    db = tmp_path / "key.sqlite"
    data = definition(models=({"id": "qwen/qwen3.6-35b-a3b", "provider": "openrouter",
                               "pin": "someprovider", "api_key_env": "FOLDSCOPE_TEST_KEY"},),
                      arms=("j",))
    sweep_id = prepare_sweep(db, data, "test").sweep_id
    child = RunnerProcess(db, sweep_id)
    child.start()
    outcome = child.wait()
    assert outcome.returncode == 2 and outcome.watching_pid is None
    assert "FOLDSCOPE_TEST_KEY" in outcome.error and "not set" in outcome.error


def test_sigterm_stops_the_child_and_a_rerun_resumes(tmp_path):
    db = tmp_path / "term.sqlite"
    sweep_id = slow_sweep(db)
    child = RunnerProcess(db, sweep_id)
    child.start()
    wait_for(lambda: folds(db, sweep_id) > 0, "the first committed fold")
    child.cancel("quit")
    outcome = child.wait()
    assert (outcome.status, outcome.returncode, outcome.error) == ("stopped", 143, None)
    assert not process_alive(child.pid)
    with Store(db, readonly=True) as store:
        sweep = store.sweep(sweep_id)
        assert "interrupted by SIGTERM" in sweep.stop_reason and not sweep.runner_pid


PARENT = """
import sys
from foldscope.engine.runner_process import RunnerProcess
child = RunnerProcess(sys.argv[1], sys.argv[2], latency_scale=float(sys.argv[3]))
child.start()
print(child.pid, flush=True)
sys.stdin.read()  # until the test kills this process
"""


def test_a_child_stops_when_its_parent_is_killed(tmp_path):
    """SIGKILL on the TUI's process leaves no runner behind, and the sweep resumes."""
    db = tmp_path / "orphan.sqlite"
    sweep_id = slow_sweep(db)
    parent = subprocess.Popen([sys.executable, "-c", PARENT, str(db), sweep_id, "1"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    child_pid = int(parent.stdout.readline())
    try:
        wait_for(lambda: folds(db, sweep_id) > 0, "the first committed fold")
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        # The child is not ours to reap: it is gone once its /proc entry is (or a zombie of
        # init's, which its stat names state Z).
        wait_for(lambda: not alive_not_zombie(child_pid), "the child to stop", timeout=30)
    finally:
        if alive_not_zombie(child_pid):
            os.kill(child_pid, signal.SIGKILL)
        parent.stdin.close()
    with Store(db, readonly=True) as store:
        sweep = store.sweep(sweep_id)
        assert store.live_status(sweep) == "stopped"
        assert sweep.stop_reason.startswith(PARENT_GONE) and not sweep.runner_pid
        assert store.progress(sweep_id)["done"] < 6
    # Resumable: a run picks up where the committed folds end.
    resumed = RunnerProcess(db, sweep_id, latency_scale=0.0)
    resumed.start()
    outcome = resumed.wait()
    assert (outcome.status, outcome.error) == ("done", None)


def alive_not_zombie(pid: int) -> bool:
    if not process_alive(pid):
        return False
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rindex(b")") + 2:].split()[0] != b"Z"

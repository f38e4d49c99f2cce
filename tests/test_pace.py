"""A run's pace from counts: elapsed, folds per second, ETA; and the header's run state."""

from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core.pace import format_duration, run_pace
from foldscope.core.tally import CellTally, Progress
from foldscope.engine.activity import RunnerStatus
from foldscope.engine.live import run_state


def test_pace_counts_this_run_only():
    pace = run_pace(10.0, folds=30, finished=5, remaining=5)
    assert pace.folds_per_s == 3.0 and pace.eta_s == 10.0
    assert run_pace(10.0, folds=3, finished=0, remaining=4).eta_s is None
    assert run_pace(0.0, folds=0, finished=0, remaining=4).folds_per_s == 0.0
    assert format_duration(3725) == "1:02:05"


@settings(max_examples=50)
@given(st.floats(0, 1e6), st.integers(0, 10_000), st.integers(0, 1000), st.integers(0, 1000))
def test_pace_is_never_negative(elapsed, folds, finished, remaining):
    pace = run_pace(elapsed, folds, finished, remaining)
    assert pace.folds_per_s >= 0 and (pace.eta_s is None or pace.eta_s >= 0)


def test_run_state_for_the_header():
    cells = (CellTally("s", "m", "j", rows=4, valid_rows=2, done_rows=3, failed_rows=1,
                       call_retries=5, row_retries=1, cost_usd=0.25),)
    progress = Progress(planned=6, done=3, failed=1, folds=40)
    runner = RunnerStatus(pid=9, started_at=100.0, updated_at=110.0, finished_at=None,
                          folds_at_start=20, finished_at_start=2, paused=False, endpoints=())
    state = run_state("running", 9, cells, progress, runner, now=120.0)
    assert state.elapsed_s == 20.0 and state.folds_per_s == 1.0 and state.eta_s == 60.0
    assert (state.call_retries, state.row_retries, state.invalid_rows) == (5, 1, 2)
    assert state.spend_usd == 0.25 and state.runner_pid == 9
    dead = run_state("interrupted", 9, cells, progress, runner, now=500.0)
    assert dead.elapsed_s == 10.0 and dead.eta_s is None and dead.runner_pid is None
    never = run_state("planned", None, cells, progress, None, now=1.0)
    assert never.elapsed_s is None and never.folds_per_s is None

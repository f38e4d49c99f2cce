"""Sweep engine behaviour: cache replay, migration, budgets, retries, rate limits, pins, catch-up."""

import asyncio
import sqlite3

import httpx
from conftest import definition, run_sweep

from foldscope.engine.launch import prepare_sweep
from foldscope.engine.runner import SweepRunner
from foldscope.engine.sim.transport import SimTransport
from foldscope.engine.store import _MIGRATIONS, SCHEMA_VERSION, Store


def test_identical_requests_replay_from_the_cache(db):
    data = definition(models=("sim/faithful",), arms=("j", "q"), cache=True)
    first = run_sweep(db, data)
    second = run_sweep(db, data)  # a fresh sweep of the same definition, same database
    store = Store(db)
    a, b = store.rows(first), store.rows(second)
    assert all(r.cached_calls == 0 for r in a)
    assert all(r.cached_calls == 4 for r in b)  # three folds and the recall turn
    assert [r.recall for r in a] == [r.recall for r in b]
    assert all(f.cached == 1 for r in b for f in store.folds(r.id))


def test_cache_is_off_for_simulated_models_unless_asked(db):
    data = definition(models=("sim/faithful",), arms=("j",))
    run_sweep(db, data)
    second = run_sweep(db, data)
    assert Store(db).rows(second)[0].cached_calls == 0
    assert Store(db).db.execute("SELECT COUNT(*) FROM cache").fetchone()[0] == 0


def test_cache_defaults():
    from foldscope.engine.models import resolve_model
    from foldscope.engine.runner import cache_enabled

    real = resolve_model("qwen/q", {"provider": "vllm"})
    assert cache_enabled(None, real) is True
    assert cache_enabled(None, real.model_copy(update={"temperature": 0.7})) is False
    assert cache_enabled(None, resolve_model("sim/faithful")) is False
    assert cache_enabled(True, resolve_model("sim/faithful")) is True
    assert cache_enabled(False, real) is False


def test_older_database_is_migrated(tmp_path):
    path = tmp_path / "v1.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(_MIGRATIONS[1] + "; INSERT INTO meta VALUES ('schema_version', '1');")
    conn.execute("INSERT INTO sweeps (id, created_at, name, config_digest, config_json) "
                 "VALUES ('old', 0, 'old', 'd', '{}')")
    conn.commit()
    conn.close()
    store = Store(path)
    assert store.schema_version == SCHEMA_VERSION
    assert store.sweep("old").name == "old"  # nothing committed is lost
    assert "cache" in store.db.table_names()


def test_token_budget_stops_new_calls_and_says_why(db):
    data = definition(models=("sim/faithful",), arms=("j", "q", "m"), repeats=2,
                      budget_tokens=1, concurrency=1)
    sweep_id = run_sweep(db, data)
    store = Store(db)
    sweep = store.sweep(sweep_id)
    assert sweep.status == "stopped" and "budget" in sweep.stop_reason
    progress = store.progress(sweep_id)
    # The first call spends the budget: no call after it, the row it began waits, planned,
    # with its committed fold, for a run with budget left.
    assert progress["done"] == 0 and progress["planned"] == 6 and progress["running"] == 0
    assert sum(r.folds_done for r in store.rows(sweep_id)) == 1


class FlakyTransport(httpx.AsyncBaseTransport):
    """Fails the first ``failures`` chat calls with a connect error, then delegates."""

    def __init__(self, failures: int) -> None:
        self.inner = SimTransport(latency_scale=0.0)
        self.failures = failures

    async def handle_async_request(self, request):
        if request.url.path.endswith("/chat/completions") and self.failures > 0:
            self.failures -= 1
            raise httpx.ConnectError("simulated outage", request=request)
        return await self.inner.handle_async_request(request)


def test_infra_faults_retry_the_row_and_count_it(db):
    # max_retries=0 on the client: every connect error fails the row, which the sweep retries.
    data = definition(models=({"id": "sim/faithful", "max_retries": 0},), arms=("j",),
                      max_row_retries=3)
    prepared = prepare_sweep(db, data, "test")
    runner = SweepRunner(db, prepared.sweep_id, transport=FlakyTransport(2), latency_scale=0.0)
    asyncio.run(runner.run())
    row = Store(db).rows(prepared.sweep_id)[0]
    assert row.status == "done" and row.valid == 1
    assert row.infra_retries == 2 and runner.totals.row_retries == 2


def test_infra_retries_are_bounded(db):
    data = definition(models=({"id": "sim/faithful", "max_retries": 0},), arms=("j",),
                      max_row_retries=1)
    prepared = prepare_sweep(db, data, "test")
    asyncio.run(SweepRunner(db, prepared.sweep_id, transport=FlakyTransport(10),
                            latency_scale=0.0).run())
    row = Store(db).rows(prepared.sweep_id)[0]
    assert row.status == "failed" and row.validity_reason == "infra_fault"
    assert row.infra_retries == 1


def test_arm_behaviour_is_never_retried(db):
    # Truncated replies are the arm's (and model's) own behaviour: recorded, never retried.
    data = definition(models=({"id": "sim/faithful", "faults": {"rate_truncate": 1.0}},),
                      arms=("j",))
    sweep_id = run_sweep(db, data)
    row = Store(db).rows(sweep_id)[0]
    assert row.status == "done" and row.infra_retries == 0
    assert row.length_stops == 3 and row.parse_failures >= 1


def test_429s_shrink_concurrency_and_respect_the_rate(db):
    model = {"id": "sim/faithful", "faults": {"rate_429": 0.3, "retry_after_s": 0.0},
             "backoff_base_s": 0.0, "backoff_cap_s": 0.0, "max_retries": 10}
    data = definition(models=(model,), arms=("j", "q", "m"), repeats=4, concurrency=6,
                      rate_limits={"sim": {"concurrency": 4, "rpm": 6000}})
    prepared = prepare_sweep(db, data, "test")
    runner = SweepRunner(db, prepared.sweep_id, latency_scale=0.0)
    asyncio.run(runner.run())
    limiter = next(iter(runner.limiters.values()))
    assert limiter.peak_in_flight <= 4
    assert limiter.rate_limited > 0 and runner.totals.call_retries > 0
    # Every attempt, retries included, passed the rate pacer (plus the one endpoint listing).
    calls = runner.totals.folds + 12 + runner.totals.call_retries
    assert len(limiter.starts) == calls + 1
    assert Store(db).progress(prepared.sweep_id)["done"] == 12


def test_rpm_paces_every_attempt_including_retries(monkeypatch):
    import foldscope.engine.limiter as mod
    from foldscope.engine.limiter import AdaptiveLimiter

    now = [0.0]

    async def fake_sleep(seconds):
        now[0] += seconds

    monkeypatch.setattr(mod.asyncio, "sleep", fake_sleep)

    async def scenario():
        limiter = AdaptiveLimiter(4, rpm=3, clock=lambda: now[0])
        starts = []
        for _ in range(7):
            await limiter.pace()
            starts.append(now[0])
        return starts

    starts = asyncio.run(scenario())
    # No sliding minute ever holds more than 3 starts, and nothing waits needlessly.
    assert all(b - a >= 60.0 for a, b in zip(starts, starts[3:]))
    assert starts[:3] == [0.0, 0.0, 0.0] and starts[3] < 60.01

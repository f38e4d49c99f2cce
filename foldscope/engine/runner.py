"""The sweep runner: executes a stored plan with asyncio, committing every fold as it completes."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import functools
import gc
import hashlib
import json
import os
import signal
import sqlite3
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from foldscope.core.arms import get_arm
from foldscope.core.designs import DEFAULT_MODE, EXECUTION_MODES
from foldscope.core.errors import ConfigError
from foldscope.core.fold import recall_call
from foldscope.core.forensics import FactHistory
from foldscope.core.row import (
    FoldCursor,
    FoldRecord,
    FoldTally,
    RowRecord,
    ScenarioInputs,
    advance,
    context_warnings,
    failure_verdict,
    finish_kind,
    grade_row,
    next_fold,
    stored_timeline,
)
from foldscope.core.scenario import Scenario
from foldscope.core.status import RowStatus, SweepStatus
from foldscope.core.text import storable
from foldscope.engine.activity import EndpointState, RunnerStatus
from foldscope.engine.client.chat import ChatReply, ChatRequest
from foldscope.engine.client.errors import ClientError, InfraError, KeyRejected
from foldscope.engine.client.reply_check import cached_reply_problem
from foldscope.engine.connect import make_client
from foldscope.engine.events import (
    Event,
    EventSink,
    FoldCommitted,
    LimitChanged,
    ModelWarning,
    Paused,
    Resumed,
    Retry,
    RowDone,
    RowFailed,
    RowRetry,
    RowStarted,
    Stopped,
    SweepFinished,
    SweepStarted,
)
from foldscope.engine.limiter import AdaptiveLimiter, BesideLimit
from foldscope.engine.loader import load_scenario
from foldscope.engine.models import ModelConfig
from foldscope.engine.models import warnings as model_warnings
from foldscope.engine.pins import ModelPin
from foldscope.engine.probe import probe_arms, probe_model
from foldscope.engine.procinfo import this_runner
from foldscope.engine.serverinfo import ServerModel, count_tokens, server_model
from foldscope.engine.store import (
    ROW_DONE,
    ROW_FAILED,
    ROW_PLANNED,
    ROW_RUNNING,
    Store,
    SweepRecord,
    database_error,
)
from foldscope.engine.store_thread import WRITES_PER_WORKER, StoreThread
from foldscope.engine.sweep import SweepConfig, stored_definition
from foldscope.engine.wire import body_digest, raise_open_files

CONTROL_POLL_S = 0.25
"""How often the runner reads its control requests (pause, resume, cancel) from the database."""

_T = TypeVar("_T")

STATUS_EVERY_S = 1.0
"""The runner writes its status and new log events at most this often (and when it ends)."""

HEARTBEAT_S = 2.0
"""The runner rewrites its status at least this often, changed or not: the heartbeat that keeps
its claim live where its pid cannot be seen (``procinfo.HEARTBEAT_FRESH_S``)."""

DEFAULT_GC_THRESHOLD = (700, 10, 10)
"""CPython's own thresholds for its cyclic collector."""

RUN_GC_THRESHOLD = 5000
"""Container allocations between young collections while a run lasts, when nobody else has
tuned the collector. At 700 (CPython's default) a run at concurrency 256 over HTTP spent 2.5-3.3 s
of 45-55 s in collections (0.7-0.9 ms a call, pauses of up to 390 ms with every call in flight
stopped): its in-flight calls keep their objects alive for a call's latency, so young
collections walk them and promote them over and over. At 5,000: 1.0-1.5 s, pauses under 150 ms."""


@contextlib.contextmanager
def _collector_for_a_run() -> Iterator[None]:
    """Raise the young generation's threshold to ``RUN_GC_THRESHOLD`` for the block, if the
    process's collector is as CPython sets it (a TUI that manages it is left alone)."""
    if gc.get_threshold() != DEFAULT_GC_THRESHOLD:
        yield
        return
    gc.set_threshold(RUN_GC_THRESHOLD, *DEFAULT_GC_THRESHOLD[1:])
    try:
        yield
    finally:
        if gc.get_threshold()[0] == RUN_GC_THRESHOLD:  # still ours: given back
            gc.set_threshold(*DEFAULT_GC_THRESHOLD)


@dataclass
class Totals:
    """Live counters a progress display reads."""

    rows_total: int = 0
    rows_done: int = 0
    rows_failed: int = 0
    folds: int = 0
    call_retries: int = 0
    row_retries: int = 0
    errors: int = 0
    cost_usd: float = 0.0
    tokens: int = 0
    unknown_cost_calls: int = 0
    """Calls whose cost is unknown (not stated in range, no prices configured)."""
    highest_call_cost: float = 0.0
    """The most one call cost so far (what a call of unknown cost is counted at by a budget)."""
    initial_finished: int = 0
    started: float = field(default_factory=time.monotonic)


def execution_units(rows: list[RowRecord], mode: str) -> list[list[RowRecord]]:
    """Lay rows out as the units workers take, each unit's rows run one after another.

    - ``sequential``: one unit per model x repeat sequence (per scenario), its rows in planned
      order; units ordered by their first row, so the sweep starts as planned.
    - ``blocked``: one row per unit, the rows of each model x repeat block together (all its
      arms start as soon as there is room for them), blocks in the order they first appear.
    - ``free``: one row per unit, in planned order (the models interleaved step by step).
    """
    ordered = sorted(rows, key=lambda r: r.position)
    if mode == "free":
        return [[row] for row in ordered]
    blocks: dict[tuple[str, str, int], list[RowRecord]] = {}
    for row in ordered:
        blocks.setdefault((row.scenario, row.model, row.repeat), []).append(row)
    if mode == "sequential":
        return list(blocks.values())
    if mode == "blocked":
        return [[row] for block in blocks.values() for row in block]
    raise ConfigError(f"unknown execution mode '{mode}' (known: {', '.join(EXECUTION_MODES)})")


def cache_enabled(setting: bool | None, cfg: ModelConfig) -> bool:
    """Whether a model's calls use the response cache.

    An explicit sweep setting wins. By default the cache replays temperature-0 calls to real
    providers only: above temperature 0 a replay would hide the sampling a repeat is for, and
    simulated models cost nothing to ask again.
    """
    if setting is not None:
        return setting
    return cfg.temperature == 0.0 and cfg.provider != "sim"


def cache_key(client: Any, request: ChatRequest, repeat: int, digest: str | None = None) -> str:
    """The response-cache key: the pinned model, what its server reports of it, the digest of
    the exact body sent (in the dialect the sweep uses), the repeat.

    The server's report (``engine.serverinfo``: ``/v1/models`` metadata, a weights digest where
    it offers one, its tokenizer's reading of a fixed text) is in the key, so a local server
    that now serves other weights under the same alias is not answered from the old replies.
    ``digest`` is the body's digest when the caller has it (it hands the same to the client for
    its record, so a call's ~100k-character body is hashed once).
    """
    cfg = client.cfg
    if digest is None:
        digest = body_digest(client.build_body(request))
    served = getattr(client, "server_fingerprint", "")
    header = json.dumps([cfg.wire_model, cfg.provider, cfg.base_url, cfg.pin, repeat, digest]
                        + ([served] if served else []))
    return hashlib.sha256(header.encode()).hexdigest()


_REPLY_FIELDS = frozenset(f.name for f in dataclasses.fields(ChatReply))


def _reply_record(reply: ChatReply) -> dict[str, Any]:
    return {"content": reply.content, "finish_reason": reply.finish_reason,
            "prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens,
            "latency_s": reply.latency_s, "cost_usd": reply.cost_usd,
            "simulated": reply.simulated, "attempts": reply.attempts,
            "request_digest": reply.request_digest, "truncated": reply.truncated}


def _nothing() -> None:
    return None


def _commit_fold(row_id: int, fold: FoldRecord, histories: Sequence[FactHistory],
                 written: Sequence[FactHistory], store: Store) -> None:
    store.commit_fold(row_id, fold, histories, written)


class _RowAbandoned(Exception):
    """The run stopped under a row (its key was refused): it goes back to planned."""


class _DialectChanged(Exception):
    """A row's first calls went out in a schema dialect the probe then did not choose."""


def unhonoured_warnings(client: Any, arm_ids: Sequence[str]) -> list[str]:
    """A warning naming the parameters a sweep's requests send that the provider does not
    document honouring (``honoured`` in ``core/data/dialects.toml``): they may be ignored."""
    arms = [get_arm(a) for a in arm_ids]
    schema = next((a.response_format() for a in arms if a.representation == "schema"), None)
    body = client.build_body(ChatRequest([{"role": "user", "content": ""}], 1, schema))
    honoured = set(client.cfg.dialect_entry.honoured)
    extra = [key for key in body if key not in honoured]
    if not extra:
        return []
    return [f"sends {', '.join(extra)}, which provider {client.cfg.provider} does not document "
            "honouring (it may be ignored)"]


_CURRENT_ROW: contextvars.ContextVar[int | None] = contextvars.ContextVar("row", default=None)
"""The row whose call is on the wire in this task (the retry hook charges its retries to it)."""

_SENT_DIALECTS: contextvars.ContextVar[set[str] | None] = contextvars.ContextVar(
    "sent_dialects", default=None)
"""While its model's probe runs, the schema dialects a row's calls were sent in (None after)."""


PROBE_BESIDE_RATIO = 100
"""A schema probe's calls run beside an endpoint's in-flight limit when they are at most one in
this many of its ceiling (``_probe_beside``)."""


def _probe_beside(limiter: AdaptiveLimiter, probe_calls: int) -> bool:
    """Whether a schema probe's ``probe_calls`` calls at once run beside ``limiter``'s in-flight
    limit rather than in it: when they are at most 1 % of its ceiling. In it, they hold as many
    rows back for a call's latency (10 s and more on a busy endpoint); with as many rows as the
    limit, those rows then end that much after the others, and the limit stands idle while they
    do (2 of 1,000 slots held for 10 s left 0.87 of 1,000 calls on the wire over a sweep of 7
    calls a row). Beside it, the endpoint sees at most 1 % more calls than the limit, for one
    call's time, once per sweep and model; a small limit keeps its exact bound."""
    return probe_calls > 0 and probe_calls * PROBE_BESIDE_RATIO <= limiter.ceiling


def _probed(cfg: ModelConfig, arm_ids: Sequence[str]) -> bool:
    """Whether a model's schema dialect is chosen by a probe (see ``_choose_dialects``)."""
    return bool(probe_arms(arm_ids)) and not cfg.schema_dialect and not cfg.is_simulated


def endpoint_concurrency(cfg: ModelConfig, s: Any, server: Any = None) -> int:
    """Calls in flight one model's endpoint allows, never above the sweep's ``concurrency``.

    The model's own ``concurrency`` wins; then the sweep's ``rate_limits`` entry for its
    provider; then what the server advertises (llama.cpp's slots); then the provider's default
    (``core/data/dialects.toml``: 1 for the local servers llama.cpp and Ollama); else the
    sweep's concurrency.
    """
    if cfg.concurrency is not None:
        return min(cfg.concurrency, s.concurrency)
    if cfg.provider in s.rate_limits:
        return s.rate_limit(cfg.provider).concurrency or s.concurrency
    slots = getattr(server, "slots", None)
    if slots:
        return min(slots, s.concurrency)
    default = cfg.dialect_entry.concurrency
    return min(default, s.concurrency) if default else s.concurrency


class _RowFailed(Exception):
    """A row ended without an answer; carries its validity reason and error text."""

    def __init__(self, error: str, infra: bool, retries: int = 0) -> None:
        super().__init__(error)
        self.infra = infra
        self.retries = retries
        """Retries the failed call made before it gave up (they count like any others)."""


class SweepRunner:
    """Run (or resume) one stored sweep.

    Args:
        db_path: the database holding the sweep's plan.
        sweep_id: which sweep.
        transport: an httpx transport to use for every model (tests); sims default to in-process.
        on_event: called with each event (``engine.events.EVENT_TYPES`` lists every kind).
        latency_scale: multiplies simulated latency (0 = full speed).
        retry_failed: run rows that failed on infrastructure again, those at their attempt
            limit included (each gets ``max_row_retries`` more retries in this run).
    """

    def __init__(self, db_path: str | Path, sweep_id: str, *, transport: Any = None,
                 on_event: EventSink | None = None, latency_scale: float | None = None,
                 retry_failed: bool = False) -> None:
        self.db_path = Path(db_path)
        self.sweep_id = sweep_id
        self.transport = transport
        self.on_event = on_event or (lambda event: None)
        self.latency_scale = latency_scale
        self.retry_failed = retry_failed
        self.totals = Totals()
        self._stop_reason: str | None = None
        self.cancelled: str | None = None
        """Why the run was asked to stop (``cancelled``, ``interrupted by SIGINT``), once asked."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[Any] | None = None
        self._lock = threading.Lock()
        self._closing = False
        self._sink_error: BaseException | None = None
        """An error the event sink raised on hearing of a write (see ``_then``): it ends the
        run as it would have inline."""
        self._journal: list[Event] = []
        """Events the database's log keeps, waiting for the next write (``_flush``)."""
        self._gate: asyncio.Event | None = None
        """Set while calls may start; cleared while the run is paused."""
        self.store_thread: StoreThread | None = None
        """The run's store (``engine.store_thread``) once it has started: its write queue."""
        self._status: RunnerStatus | None = None
        self._written: tuple[RunnerStatus | None, float] = (None, 0.0)
        self._control_seen = 0.0
        self.limiters: dict[str, AdaptiveLimiter] = {}
        self._endpoint_models: dict[str, tuple[str, ...]] = {}
        self.mode: str = DEFAULT_MODE
        """The sweep's execution mode, read from its stored definition when the run starts."""
        self._sweep: Any = None
        """The running sweep's ``[sweep]`` settings (budgets), once loaded."""
        self.key_rejected: str | None = None
        """Set when an endpoint refused a model's API key (401/403): the run stopped at once."""
        self._beat = 0.0
        self._pending_retries: dict[int, int] = {}
        """Retries made by calls still on the wire, per row (stored when the call ends)."""
        self._server: dict[str, ServerModel] = {}
        self._dialects_settled: dict[str, asyncio.Future[None]] = {}
        self._probe_calls = 0
        """Calls a probe's rung makes at once (rows speculate only beside a probe with room)."""
        """Per model whose schema dialect is probed: done once the probe has chosen it."""
        self._cache_writes: dict[str, int] = {}
        """Response-cache entries with a write (store or drop) queued and not yet run, by key:
        a lookup of one of these waits its turn behind them; any other runs ahead of the
        queued fold commits (``StoreThread.read``), as no queued write can change its answer."""

    def _emit(self, event: Event) -> None:
        if event.persisted():
            self._journal.append(event)
        self.on_event(event)

    # -- set-up ------------------------------------------------------------------------------

    def _load(self, sweep: SweepRecord | None
              ) -> tuple[SweepConfig, dict[str, Scenario], dict[str, ModelConfig]]:
        if sweep is None:
            raise ConfigError(f"{self.db_path}: no sweep with id '{self.sweep_id}'")
        definition = stored_definition(sweep.config)
        config, self.mode = definition.config, definition.mode
        scenarios = {name: load_scenario(name) for name in config.sweep.scenario_names()}
        models: dict[str, ModelConfig] = {}
        for entry in config.models:
            cfg = entry.resolve()
            if self.latency_scale is not None and cfg.faults is not None:
                cfg = cfg.model_copy(update={"latency_scale": self.latency_scale})
            models[entry.id] = cfg
        return config, scenarios, models

    # -- main loop ---------------------------------------------------------------------------

    async def run(self) -> str:
        """Run every unfinished row; return the sweep's final status ("done" or "stopped").

        After :meth:`cancel` the run returns ``stopped`` (``done`` if every row had finished
        anyway) rather than raising; a cancellation from anyone else propagates as usual.
        """
        with self._lock:
            self._loop = asyncio.get_running_loop()
            self._task = asyncio.current_task()
            if self.cancelled is not None:  # cancelled before it started: stop at once
                self._task.cancel()  # type: ignore[union-attr]
        # The store lives on a thread of its own (engine.store_thread): a write waiting on a
        # lock held elsewhere never stops the calls in flight.
        db = self.store_thread = StoreThread(self.db_path)
        with _collector_for_a_run():
            return await self._run_on(db)

    async def _run_on(self, db: StoreThread) -> str:
        try:
            await self._steady(db.start())
            runner = this_runner()
            await self._steady(db.call(lambda st: st.claim(self.sweep_id, runner)))
            try:
                return await self._run(db)
            except sqlite3.Error as exc:
                # A full disk, a read-only or corrupt file: committed folds stay; the sweep is
                # recorded stopped (when the database still takes that write).
                failure = exc
                await self._steady(db.call(lambda st: st.record_fault(self.sweep_id, failure),
                                           force=True))
                raise
            finally:
                with contextlib.suppress(sqlite3.Error):
                    await self._steady(self._flush(db, final=True))
                with contextlib.suppress(sqlite3.Error):
                    await self._steady(db.call(lambda st: st.release(self.sweep_id, runner),
                                               force=True))
        except sqlite3.Error as exc:
            raise database_error(self.db_path, exc) from None  # one line, as the Store says it
        finally:
            await db.close()

    async def _steady(self, step: Awaitable[_T]) -> _T:
        """Await a step of the run's own bookkeeping (opening the store, the claim, how the run
        ended) to its end: a cancellation of ours waits for it, anyone else's goes up."""
        task = asyncio.ensure_future(step)
        while True:
            try:
                return await asyncio.shield(task)
            except asyncio.CancelledError:
                if self.cancelled is None:
                    task.cancel()
                    raise
                asyncio.current_task().uncancel()  # type: ignore[union-attr]

    def cancel(self, reason: str = "cancelled") -> None:
        """Stop the run, from any thread: calls in flight are dropped, committed folds stay.

        It lands at the next call at the latest (the client yields before every attempt, so
        even an endpoint that answers at once lets it in). Only the first request counts: a
        second one (a second ctrl+c) changes nothing, so the run still records how it ended.
        """
        with self._lock:
            if self.cancelled is not None:
                return
            self.cancelled = reason
            loop, task = self._loop, self._task
        if loop is None or task is None or loop.is_closed():
            return
        try:
            here = asyncio.get_running_loop()
        except RuntimeError:
            here = None
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nothing to stop
            if here is loop:  # on the run's own thread (a signal handler): no round trip
                self._cancel_task()
                loop.call_soon_threadsafe(_nothing)  # wake the loop if it waits in select
            else:
                loop.call_soon_threadsafe(self._cancel_task)

    def _cancel_task(self) -> None:
        # Once the run is closing (every row stopped or finished) there is nothing to stop,
        # and a cancellation would only cut short the recording of how it ended.
        if self._task is not None and not self._closing:
            self._task.cancel()

    async def run_with_signals(self) -> str:
        """:meth:`run`, with SIGINT and SIGTERM cancelling it (the headless command's way).

        A signal never raises inside a call or a database write: the handler only marks the
        run cancelled (no row starts after that) and cancels its task, which stops at the
        next call; a second signal finds the run already stopping and changes nothing.
        """
        previous: dict[signal.Signals, Any] = {}
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                previous[sig] = signal.signal(sig, self._on_signal)
            except ValueError:  # not the main thread: signals stay as they are
                break
        try:
            return await self.run()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def _on_signal(self, signum: int, frame: object) -> None:
        self.cancel(f"interrupted by {signal.Signals(signum).name}")

    async def _run(self, db: StoreThread) -> str:
        clients: dict[str, Any] = {}
        try:
            await self._execute(db, clients)
        except asyncio.CancelledError:
            if self._sink_error is not None:  # the event sink failed: the run ends with it
                asyncio.current_task().uncancel()  # type: ignore[union-attr]
                raise self._sink_error from None
            if self.cancelled is None:  # not ours (an enclosing task's): let it go on up
                raise
            # Ours: calls in flight are lost; every committed fold stays and a rerun resumes
            # from it. The task carries on to record how the sweep ended.
            asyncio.current_task().uncancel()  # type: ignore[union-attr]
        finally:
            self._closing = True
            self._store_pending_retries(db)
            for client in clients.values():
                try:
                    await client.aclose()
                except asyncio.CancelledError:  # ours, landing after the last row: go on
                    if self.cancelled is None:
                        raise
                    asyncio.current_task().uncancel()  # type: ignore[union-attr]
        return await self._steady(self._finish(db))

    async def _execute(self, db: StoreThread, clients: dict[str, Any]) -> None:
        """Set up the clients (into ``clients``, which the caller closes) and run every row."""
        config, scenarios, models = self._load(await db.call(lambda st: st.sweep(self.sweep_id)))
        s = self._sweep = config.sweep
        # One limiter per provider endpoint (each simulated model is its own), fed by the
        # client's retry hook so a 429 shrinks the limit while the call is still backing off.
        limiters: dict[str, AdaptiveLimiter] = {}
        model_limiter: dict[str, AdaptiveLimiter] = {}
        for mid, cfg in models.items():
            # What the server says of its model (its slots size the limiter below).
            asking = make_client(cfg, transport=self.transport)
            try:
                self._server[mid] = await server_model(asking)
            finally:
                await asking.aclose()
        for mid, cfg in models.items():
            # A provider is one endpoint: the same gateway shares a limit across its models,
            # while two vLLM servers (or two simulated models) are limited separately.
            key = f"sim:{mid}" if cfg.provider == "sim" else f"{cfg.provider}:{cfg.base_url}"
            if key not in limiters:
                limit = s.rate_limit(cfg.provider)
                ceiling = endpoint_concurrency(cfg, s, self._server[mid])
                limiters[key] = AdaptiveLimiter(ceiling, limit.rpm,
                                                on_change=self._limit_hook(key))
            limiter = model_limiter[mid] = limiters[key]
            clients[mid] = make_client(cfg, transport=self.transport,
                                       on_retry=self._retry_hook(limiter, mid), gate=limiter,
                                       connections=limiter.ceiling)
            clients[mid].server_fingerprint = self._server[mid].fingerprint
        self.limiters = limiters
        # Every call in flight holds a socket: make room for them under the soft limit.
        raise_open_files(sum(lim.ceiling for lim in limiters.values()) + 64)
        for mid in models:
            key = next(k for k, lim in limiters.items() if lim is model_limiter[mid])
            self._endpoint_models[key] = (*self._endpoint_models.get(key, ()), mid)
        self._cache_on = {mid: cache_enabled(s.cache, cfg) for mid, cfg in models.items()}
        # Each chunk's token count and content class, once per scenario and model: the server's
        # own count where it has a tokenizer endpoint, else the estimator.
        inputs: dict[tuple[str, str], ScenarioInputs] = {}
        tokens: dict[str, dict[str, Any]] = {}
        for mid in models:
            for name, sc in scenarios.items():
                counted = await self._count_chunks(clients[mid], sc)
                inputs[(name, mid)] = ScenarioInputs.of(sc, counted)
                tokens.setdefault(mid, {})[name] = inputs[(name, mid)].token_record()
        # A probe takes a call's latency or two (10 s and more on a busy endpoint): it runs
        # beside the rows, which hold their first fold until it has chosen (``_fold_row``);
        # the pins are recorded once every probe has. Its calls take slots of the endpoint's
        # limit, or none at a large one (``_probe_beside``).
        loop = asyncio.get_running_loop()
        self._probe_calls = len(probe_arms(s.arms))
        self._dialects_settled = {mid: loop.create_future() for mid, cfg in models.items()
                                  if _probed(cfg, s.arms)}
        settling = asyncio.create_task(self._settle_dialects(
            db, models, clients, model_limiter, tokens, scenarios, inputs, s))

        rows = await db.call(lambda st: st.rows(self.sweep_id))
        self.totals.rows_total = len(rows)
        pending: list[RowRecord] = []
        # The last attempt each row may reach in this run: max_row_retries, or as many more
        # retries as that for an infrastructure failure --retry-failed queues again.
        self._last_attempt: dict[int, int] = {}
        for row in rows:
            if row.status == ROW_DONE:
                self.totals.rows_done += 1
            elif row.status == ROW_FAILED and row.retryable and self.retry_failed:
                self._last_attempt[row.id] = max(s.max_row_retries,
                                                 row.attempt + 1 + s.max_row_retries)
                pending.append(row)
            elif row.status == ROW_FAILED and not (row.retryable
                                                   and row.attempt < s.max_row_retries):
                self.totals.rows_failed += 1
            else:
                pending.append(row)
        units = execution_units(pending, self.mode)
        self.totals.initial_finished = self.totals.rows_done + self.totals.rows_failed
        self.totals.cost_usd = sum(r.cost_usd for r in rows)
        self.totals.unknown_cost_calls = sum(r.unpriced_calls for r in rows)
        if self.totals.unknown_cost_calls and s.budget_usd is not None:
            # What an unknown-cost call counts at, as before the run stopped: the dearest one.
            self.totals.highest_call_cost = await db.call(
                lambda st: st.highest_call_cost(self.sweep_id))
        self.totals.tokens = sum(r.prompt_tokens + r.completion_tokens for r in rows)
        # A request made before this run began (a cancel of an earlier run) is not for it.
        def started(st: Store) -> None:
            st.set_sweep_status(self.sweep_id, SweepStatus.RUNNING)
            st.clear_control(self.sweep_id)

        db.post(started)
        self._gate = asyncio.Event()
        self._gate.set()
        self._status = RunnerStatus(
            pid=os.getpid(), started_at=time.time(), updated_at=time.time(), finished_at=None,
            folds_at_start=sum(r.folds_done for r in rows),
            finished_at_start=self.totals.initial_finished, paused=False, endpoints=())
        self._emit(SweepStarted(sweep=self.sweep_id, rows=len(rows), pending=len(pending),
                                mode=self.mode, units=len(units)))
        queue: asyncio.Queue[list[RowRecord]] = asyncio.Queue()
        for unit in units:
            queue.put_nowait(unit)

        async def worker() -> None:
            # A worker owns one unit at a time and runs its rows in order: a whole model x
            # repeat sequence in sequential mode (so the design's carryover balance holds),
            # a single row otherwise.
            while not queue.empty():
                unit = queue.get_nowait()
                for row in unit:
                    if self.cancelled is not None or self._budget_exceeded(s):
                        return
                    await self._run_row_with_retries(
                        db, row, s, inputs[(row.scenario, row.model)], clients[row.model],
                        models[row.model], model_limiter[row.model])

        heartbeat = asyncio.create_task(self._heartbeat(db))
        count = min(s.concurrency, max(1, len(units)))
        # Back-pressure: a worker waits to make its next call while more than a few writes per
        # worker are queued, so the writes never trail the calls by more than that (a kill -9
        # loses at most those) and the loop stays free while it waits.
        db.limit = WRITES_PER_WORKER * count
        workers = [asyncio.create_task(worker()) for _ in range(count)] + [settling]
        try:
            await asyncio.gather(*workers)
        except Exception:
            # One worker failed outside its row (the database): stop the others before the
            # error goes up, so none keeps calling, or dies later unobserved.
            for task in workers:
                task.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            raise
        finally:
            heartbeat.cancel()

    async def _finish(self, db: StoreThread) -> str:
        """Record and announce how the run ended; return the status."""
        # What happened, not what was asked: a cancel that came after the last row finished
        # leaves a sweep that is done. Every write queued before is in by now.
        # No runner is left on the rows this one was running: they wait, planned, for the next.
        progress = await db.call(lambda st: (st.release_running_rows(self.sweep_id),
                                             st.progress(self.sweep_id))[1])
        status, reason = SweepStatus.DONE, None
        if progress[ROW_PLANNED] + progress[ROW_RUNNING]:
            status = SweepStatus.STOPPED
            reason = (self.key_rejected if self.key_rejected is not None
                      else f"{self.cancelled}; run again to resume" if self.cancelled is not None
                      else self._stop_reason or "rows left unfinished; run again to resume")
        elif progress[ROW_FAILED] and not progress[ROW_DONE]:
            status = SweepStatus.FAILED
            reason = (f"every row failed ({progress[ROW_FAILED]}); see `foldscope report` for "
                      "their errors")
        await db.call(lambda st: st.set_sweep_status(self.sweep_id, status, reason))
        self._emit(SweepFinished(sweep=self.sweep_id, status=status, reason=reason,
                                 rows_done=self.totals.rows_done,
                                 rows_failed=self.totals.rows_failed))
        return status

    # -- what watchers see, and what they ask ---------------------------------------------------

    async def _heartbeat(self, db: StoreThread) -> None:
        """While the run lasts: obey control requests and keep the status and log written."""
        while True:
            self._obey(db, await db.call(lambda st: st.control(self.sweep_id)))
            await self._flush(db)
            await asyncio.sleep(CONTROL_POLL_S)

    def _obey(self, db: StoreThread, request: Any) -> None:
        """Apply the newest control request made since the last one seen (pause, resume, cancel).

        Pausing stops new calls only (``_call`` waits at the gate): calls in flight finish and
        their folds commit.
        """
        if request is None or request.requested_at <= self._control_seen or self._gate is None:
            return
        self._control_seen = request.requested_at
        if request.request == "pause" and self._gate.is_set():
            self._gate.clear()
            reason = request.reason
            db.post(lambda st: st.set_sweep_status(self.sweep_id, SweepStatus.PAUSED, reason))
            self._emit(Paused(reason=request.reason))
        elif request.request == "resume" and not self._gate.is_set():
            self._gate.set()
            db.post(lambda st: st.set_sweep_status(self.sweep_id, SweepStatus.RUNNING))
            self._emit(Resumed(reason=request.reason))
        elif request.request == "cancel":
            self.cancel(request.reason)

    def runner_status(self, *, final: bool = False) -> RunnerStatus | None:
        """This run's status now: its limiters per endpoint, paused or not (None before it
        started)."""
        if self._status is None:
            return None
        endpoints = tuple(EndpointState(key, self._endpoint_models.get(key, ()), lim.in_flight,
                                        lim.limit, lim.ceiling)
                          for key, lim in self.limiters.items())
        paused = self._gate is not None and not self._gate.is_set()
        return dataclasses.replace(self._status, updated_at=time.time(), endpoints=endpoints,
                                   paused=paused and not final,
                                   finished_at=time.time() if final else None)

    async def _flush(self, db: StoreThread, *, final: bool = False) -> None:
        """Write the waiting log events and the status when it changed, at most once every
        ``STATUS_EVERY_S`` (always when the run ends), so watchers cost the run little."""
        now = time.monotonic()
        if not final and now - self._written[1] < STATUS_EVERY_S:
            return
        status = self.runner_status(final=final)
        events, self._journal = self._journal, []
        unchanged = (status is not None and self._written[0] is not None
                     and dataclasses.replace(status, updated_at=0.0)
                     == dataclasses.replace(self._written[0], updated_at=0.0))
        beat = status is not None and (not unchanged or final or now - self._beat >= HEARTBEAT_S)
        if beat:
            self._beat = now
        self._written = (status if status is not None else self._written[0], now)

        def write(store: Store) -> None:
            with store.atomic():
                store.add_events(self.sweep_id, events)
                if beat and status is not None:
                    store.set_runner_status(self.sweep_id, status)

        if final:  # how the run ended: written even after a failed write, and awaited
            await db.call(write, force=True)
        else:
            db.post(write)

    def _budget_exceeded(self, s: Any) -> bool:
        if self._stop_reason:
            return True
        t = self.totals
        # A call of unknown cost counts as the dearest call seen so far; with no known cost at
        # all the spend cannot be bounded, so the budget stops the sweep rather than guess low.
        bound = t.cost_usd + t.unknown_cost_calls * t.highest_call_cost
        unknown = (f" (counting {t.unknown_cost_calls} call{'s' * (t.unknown_cost_calls != 1)} "
                   f"of unknown cost at ${t.highest_call_cost:.4f} each)"
                   if t.unknown_cost_calls else "")
        stop = ("no new call started; rows in flight stop at their next call and wait, planned, "
                "for a run with budget left")
        if s.budget_usd is not None and t.unknown_cost_calls and t.highest_call_cost <= 0.0:
            self._stop_reason = (f"budget_usd ${s.budget_usd:.4f} cannot be held: the spend is "
                                 f"unknown ({t.unknown_cost_calls} call"
                                 f"{'s' * (t.unknown_cost_calls != 1)} reported no usable cost "
                                 f"and no prices are configured); stopped conservatively, {stop}")
        elif s.budget_usd is not None and bound >= s.budget_usd:
            self._stop_reason = (f"budget reached: ${bound:.4f} spent{unknown} of "
                                 f"${s.budget_usd:.4f}; {stop}")
        elif s.budget_tokens is not None and self.totals.tokens >= s.budget_tokens:
            self._stop_reason = (f"token budget reached: {self.totals.tokens} of "
                                 f"{s.budget_tokens}; {stop}")
        if self._stop_reason:
            self._emit(Stopped(reason=self._stop_reason))
        return self._stop_reason is not None

    async def _run_row_with_retries(self, db: StoreThread, row: RowRecord, s: Any,
                                    inputs: ScenarioInputs, client: Any, cfg: ModelConfig,
                                    limiter: AdaptiveLimiter) -> None:
        last_attempt = self._last_attempt.get(row.id, s.max_row_retries)
        while True:
            if row.status == ROW_FAILED:
                db.post(functools.partial(Store.reset_row_for_retry, row_id=row.id))
                self.totals.row_retries += 1
                self._emit(RowRetry(row=row.id, attempt=row.attempt + 1))
                # As reset_row_for_retry leaves it: a new attempt with nothing folded.
                row = dataclasses.replace(row, status=RowStatus.PLANNED, attempt=row.attempt + 1,
                                          next_chunk=0, folds_done=0, catch_up=False,
                                          parse_failures=0, length_stops=0)
            outcome = await self._run_row(db, row, inputs, client, cfg, limiter, s)
            if outcome == "retry" and (row.attempt >= last_attempt or self._budget_exceeded(s)
                                       or self.cancelled is not None):
                self.totals.rows_failed += 1  # out of attempts: the row stays failed
                return
            if outcome != "retry":
                return
            row = dataclasses.replace(row, status=ROW_FAILED)

    def _retry_hook(self, limiter: AdaptiveLimiter, model: str) -> Callable[[str, float], None]:
        def on_retry(kind: str, delay: float) -> None:
            # Counted as it happens, not when the call ends: a run stopped while a call backs
            # off still shows (and stores, see ``_store_pending_retries``) every retry it made.
            self.totals.call_retries += 1
            row = _CURRENT_ROW.get()
            if row is not None:
                self._pending_retries[row] = self._pending_retries.get(row, 0) + 1
            self._emit(Retry(fault=kind, delay_s=round(delay, 3), limit=limiter.limit,
                             model=model))
        return on_retry

    def limiters_for(self, model: str) -> int | None:
        """The in-flight ceiling of a model's endpoint (None before the run set it up)."""
        for key, mids in self._endpoint_models.items():
            if model in mids and key in self.limiters:
                return self.limiters[key].ceiling
        return None

    def _store_pending_retries(self, db: StoreThread) -> None:
        """Write the retries of calls that never ended (the run stopped under them) to their
        rows, so the rows' and the report's retry counts hold every retry made."""
        pending, self._pending_retries = self._pending_retries, {}
        for row_id, retries in pending.items():
            if retries:
                db.post(functools.partial(Store.add_call_usage, row_id=row_id, retries=retries,
                                          prompt_tokens=None, completion_tokens=None,
                                          cost_usd=None))

    def _limit_hook(self, endpoint: str) -> Callable[[int, int, str], None]:
        def on_change(previous: int, limit: int, cause: str) -> None:
            self._emit(LimitChanged(endpoint=endpoint, limit=limit, previous=previous,
                                    cause=cause))
        return on_change

    async def _settle_dialects(self, db: StoreThread, models: dict[str, ModelConfig],
                               clients: dict[str, Any], limiters: dict[str, AdaptiveLimiter],
                               tokens: dict[str, dict[str, Any]], scenarios: dict[str, Scenario],
                               inputs: dict[tuple[str, str], ScenarioInputs], s: Any) -> None:
        """Choose every model's schema dialect (probing where needed) and record the pins;
        each model's ``_dialects_settled`` is done as soon as its own dialect is chosen."""
        try:
            dialects = await self._choose_dialects(models, clients, s.arms, limiters)
        except BaseException as exc:
            for settled in self._dialects_settled.values():
                if settled.done():
                    continue
                if isinstance(exc, Exception):  # rows waiting on it stop with the run
                    settled.set_exception(exc)
                    settled.exception()  # retrieved: no warning when no row waited
                else:
                    settled.cancel()
            raise
        await self._record_pins(db, models, clients, dialects, tokens, scenarios, inputs, s)

    async def _choose_dialects(self, models: dict[str, ModelConfig], clients: dict[str, Any],
                               arm_ids: Sequence[str],
                               limiters: dict[str, AdaptiveLimiter] | None = None
                               ) -> dict[str, dict[str, Any]]:
        """Pick each model's schema dialect: its configured one, else the first rung of its
        provider's ladder that the probe finds accepted and in shape with the sweep's own
        largest schemas (simulated models speak the first rung). Returns what to record."""
        out: dict[str, dict[str, Any]] = {}
        arms = probe_arms(arm_ids)
        for mid, cfg in models.items():
            client = clients[mid]
            if not arms:
                out[mid] = {"dialect": None, "dialect_source": "no schema arm"}
            elif cfg.schema_dialect:
                out[mid] = {"dialect": cfg.schema_dialect, "dialect_source": "configured"}
            elif cfg.is_simulated:
                out[mid] = {"dialect": client.dialect, "dialect_source": "provider default"}
            else:
                # The probe walks the ladder on a client of its own: rows send meanwhile in
                # the dialect this one starts in, until it is told the one chosen.
                limiter = (limiters or {}).get(mid)
                beside = limiter is not None and _probe_beside(limiter, len(arms))
                gate = BesideLimit(limiter) if limiter is not None and beside else limiter
                prober = make_client(cfg, transport=self.transport,
                                     on_retry=self._retry_hook(limiter, mid) if limiter else None,
                                     gate=gate, connections=client.connections)
                prober.server_fingerprint = client.server_fingerprint
                try:
                    result = await probe_model(cfg, client=prober, arm_ids=arm_ids)
                finally:
                    await prober.aclose()
                chosen = result.dialect or cfg.dialect_entry.ladder[0]
                client.dialect = chosen
                out[mid] = {"dialect": chosen, "dialect_source": "probe",
                            "probe": {"verdict": result.verdict, "culprit": result.culprit,
                                      "ladder": result.ladder, "arms": result.arms,
                                      "detail": result.detail, "beside_limit": beside}}
            settled = self._dialects_settled.get(mid)
            if settled is not None and not settled.done():
                settled.set_result(None)
        return out

    async def _count_chunks(self, client: Any, scenario: Scenario) -> tuple[int, ...] | None:
        """The server's token count of every chunk (None: no tokenizer endpoint, or it failed)."""
        if client.cfg.is_simulated or client.cfg.dialect_entry.tokenizer == "none":
            return None
        counts: list[int] = []
        for chunk in scenario.chunks:
            n = await count_tokens(client, chunk.text)
            if n is None:
                return None
            counts.append(n)
        return tuple(counts)

    async def _record_pins(self, db: StoreThread, models: dict[str, ModelConfig],
                           clients: dict[str, Any],
                           dialects: dict[str, dict[str, Any]] | None = None,
                           tokens: dict[str, dict[str, Any]] | None = None,
                           scenarios: dict[str, Scenario] | None = None,
                           inputs: dict[tuple[str, str], ScenarioInputs] | None = None,
                           s: Any = None) -> None:
        """Record each model's pin with its endpoint's quantization, context, prices, parameters,
        the schema dialect the sweep uses, what the server reports of the model, and where
        token counts come from.

        A routing gateway without a pin, or a pin the gateway does not list, is recorded as a
        warning that the UI and the report show; so is an output budget or a prompt larger
        than the model's context. Neither stops the sweep.
        """
        recorded: dict[str, ModelPin] = {}
        for mid, cfg in models.items():
            server = self._server.get(mid) or ServerModel()
            entry: dict[str, Any] = {"provider": cfg.provider, "pin": cfg.pin,
                                     "warnings": model_warnings(cfg), "endpoint": None,
                                     **(dialects or {}).get(mid, {}),
                                     "server": server.as_dict(),
                                     "tokens": (tokens or {}).get(mid, {}),
                                     "concurrency": self.limiters_for(mid)}
            context = cfg.context_tokens or server.context_tokens
            entry["context_tokens"] = context
            if context and s is not None and scenarios and inputs:
                entry["warnings"] += context_warnings(
                    context, [get_arm(a) for a in s.arms],
                    [inputs[(name, mid)] for name in scenarios])
            if s is not None:
                entry["warnings"] += unhonoured_warnings(clients[mid], s.arms)
            probed = entry.get("probe")
            if isinstance(probed, dict) and probed.get("verdict") != "ok":
                entry["warnings"].append(
                    f"schema probe: {probed.get('verdict')} ({probed.get('detail')}); schema arms "
                    f"use {entry.get('dialect')}")
            if cfg.is_routing_gateway and cfg.pin:
                try:
                    endpoints = await clients[mid].list_endpoints()
                except ClientError as exc:
                    entry["warnings"].append(f"endpoint list unavailable: {exc}")
                else:
                    match = next((e for e in endpoints if e.matches_pin(cfg.pin)), None)
                    if match is None:
                        entry["warnings"].append(f"pin '{cfg.pin}' is not among the gateway's "
                                                 f"{len(endpoints)} endpoints")
                    else:
                        entry["endpoint"] = match.as_dict()
            recorded[mid] = ModelPin.model_validate(entry)  # the record readers get back
        db.post(lambda st: st.set_pins(self.sweep_id, {mid: pin.stored()
                                                       for mid, pin in recorded.items()}))
        for mid, pin in recorded.items():
            for warning in pin.warnings:
                self._emit(ModelWarning(model=mid, warning=warning))

    async def _call(self, db: StoreThread, client: Any, limiter: AdaptiveLimiter,
                    request: ChatRequest, model: str, repeat: int, what: str
                    ) -> tuple[ChatReply, bool]:
        """Make one call (``what``: "fold 3", "recall") through the limiter or from the cache.

        Returns:
            The reply and whether it came from the cache.

        Raises:
            _RowFailed: the call failed; infrastructure faults (retries exhausted) make the row
                retryable, a rejected request does not.
        """
        if self._gate is not None:
            await self._gate.wait()  # paused: no new call starts until the run is resumed
        await db.room()  # no new call while the writes of earlier ones queue past the bound
        if self.key_rejected is not None or (self._sweep is not None
                                             and self._budget_exceeded(self._sweep)):
            # A budget holds between calls, not only between rows (rows in flight would spend
            # past it by as many rows as run at once): the row stops here, its committed folds
            # kept, and waits (planned) for a run with budget left.
            raise _RowAbandoned()
        row_id = _CURRENT_ROW.get()
        try:
            reply = await self._call_once(db, client, limiter, request, model, repeat)
            # Its retries are stored with the fold or the answer it became.
            self._pending_retries.pop(row_id, None)  # type: ignore[arg-type]
            return reply
        except KeyRejected as exc:
            # Every call with this key would be refused: stop at once, the rows left planned
            # (a rerun after fixing the key runs them), not failed one by one.
            if self.key_rejected is None:
                self.key_rejected = str(exc)
                self._emit(Stopped(reason=str(exc)))
            self.cancel(str(exc))
            raise _RowAbandoned() from None
        except InfraError as exc:
            self._pending_retries.pop(row_id, None)  # type: ignore[arg-type]
            raise _RowFailed(f"{what}: {exc}", infra=True,
                             retries=max(0, exc.attempts - 1)) from None
        except ClientError as exc:
            self._pending_retries.pop(row_id, None)  # type: ignore[arg-type]
            raise _RowFailed(f"{what}: {exc}", infra=False,
                             retries=max(0, exc.attempts - 1)) from None

    async def _call_once(self, db: StoreThread, client: Any, limiter: AdaptiveLimiter,
                         request: ChatRequest, model: str, repeat: int) -> tuple[ChatReply, bool]:
        key = None
        digest = ""  # no cache, no record of the body's digest: it is not computed
        body = client.build_body(request)  # once: the digest and the call are of one body
        sent = _SENT_DIALECTS.get()
        if sent is not None and request.response_format is not None:
            sent.add(client.dialect)
        if self._cache_on.get(model):
            digest = body_digest(body)
            key = cache_key(client, request, repeat, digest)
            lookup = db.call if key in self._cache_writes else db.read
            hit = await lookup(lambda st: st.cached_reply(key))
            if hit is not None and cached_reply_problem(hit) is not None:
                # A fresh reply's rules: no replay.
                self._post_cache_write(db, key, lambda st: st.drop_cached_reply(key))
                hit = None
            if hit is not None:
                fields = {k: v for k, v in hit.items() if k in _REPLY_FIELDS}
                return ChatReply(**{"finish_reason": "unknown", "prompt_tokens": None,
                                    "completion_tokens": None, "simulated": False,
                                    "request_digest": "", **fields, "latency_s": 0.0,
                                    "cost_usd": 0.0, "attempts": 1, "retry_kinds": ()}), True
        # The limiter admits each attempt (its gate).
        reply = await client.send(body, row_attempt=request.row_attempt, digest=digest)
        clean = storable(reply.content)
        if clean is not reply.content:
            reply = dataclasses.replace(reply, content=clean)
        if key is not None and reply.finish_reason in ("stop", "length"):
            record = _reply_record(reply)
            self._post_cache_write(db, key, lambda st: st.cache_reply(key, model, record))
        return reply, False

    async def _dialect_changed(self, model: str, client: Any, sent: set[str]) -> bool:
        """Wait for the probe of ``model``'s schema dialect; True when it chose another than
        one of ``sent`` (those a row's calls went out in meanwhile)."""
        settled = self._dialects_settled.get(model)
        if settled is not None:
            await asyncio.shield(settled)  # others wait on it too: a cancel of ours is ours
        return any(dialect != client.dialect for dialect in sent)

    def _post_cache_write(self, db: StoreThread, key: str, op: Callable[[Store], None]) -> None:
        """Queue a write of the response cache's entry ``key``, counted pending until it ran."""
        writes = self._cache_writes
        writes[key] = writes.get(key, 0) + 1

        def ran() -> None:
            if writes[key] <= 1:
                del writes[key]
            else:
                writes[key] -= 1
        db.post(op, then=ran)

    async def _run_row(self, db: StoreThread, row: RowRecord, inputs: ScenarioInputs, client: Any,
                       cfg: ModelConfig, limiter: AdaptiveLimiter, s: Any) -> str:
        """Fold one row to its end and grade it. Returns "done", "failed" or "retry".

        Orchestration only: ``core.row`` plans each fold, applies its reply and grades the
        row; this method makes the calls and queues what comes back for the store's thread,
        which commits each fold in order while the row goes on with its next call.
        """
        arm = get_arm(row.arm)
        row_id = row.id
        db.post(lambda st: st.start_row(row_id))
        _CURRENT_ROW.set(row_id)
        self._emit(RowStarted(row=row.id, model=row.model, arm=row.arm, repeat=row.repeat,
                              resume_from=row.next_chunk))
        started = time.monotonic()
        chunks = len(inputs.scenario.chunks)
        seed = s.request_seed(cfg.seed, row.repeat)  # None: no seed is sent (the default)
        while True:
            try:
                outcome = await self._fold_row(db, row, inputs, client, cfg, limiter, arm,
                                               chunks, seed)
            except _DialectChanged:
                continue  # nothing of it was committed: the row starts over in the chosen one
            except _RowFailed as failure:
                # The same test _run_row_with_retries applies next, so the line never promises
                # a retry the run will not make.
                will_retry = (failure.infra and row.attempt < self._last_attempt.get(
                    row.id, s.max_row_retries) and self.cancelled is None
                    and not self._budget_exceeded(s))
                return self._fail(db, row, str(failure), failure.infra, failure.retries,
                                  started, will_retry=will_retry)
            except _RowAbandoned:
                return "abandoned"
            break
        reply, recall_cached, spec, cursor, carriers, tally = outcome

        earlier = carriers[:-1]  # the value's course
        result = grade_row(reply.content, cursor.carrier, inputs.scenario, tally,
                           carriers=earlier)
        db.post(functools.partial(
            Store.finish_row, row_id=row_id, result=result, prompt_tokens=reply.prompt_tokens,
            completion_tokens=reply.completion_tokens,
            est_prompt_tokens=spec.estimated_prompt_tokens, cost_usd=reply.cost_usd,
            retries=reply.attempts - 1, cached=recall_cached, answer_truncated=reply.truncated,
            answer_finish=finish_kind(reply.finish_reason, reply.completion_tokens,
                                      spec.max_tokens),
            wall_s=time.monotonic() - started))
        # Done as far as the run goes (its record is queued behind its folds): the next row of
        # its sequence starts after this.
        self.totals.rows_done += 1
        self._emit(RowDone(row=row.id, model=row.model, arm=row.arm, recall=result.recall,
                           valid=result.verdict.valid, reason=result.verdict.reason))
        return RowStatus.DONE

    async def _fold_row(self, db: StoreThread, row: RowRecord, inputs: ScenarioInputs,
                        client: Any, cfg: ModelConfig, limiter: AdaptiveLimiter, arm: Any,
                        chunks: int, seed: int | None) -> tuple[Any, ...]:
        """Fold a row from its last committed fold to the recall; return the recall's reply,
        whether it was cached, its call, the cursor, the carriers and the tally.

        While its model's schema dialect is still being probed (``_dialects_settled``) at an
        endpoint that takes more calls at once than the probe makes, a schema
        arm's row sends its first calls in the dialect the client starts in (the ladder's first
        rung) and holds its first fold until the probe has chosen: the same dialect, and the
        fold commits as it would have; another, and nothing of the row was committed, so it
        starts over in the chosen one (``_DialectChanged``; the calls made are counted in its
        usage). A refusal of such a call is judged once the probe has chosen too.
        """
        row_id = row.id
        settled = self._dialects_settled.get(row.model)
        sent: set[str] | None = None
        if settled is not None and not settled.done() and arm.representation == "schema":
            if limiter.ceiling > self._probe_calls:  # always beside a probe off the limit
                sent = set()  # the dialects this row's calls were sent in while the probe ran
            else:  # no room beside the probe: the row waits for its choice
                await asyncio.shield(settled)
        _SENT_DIALECTS.set(sent)
        last: FoldRecord | None = None
        histories: Sequence[FactHistory] = ()
        folds: Sequence[FoldRecord] = ()
        if row.folds_done or row.next_chunk:  # folds committed before: resume after the last
            last, histories, folds = await db.call(lambda st: (
                st.last_fold(row_id), st.fact_histories(row_id), st.folds(row_id)))
        written = histories  # the courses the table holds: each commit rewrites only changes
        if last is not None and len(histories) != len(inputs.scenario.facts):  # before schema 8
            histories = stored_timeline(folds, inputs.scenario.facts).facts
        cursor = FoldCursor.resume(last, histories)
        carriers = [f.carrier for f in folds]  # every committed fold's, as the row goes on
        tally = FoldTally.of_row(row)  # the stored counters, kept in step with each commit
        while not cursor.finished(chunks):
            step = next_fold(cursor, inputs, arm)
            request = ChatRequest(step.spec.messages, step.spec.max_tokens,
                                  step.spec.response_format, cfg.temperature, seed,
                                  row_attempt=row.attempt)
            # Folds are numbered from 1 in every message, as on every screen.
            try:
                reply, cached = await self._call(db, client, limiter, request, row.model,
                                                 row.repeat,
                                                 what=f"fold {cursor.fold_index + 1}")
            except _RowFailed:
                if sent is not None and await self._dialect_changed(row.model, client, sent):
                    raise _DialectChanged() from None
                raise
            cursor, fold = advance(cursor, step, inputs, arm, reply, cached=cached,
                                   created_at=time.time())
            restart = False
            if fold is not None and sent is not None:
                # The row's first fold: it commits once the probe has chosen the dialect.
                restart = await self._dialect_changed(row.model, client, sent)
                sent = None
                _SENT_DIALECTS.set(None)
            if fold is None or restart:  # nothing to carry (the chunk is caught up with the
                # next one), or a fold in a dialect the probe did not choose: only its usage
                db.post(functools.partial(
                    Store.add_call_usage, row_id=row_id, retries=reply.attempts - 1,
                    prompt_tokens=reply.prompt_tokens,
                    completion_tokens=reply.completion_tokens, cost_usd=reply.cost_usd))
                self._account(reply, request, cached)
                if restart:
                    raise _DialectChanged()
                continue
            db.post(functools.partial(_commit_fold, row_id, fold, cursor.histories, written),
                    then=self._then(self._committed, row_id, fold))
            written = cursor.histories
            carriers.append(fold.carrier)
            tally = tally.after(fold)
            self._account(reply, request, cached)
        spec = recall_call(cursor.carrier, [f.label for f in inputs.scenario.graded])
        request = ChatRequest(spec.messages, spec.max_tokens, None, cfg.temperature, seed,
                              row_attempt=row.attempt)
        reply, recall_cached = await self._call(db, client, limiter, request,
                                                row.model, row.repeat, what="recall")
        self._account(reply, request, recall_cached)
        return reply, recall_cached, spec, cursor, carriers, tally

    def _then(self, fn: Callable[..., None], *args: Any) -> Callable[[], None]:
        """What the store's thread hands back to the loop once a write is in: ``fn(*args)``,
        with an error the event sink raises ending the run (as it would have, inline)."""
        def told() -> None:
            try:
                fn(*args)
            except Exception as exc:  # noqa: BLE001 - raised again where the run ends
                if self._sink_error is None:
                    self._sink_error = exc
                    if self._task is not None and not self._closing:
                        self._task.cancel()
        return told

    def _committed(self, row_id: int, fold: FoldRecord) -> None:
        """A fold is in the database (told by the store's thread): count and announce it."""
        self.totals.folds += 1
        self._emit(FoldCommitted(row=row_id, fold=fold.fold_index,
                                 chunks=(fold.first_chunk, fold.last_chunk),
                                 carrier_chars=fold.carrier_chars, finish=fold.finish_reason,
                                 parse=fold.parse_status))

    def _fail(self, db: StoreThread, row: RowRecord, error: str, infra: bool, retries: int,
              started: float, *, will_retry: bool = False) -> str:
        verdict = failure_verdict(infra=infra, error=error)
        db.post(functools.partial(Store.fail_row, row_id=row.id, error=error, verdict=verdict,
                                  wall_s=time.monotonic() - started, call_retries=retries))
        self.totals.errors += 1
        self._emit(RowFailed(row=row.id, model=row.model, arm=row.arm, error=error,
                             retryable=verdict.retryable,
                             will_retry=verdict.retryable and will_retry))
        if verdict.retryable:
            return "retry"
        self.totals.rows_failed += 1
        return RowStatus.FAILED

    def _account(self, reply: ChatReply, request: ChatRequest | None = None,
                 cached: bool = False) -> None:
        t = self.totals  # retries are counted by the retry hook as they happen
        if reply.cost_usd is not None:
            t.cost_usd += reply.cost_usd
            t.highest_call_cost = max(t.highest_call_cost, reply.cost_usd)
        elif not cached:
            t.unknown_cost_calls += 1
        # Unknown token counts are counted at what the request could have used (its prompt's
        # characters, an upper bound on its tokens, and its output budget): a token budget
        # stops early rather than late.
        prompt = reply.prompt_tokens
        if prompt is None and request is not None and not cached:
            prompt = sum(len(str(m.get("content") or "")) for m in request.messages)
        completion = reply.completion_tokens
        if completion is None and request is not None and not cached:
            completion = request.max_tokens
        t.tokens += (prompt or 0) + (completion or 0)

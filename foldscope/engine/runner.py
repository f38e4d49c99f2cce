"""The sweep runner: executes a stored plan with asyncio, committing every fold as it completes."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from foldscope.core.arms import get_arm
from foldscope.core.carrier import PARSE_FAILURES, carry_forward
from foldscope.core.errors import ConfigError
from foldscope.core.fold import fold_call, recall_call
from foldscope.core.forensics import fact_status
from foldscope.core.grading import classify_answer, grade_answer, presence
from foldscope.core.scenario import Scenario
from foldscope.core.text import storable
from foldscope.core.tokens import dominant_class, estimate_tokens
from foldscope.core.validity import RowFacts, row_validity
from foldscope.engine.client.chat import ChatReply, ChatRequest
from foldscope.engine.client.errors import ClientError, InfraError
from foldscope.engine.connect import make_client
from foldscope.engine.limiter import AdaptiveLimiter
from foldscope.engine.loader import load_scenario
from foldscope.engine.models import ModelConfig, resolve_model
from foldscope.engine.models import warnings as model_warnings
from foldscope.engine.store import ROW_DONE, ROW_FAILED, Store, process_alive
from foldscope.engine.sweep import SweepConfig
from foldscope.engine.wire import body_digest

Event = dict[str, Any]
EventSink = Callable[[Event], None]


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
    initial_finished: int = 0
    started: float = field(default_factory=time.monotonic)


def execution_sequences(rows: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Group rows into their model x repeat sequences (per scenario), each in planned order.

    Sequences are ordered by their first row's position, so the sweep starts as planned.
    """
    groups: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
    for row in sorted(rows, key=lambda r: r["position"]):
        groups.setdefault((row["scenario"], row["model"], row["repeat"]), []).append(row)
    return list(groups.values())


def cache_enabled(setting: bool | None, cfg: ModelConfig) -> bool:
    """Whether a model's calls use the response cache.

    An explicit sweep setting wins. By default the cache replays temperature-0 calls to real
    providers only: above temperature 0 a replay would hide the sampling a repeat is for, and
    simulated models cost nothing to ask again.
    """
    if setting is not None:
        return setting
    return cfg.temperature == 0.0 and cfg.provider != "sim"


def cache_key(client: Any, request: ChatRequest, repeat: int) -> str:
    """The response-cache key: the pinned model, the digest of the exact body sent, the repeat.

    The body digest is the one the client computes for its own record (memoised there), so the
    key costs a lookup rather than another pass over a ~100k-character prompt.
    """
    cfg = client.cfg
    digest = body_digest(client.build_body(request))
    header = json.dumps([cfg.wire_model, cfg.provider, cfg.base_url, cfg.pin, repeat, digest])
    return hashlib.sha256(header.encode()).hexdigest()


def _reply_record(reply: ChatReply) -> dict[str, Any]:
    return {"content": reply.content, "finish_reason": reply.finish_reason,
            "prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens,
            "latency_s": reply.latency_s, "cost_usd": reply.cost_usd,
            "simulated": reply.simulated, "attempts": reply.attempts,
            "request_digest": reply.request_digest}


class _RowFailed(Exception):
    """A row ended without an answer; carries its validity reason and error text."""

    def __init__(self, error: str, infra: bool) -> None:
        super().__init__(error)
        self.infra = infra


class SweepRunner:
    """Run (or resume) one stored sweep.

    Args:
        db_path: the database holding the sweep's plan.
        sweep_id: which sweep.
        transport: an httpx transport to use for every model (tests); sims default to in-process.
        on_event: called with each event dict (row_started, fold, row_done, retry, stopped, done).
        latency_scale: multiplies simulated latency (0 = full speed).
    """

    def __init__(self, db_path: str | Path, sweep_id: str, *, transport: Any = None,
                 on_event: EventSink | None = None, latency_scale: float | None = None) -> None:
        self.db_path = Path(db_path)
        self.sweep_id = sweep_id
        self.transport = transport
        self.on_event = on_event or (lambda event: None)
        self.latency_scale = latency_scale
        self.totals = Totals()
        self._stop_reason: str | None = None

    def _emit(self, kind: str, **data: Any) -> None:
        self.on_event({"event": kind, "t": round(time.time(), 3), **data})

    # -- set-up ------------------------------------------------------------------------------

    def _load(self, store: Store) -> tuple[SweepConfig, dict[str, Scenario], dict[str, ModelConfig]]:
        sweep = store.sweep(self.sweep_id)
        if sweep is None:
            raise ConfigError(f"{self.db_path}: no sweep with id '{self.sweep_id}'")
        config = SweepConfig.model_validate(sweep["config"])
        scenarios = {name: load_scenario(name) for name in config.sweep.scenario_names()}
        models: dict[str, ModelConfig] = {}
        for entry in config.models:
            overrides = {k: v for k, v in entry.items() if k != "id"}
            cfg = resolve_model(entry["id"], overrides or None)
            if self.latency_scale is not None and cfg.faults is not None:
                cfg = cfg.model_copy(update={"latency_scale": self.latency_scale})
            models[entry["id"]] = cfg
        return config, scenarios, models

    # -- main loop ---------------------------------------------------------------------------

    async def run(self) -> str:
        """Run every unfinished row; return the sweep's final status ("done" or "stopped")."""
        self._loop = asyncio.get_running_loop()
        self._task = asyncio.current_task()
        store = Store(self.db_path)
        try:
            store.claim(self.sweep_id, os.getpid(), process_alive)
            try:
                return await self._run(store)
            finally:
                store.release(self.sweep_id, os.getpid())
        finally:
            store.close()

    def cancel(self) -> None:
        """Cancel the run from any thread: calls in flight are dropped, committed folds stay."""
        loop, task = getattr(self, "_loop", None), getattr(self, "_task", None)
        if loop is not None and task is not None and not loop.is_closed():
            loop.call_soon_threadsafe(task.cancel)

    async def _run(self, store: Store) -> str:
        config, scenarios, models = self._load(store)
        s = config.sweep
        # One limiter per provider (each simulated model is its own provider), fed by the
        # client's retry hook so a 429 shrinks the limit while the call is still backing off.
        limiters: dict[str, AdaptiveLimiter] = {}
        model_limiter: dict[str, AdaptiveLimiter] = {}
        clients = {}
        for mid, cfg in models.items():
            # A provider is one endpoint: the same gateway shares a limit across its models,
            # while two vLLM servers (or two simulated models) are limited separately.
            key = f"sim:{mid}" if cfg.provider == "sim" else f"{cfg.provider}:{cfg.base_url}"
            if key not in limiters:
                limit = s.rate_limit(cfg.provider)
                limiters[key] = AdaptiveLimiter(limit.concurrency or s.concurrency, limit.rpm)
            limiter = model_limiter[mid] = limiters[key]
            clients[mid] = make_client(cfg, transport=self.transport,
                                       on_retry=self._retry_hook(limiter),
                                       before_attempt=limiter.pace)
        self.limiters = limiters
        self._cache_on = {mid: cache_enabled(s.cache, cfg) for mid, cfg in models.items()}
        await self._record_pins(store, models, clients)
        # Scenarios carry each chunk's estimate from generation; a fold sums them.
        chunk_tokens = {name: [c.tokens for c in sc.chunks] for name, sc in scenarios.items()}
        self._chunk_class = {name: [dominant_class(c.text) for c in sc.chunks]
                             for name, sc in scenarios.items()}

        rows = store.rows(self.sweep_id)
        self.totals.rows_total = len(rows)
        pending: list[dict[str, Any]] = []
        for row in rows:
            if row["status"] == ROW_DONE:
                self.totals.rows_done += 1
            elif row["status"] == ROW_FAILED and not (row["retryable"]
                                                      and row["attempt"] < s.max_row_retries):
                self.totals.rows_failed += 1
            else:
                pending.append(row)
        sequences = execution_sequences(pending)
        self.totals.initial_finished = self.totals.rows_done + self.totals.rows_failed
        self.totals.cost_usd = sum(r["cost_usd"] for r in rows)
        self.totals.tokens = sum(r["prompt_tokens"] + r["completion_tokens"] for r in rows)
        store.set_sweep_status(self.sweep_id, "running")
        self._emit("sweep_started", sweep=self.sweep_id, rows=len(rows), pending=len(pending),
                   sequences=len(sequences))
        queue: asyncio.Queue[list[dict[str, Any]]] = asyncio.Queue()
        for sequence in sequences:
            queue.put_nowait(sequence)

        async def worker() -> None:
            # A worker owns one model x repeat sequence at a time and runs its rows in the
            # planned order, so the execution design (and any carryover it balances) holds.
            while not queue.empty():
                sequence = queue.get_nowait()
                for row in sequence:
                    if self._budget_exceeded(s):
                        return
                    await self._run_row_with_retries(
                        store, row, s, scenarios[row["scenario"]], chunk_tokens[row["scenario"]],
                        clients[row["model"]], models[row["model"]], model_limiter[row["model"]])

        try:
            workers = [asyncio.create_task(worker())
                       for _ in range(min(s.concurrency, max(1, len(sequences))))]
            await asyncio.gather(*workers)
        except asyncio.CancelledError:
            # Calls in flight are lost; every committed fold stays and a rerun resumes from it.
            store.set_sweep_status(self.sweep_id, "stopped", "cancelled; run again to resume")
            self._emit("sweep_finished", sweep=self.sweep_id, status="stopped",
                       reason="cancelled", rows_done=self.totals.rows_done,
                       rows_failed=self.totals.rows_failed)
            raise
        finally:
            for client in clients.values():
                await client.aclose()
        status = "stopped" if self._stop_reason else "done"
        store.set_sweep_status(self.sweep_id, status, self._stop_reason)
        self._emit("sweep_finished", sweep=self.sweep_id, status=status, reason=self._stop_reason,
                   rows_done=self.totals.rows_done, rows_failed=self.totals.rows_failed)
        return status

    def _budget_exceeded(self, s: Any) -> bool:
        if self._stop_reason:
            return True
        if s.budget_usd is not None and self.totals.cost_usd >= s.budget_usd:
            self._stop_reason = (f"budget reached: ${self.totals.cost_usd:.4f} spent of "
                                 f"${s.budget_usd:.4f}; no new rows started")
        elif s.budget_tokens is not None and self.totals.tokens >= s.budget_tokens:
            self._stop_reason = (f"token budget reached: {self.totals.tokens} of "
                                 f"{s.budget_tokens}; no new rows started")
        if self._stop_reason:
            self._emit("stopped", reason=self._stop_reason)
        return self._stop_reason is not None

    async def _run_row_with_retries(self, store: Store, row: dict[str, Any], s: Any,
                                    scenario: Scenario, chunk_tokens: list[int], client: Any,
                                    cfg: ModelConfig, limiter: AdaptiveLimiter) -> None:
        while True:
            if row["status"] == ROW_FAILED:
                store.reset_row_for_retry(row["id"])
                self.totals.row_retries += 1
                self._emit("row_retry", row=row["id"], attempt=row["attempt"] + 1)
                row = {**row, "status": "planned", "attempt": row["attempt"] + 1, "next_chunk": 0,
                       "folds_done": 0}
            outcome = await self._run_row(store, row, scenario, chunk_tokens, client, cfg, limiter, s)
            if outcome != "retry" or row["attempt"] >= s.max_row_retries or self._budget_exceeded(s):
                return
            row = {**row, "status": ROW_FAILED}

    def _retry_hook(self, limiter: AdaptiveLimiter) -> Callable[[str, float], None]:
        def on_retry(kind: str, delay: float) -> None:
            limiter.on_fault(kind)
            self._emit("retry", fault=kind, delay_s=round(delay, 3), limit=limiter.limit)
        return on_retry

    async def _record_pins(self, store: Store, models: dict[str, ModelConfig],
                           clients: dict[str, Any]) -> None:
        """Record each model's pin with its endpoint's quantization, context, prices, parameters.

        A routing gateway without a pin, or a pin the gateway does not list, is recorded as a
        warning that the UI and the report show; it does not stop the sweep.
        """
        pins: dict[str, Any] = {}
        for mid, cfg in models.items():
            entry: dict[str, Any] = {"provider": cfg.provider, "pin": cfg.pin,
                                     "warnings": model_warnings(cfg), "endpoint": None}
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
            pins[mid] = entry
        store.set_pins(self.sweep_id, pins)
        for mid, entry in pins.items():
            for warning in entry["warnings"]:
                self._emit("warning", model=mid, warning=warning)

    async def _call(self, store: Store, client: Any, limiter: AdaptiveLimiter,
                    request: ChatRequest, model: str, repeat: int, what: str
                    ) -> tuple[ChatReply, bool]:
        """Make one call (``what``: "fold 3", "recall") through the limiter or from the cache.

        Returns:
            The reply and whether it came from the cache.

        Raises:
            _RowFailed: the call failed; infrastructure faults (retries exhausted) make the row
                retryable, a rejected request does not.
        """
        try:
            return await self._call_once(store, client, limiter, request, model, repeat)
        except InfraError as exc:
            raise _RowFailed(f"{what}: {exc}", infra=True) from None
        except ClientError as exc:
            raise _RowFailed(f"{what}: {exc}", infra=False) from None

    async def _call_once(self, store: Store, client: Any, limiter: AdaptiveLimiter,
                         request: ChatRequest, model: str, repeat: int) -> tuple[ChatReply, bool]:
        key = None
        if self._cache_on.get(model):
            key = cache_key(client, request, repeat)
            hit = store.cached_reply(key)
            if hit is not None:
                return ChatReply(**{**hit, "latency_s": 0.0, "cost_usd": 0.0, "attempts": 1,
                                    "retry_kinds": ()}), True
        async with limiter:
            reply = await client.chat(request)
        limiter.record_success()
        clean = storable(reply.content)
        if clean is not reply.content:
            reply = dataclasses.replace(reply, content=clean)
        if key is not None and reply.finish_reason in ("stop", "length"):
            store.cache_reply(key, model, _reply_record(reply))
        return reply, False

    async def _run_row(self, store: Store, row: dict[str, Any], scenario: Scenario,
                       chunk_tokens: list[int], client: Any, cfg: ModelConfig,
                       limiter: AdaptiveLimiter, s: Any) -> str:
        """Fold one row to its end and grade it. Returns "done", "failed" or "retry"."""
        arm = get_arm(row["arm"])
        store.start_row(row["id"])
        self._emit("row_started", row=row["id"], model=row["model"], arm=row["arm"],
                   repeat=row["repeat"], resume_from=row["next_chunk"])
        started = time.monotonic()
        last = store.last_fold(row["id"])
        carrier = last["carrier"] if last else ""
        carrier_tokens = last["carrier_tokens_est"] if last else 0
        fold_index = last["fold_index"] + 1 if last else 0
        next_chunk = last["last_chunk"] + 1 if last else 0
        pending_from: int | None = None
        n = len(scenario.chunks)
        graded = scenario.graded
        # Each repeat gets its own seed (a model's own seed, if configured, offsets it), so
        # repeats are independent draws yet a rerun of the sweep is reproducible.
        seed = (cfg.seed or 0) + s.seed * 1_000_003 + row["repeat"]
        try:
            while next_chunk < n:
                first = pending_from if pending_from is not None else next_chunk
                texts = [scenario.chunks[i].text for i in range(first, next_chunk + 1)]
                spec = fold_call(arm, carrier, texts, first, n,
                                 chunk_tokens[first:next_chunk + 1], carrier_tokens)
                request = ChatRequest(spec.messages, spec.max_tokens, spec.response_format,
                                      cfg.temperature, seed)
                reply, cached = await self._call(store, client, limiter, request, row["model"],
                                                 row["repeat"], what=f"fold {fold_index}")
                if not reply.content.strip() and next_chunk + 1 < n:
                    # Nothing usable came back: this chunk is folded together with the next one,
                    # a catch-up that the row records (and that invalidates distributed rows).
                    pending_from = first
                    next_chunk += 1
                    continue
                catch_up = next_chunk > first
                result = carry_forward(arm, reply.content)
                status = fact_status(result.text, scenario.facts)
                result_tokens = estimate_tokens(result.text)
                fold = {
                    "fold_index": fold_index, "first_chunk": first, "last_chunk": next_chunk,
                    "catch_up": int(catch_up), "reply": reply.content, "carrier": result.text,
                    "carrier_chars": len(result.text),
                    "carrier_tokens_est": result_tokens,
                    "clipped_chars": result.clipped_chars,
                    "headings_carried": result.headings_carried,
                    "fill_fraction": result.fill_fraction, "parse_status": result.parse_status,
                    "recovery": result.recovery, "finish_reason": reply.finish_reason,
                    "prompt_tokens": reply.prompt_tokens,
                    "completion_tokens": reply.completion_tokens,
                    "est_prompt_tokens": spec.estimated_prompt_tokens,
                    "latency_s": round(reply.latency_s, 4), "cost_usd": reply.cost_usd,
                    "attempts": reply.attempts, "simulated": int(reply.simulated),
                    "fact_status_json": json.dumps(status, ensure_ascii=False),
                    "created_at": time.time(), "cached": int(cached),
                    "content_class": self._chunk_class[row["scenario"]][next_chunk],
                }
                store.commit_fold(row["id"], fold, next_chunk=next_chunk + 1, catch_up=catch_up,
                                  parse_failure=result.parse_status in PARSE_FAILURES,
                                  length_stop=reply.finish_reason == "length",
                                  call_retries=reply.attempts - 1)
                self._account(reply)
                self.totals.folds += 1
                self._emit("fold", row=row["id"], fold=fold_index, chunks=[first, next_chunk],
                           carrier_chars=len(result.text), finish=reply.finish_reason,
                           parse=result.parse_status)
                carrier, carrier_tokens = result.text, result_tokens
                fold_index += 1
                next_chunk += 1
                pending_from = None
            if pending_from is not None:
                raise _RowFailed("last fold returned nothing to carry", infra=False)

            spec = recall_call(carrier, [f.label for f in graded])
            request = ChatRequest(spec.messages, spec.max_tokens, None, cfg.temperature, seed)
            reply, recall_cached = await self._call(store, client, limiter, request,
                                                    row["model"], row["repeat"], what="recall")
            self._account(reply)
        except _RowFailed as failure:
            return self._fail(store, row, scenario, str(failure), failure.infra, started)

        grades = grade_answer(reply.content, graded)
        planted = [f.value for f in scenario.facts]
        carried = presence(carrier, graded)
        checks = [{
            "label": g.label, "expected": g.expected, "found": g.found, "correct": g.correct,
            "abstained": g.abstained, "unit_dropped": g.unit_dropped,
            "in_carrier": carried[g.label],
            "classification": classify_answer(g, carried[g.label], known_values=planted),
        } for g in grades]
        correct = sum(1 for g in grades if g.correct)
        fresh = store.row(row["id"]) or {}
        verdict = row_validity(RowFacts(
            status="done", infra_error=None, parse_failures=fresh.get("parse_failures", 0),
            length_stops=fresh.get("length_stops", 0), catch_up=bool(fresh.get("catch_up")),
            scenario_distributed=scenario.distributed, answered=True))
        store.finish_row(
            row["id"], answer=reply.content, checks=checks,
            recall=correct / len(grades) if grades else 0.0, correct=correct, graded=len(grades),
            valid=verdict.valid, reason=verdict.reason, retryable=verdict.retryable,
            answer_usage={"prompt_tokens": reply.prompt_tokens,
                          "completion_tokens": reply.completion_tokens,
                          "est_prompt_tokens": spec.estimated_prompt_tokens,
                          "cost_usd": reply.cost_usd, "retries": reply.attempts - 1,
                          "cached": recall_cached},
            wall_s=time.monotonic() - started)
        self.totals.rows_done += 1
        self._emit("row_done", row=row["id"], model=row["model"], arm=row["arm"],
                   recall=correct / len(grades) if grades else 0.0, valid=verdict.valid,
                   reason=verdict.reason)
        return "done"

    def _fail(self, store: Store, row: dict[str, Any], scenario: Scenario, error: str,
              infra: bool, started: float) -> str:
        verdict = row_validity(RowFacts(
            status="failed", infra_error=error if infra else None, parse_failures=0,
            length_stops=0, catch_up=False, scenario_distributed=scenario.distributed,
            answered=False))
        reason = verdict.reason if infra else "request_rejected"
        store.fail_row(row["id"], error=error, reason=reason, retryable=verdict.retryable and infra,
                       wall_s=time.monotonic() - started)
        self.totals.errors += 1
        self._emit("row_failed", row=row["id"], model=row["model"], arm=row["arm"], error=error,
                   retryable=infra)
        if infra:
            return "retry"
        self.totals.rows_failed += 1
        return "failed"

    def _account(self, reply: ChatReply) -> None:
        self.totals.call_retries += reply.attempts - 1
        self.totals.cost_usd += reply.cost_usd or 0.0
        self.totals.tokens += (reply.prompt_tokens or 0) + (reply.completion_tokens or 0)

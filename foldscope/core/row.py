"""A row as typed records: each fold's record, the fold-advance step (with catch-up), the graded
row and its one verdict.

A row folds a scenario forward one chunk at a time. ``next_fold`` says what the next call sends,
``advance`` turns the reply into the fold's record and the cursor for the call after it, and
``grade_row`` grades the recall answer against the final carrier and asks ``core.validity``
(only) for the row's verdict. None of it touches a store or a client, so a whole fold-through
runs in a test with canned replies; the runner only schedules, calls and commits.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Protocol

from foldscope.core.answers import classify_fact, course_for
from foldscope.core.arms import Arm
from foldscope.core.carrier import PARSE_FAILURES, carry_forward
from foldscope.core.fold import CallSpec, fold_call
from foldscope.core.forensics import (
    MISSING,
    MUTATED,
    NOT_YET,
    PRESENT,
    FactAtFold,
    FactHistory,
    FactState,
    FoldFacts,
    PlantedFact,
    Timeline,
    advance_histories,
    carrier_states,
    start_histories,
)
from foldscope.core.grading import AnswerMarkers, grade_answer
from foldscope.core.scenario import Scenario
from foldscope.core.status import FINISHED_ROW_STATUSES, RowStatus
from foldscope.core.tokens import dominant_class, estimate_tokens
from foldscope.core.validity import (
    FAILED,
    INCOMPLETE,
    REASONS,
    RowFacts,
    Validity,
    row_validity,
)


class Reply(Protocol):
    """What a fold needs from a model's reply (``engine.client.ChatReply`` is one)."""

    @property
    def content(self) -> str: ...
    @property
    def finish_reason(self) -> str: ...
    @property
    def prompt_tokens(self) -> int | None: ...
    @property
    def completion_tokens(self) -> int | None: ...
    @property
    def latency_s(self) -> float: ...
    @property
    def cost_usd(self) -> float | None: ...
    @property
    def attempts(self) -> int: ...
    @property
    def simulated(self) -> bool: ...
    @property
    def truncated(self) -> bool: ...


@dataclass(frozen=True)
class FoldRecord:
    """One committed fold, exactly as stored: the store's fold columns are these fields."""

    fold_index: int
    first_chunk: int
    last_chunk: int
    catch_up: bool
    """The fold took several chunks at once (an earlier reply had nothing to carry)."""
    reply: str
    carrier: str
    """The carrier the next fold receives."""
    carrier_chars: int
    carrier_tokens_est: int
    clipped_chars: int
    headings_carried: int
    fill_fraction: float | None
    parse_status: str
    recovery: str
    finish_reason: str
    prompt_tokens: int | None
    completion_tokens: int | None
    est_prompt_tokens: int
    latency_s: float
    cost_usd: float | None
    attempts: int
    simulated: bool
    fact_status: Mapping[str, str]
    """Each planted fact's state in the carrier, by label: ``not_yet``, ``present``, ``mutated``
    or ``missing`` (``core.forensics.carrier_states``; folds stored before schema 8 have no
    ``not_yet``: :func:`fold_facts_of` derives it from the chunks)."""
    created_at: float
    cached: bool
    content_class: str | None
    """The dominant character class of the (last) chunk folded, for the estimator report."""
    reply_truncated: bool = False
    """The reply was longer than the model's ``max_reply_bytes`` and was cut there."""
    fact_mutations: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    """For each ``mutated`` fact, by label: the altered text the carrier holds and the named
    edit (``core.nearmiss``)."""

    @property
    def parse_failure(self) -> bool:
        """The reply did not parse against the arm's schema (arm behaviour, recorded only)."""
        return self.parse_status in PARSE_FAILURES

    @property
    def length_stop(self) -> bool:
        """The reply stopped on its output budget."""
        return self.finish_reason == "length"


FOLD_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(FoldRecord))
"""The fold record's fields in order (the store's fold columns derive from them)."""


@dataclass(frozen=True)
class ScenarioInputs:
    """What every row of a scenario folds, estimated once: chunk tokens and content classes."""

    scenario: Scenario
    chunk_tokens: tuple[int, ...]
    chunk_classes: tuple[str, ...]
    token_scale: float = 1.0
    """The model's tokens per estimated token over the scenario's chunks (1: not measured)."""
    token_source: str = "estimator"
    """Where ``chunk_tokens`` come from: ``server`` (its tokenizer endpoint) or ``estimator``."""

    @classmethod
    def of(cls, scenario: Scenario, counted: Sequence[int] | None = None) -> ScenarioInputs:
        """Precompute a scenario's per-chunk token counts and content classes.

        Args:
            scenario: the scenario.
            counted: the model's own token count of each chunk (its server's tokenizer), if
                known; else the chunks' estimates are used.
        """
        classes = tuple(dominant_class(c.text) for c in scenario.chunks)
        estimated = tuple(c.tokens for c in scenario.chunks)
        if counted is None or len(counted) != len(estimated) or not sum(estimated):
            return cls(scenario, estimated, classes)
        scale = sum(counted) / sum(estimated)
        return cls(scenario, tuple(int(n) for n in counted), classes, round(scale, 4), "server")

    def token_record(self) -> dict[str, object]:
        """How this scenario's tokens were counted for one model (recorded with the pin)."""
        return {"source": self.token_source, "scale": self.token_scale,
                "chunk_tokens": list(self.chunk_tokens)}


@dataclass(frozen=True)
class FoldCursor:
    """Where a row stands between two calls."""

    carrier: str = ""
    carrier_tokens: int = 0
    fold_index: int = 0
    next_chunk: int = 0
    """The last chunk the next fold takes."""
    pending_from: int | None = None
    """The first chunk still waiting to be folded when a reply had nothing to carry."""
    histories: tuple[FactHistory, ...] = ()
    """Each planted fact's course so far (empty before the first fold: every fact not_yet)."""

    @classmethod
    def resume(cls, last: FoldRecord | None,
               histories: Sequence[FactHistory] = ()) -> FoldCursor:
        """The cursor after a row's last committed fold (the start, when there is none).

        Args:
            last: the row's last committed fold, or None.
            histories: the facts' courses after that fold, as stored.
        """
        if last is None:
            return cls()
        return cls(last.carrier, last.carrier_tokens_est, last.fold_index + 1, last.last_chunk + 1,
                    histories=tuple(histories))

    def finished(self, chunks: int) -> bool:
        """Every chunk has been folded: the recall turn is next."""
        return self.next_chunk >= chunks


SERVER_CUT = "server_cut"
"""A fold's finish when the server stopped it on length below the output budget asked for (it
capped ``max_tokens`` to the context left): not the arm's own length stop."""


def finish_kind(finish: str, completion_tokens: int | None, requested: int) -> str:
    """The finish reason to record: ``server_cut`` for a length stop below the budget asked for.

    Args:
        finish: the reply's finish reason.
        completion_tokens: the tokens the server reports it wrote (None: not reported).
        requested: the output budget the request asked for.
    """
    if finish == "length" and completion_tokens is not None and completion_tokens < requested:
        return SERVER_CUT
    return finish


def context_warnings(context: int, arms: Sequence[Arm], inputs: Sequence[ScenarioInputs]
                     ) -> list[str]:
    """Warnings for budgets and prompts a model's context cannot hold.

    Args:
        context: the model's context in tokens (configured ``context_tokens`` or the server's).
        arms: the sweep's arms.
        inputs: the scenarios as this model counts them.

    Returns:
        One line per arm whose output budget alone, or whose largest fold (carry cap plus the
        largest chunk plus the budget), exceeds the context.
    """
    out: list[str] = []
    largest = max((max(i.chunk_tokens, default=0) for i in inputs), default=0)
    for arm in arms:
        if arm.output_budget >= context:
            out.append(f"arm {arm.id}: output budget {arm.output_budget:,} tokens exceeds the "
                       f"context of {context:,}; the server will cut replies short")
            continue
        need = arm.carry_cap + largest + arm.output_budget
        if need > context:
            out.append(f"arm {arm.id}: a fold may need ~{need:,} tokens (carry cap "
                       f"{arm.carry_cap:,} + largest chunk {largest:,} + output budget "
                       f"{arm.output_budget:,}), more than the context of {context:,}")
    return out


@dataclass(frozen=True)
class FoldStep:
    """One planned fold: the chunks it takes and the call that sends them."""

    first_chunk: int
    last_chunk: int
    spec: CallSpec


def next_fold(cursor: FoldCursor, inputs: ScenarioInputs, arm: Arm) -> FoldStep:
    """Plan the fold at the cursor: the previous carrier plus every chunk still pending."""
    sc = inputs.scenario
    first = cursor.pending_from if cursor.pending_from is not None else cursor.next_chunk
    last = cursor.next_chunk
    spec = fold_call(arm, cursor.carrier, [sc.chunks[i].text for i in range(first, last + 1)],
                     first, len(sc.chunks), inputs.chunk_tokens[first:last + 1],
                     cursor.carrier_tokens)
    return FoldStep(first, last, spec)


def advance(cursor: FoldCursor, step: FoldStep, inputs: ScenarioInputs, arm: Arm, reply: Reply,
            *, cached: bool, created_at: float) -> tuple[FoldCursor, FoldRecord | None]:
    """Apply one fold's reply: the record to commit and the cursor for the next call.

    The catch-up rule: a reply with nothing in it (whitespace only) before the last chunk is
    not carried; its chunks are folded together with the next one, and that fold is marked
    ``catch_up`` (which ``core.validity`` rules out of distributed scenarios). On the last chunk
    an empty reply is committed as it is: there is no later fold to catch up in.

    Returns:
        The new cursor and the record to commit, or ``None`` when the chunk waits for catch-up.
    """
    sc = inputs.scenario
    if not reply.content.strip() and step.last_chunk + 1 < len(sc.chunks):
        return replace(cursor, pending_from=step.first_chunk, next_chunk=step.last_chunk + 1), None
    result = carry_forward(arm, reply.content, inputs.token_scale)
    tokens = result.tokens if result.tokens >= 0 else estimate_tokens(result.text)
    states = carrier_states(result.text, sc.facts, step.last_chunk)
    histories = cursor.histories
    if len(histories) != len(sc.facts):  # the first fold (or a row stored before timelines)
        histories = start_histories(sc.facts)
    histories = advance_histories(histories, FoldFacts(cursor.fold_index, step.first_chunk,
                                                       step.last_chunk, states))
    record = FoldRecord(
        fold_index=cursor.fold_index, first_chunk=step.first_chunk, last_chunk=step.last_chunk,
        catch_up=step.last_chunk > step.first_chunk, reply=reply.content, carrier=result.text,
        carrier_chars=len(result.text), carrier_tokens_est=tokens,
        clipped_chars=result.clipped_chars, headings_carried=result.headings_carried,
        fill_fraction=result.fill_fraction, parse_status=result.parse_status,
        recovery=result.recovery,
        finish_reason=finish_kind(reply.finish_reason, reply.completion_tokens,
                                  step.spec.max_tokens),
        prompt_tokens=reply.prompt_tokens, completion_tokens=reply.completion_tokens,
        est_prompt_tokens=step.spec.estimated_prompt_tokens,
        latency_s=round(reply.latency_s, 4), cost_usd=reply.cost_usd, attempts=reply.attempts,
        simulated=bool(reply.simulated), fact_status={s.label: s.state for s in states},
        created_at=created_at, cached=cached,
        content_class=inputs.chunk_classes[step.last_chunk], reply_truncated=reply.truncated,
        fact_mutations=mutations_of(states))
    return FoldCursor(result.text, tokens, cursor.fold_index + 1, step.last_chunk + 1,
                      histories=histories), record


def mutations_of(states: Iterable[FactAtFold]) -> dict[str, tuple[str, str]]:
    """The mutated facts of one fold as stored: label -> (altered text, named edit)."""
    return {s.label: (s.altered or "", s.rule or "") for s in states if s.state == MUTATED}


def fold_facts_of(record: FoldRecord, facts: Sequence[PlantedFact]) -> FoldFacts:
    """One stored fold's timeline entry, read from its stored states (no carrier re-read)."""
    return stored_fold_facts(record.fold_index, record.first_chunk, record.last_chunk,
                             record.fact_status, record.fact_mutations, facts)


_STORED_STATES: dict[str, FactState] = {PRESENT: PRESENT, MUTATED: MUTATED, MISSING: MISSING}
"""A stored per-fold status read back as a state (anything else reads ``missing``)."""


def stored_fold_facts(fold_index: int, first_chunk: int, last_chunk: int,
                      status: Mapping[str, str], mutations: Mapping[str, tuple[str, str]],
                      facts: Sequence[PlantedFact]) -> FoldFacts:
    """A fold's timeline entry from its stored columns.

    A fact whose chunk the fold had not reached is ``not_yet`` whatever was stored (folds
    written before schema 8 recorded it as ``missing``); a fact the fold did not record (a
    scenario that gained facts) reads ``missing``.
    """
    out: list[FactAtFold] = []
    for fact in facts:
        if fact.chunk > last_chunk:
            out.append(FactAtFold(fact.label, fact.value, NOT_YET))
            continue
        state = _STORED_STATES.get(status.get(fact.label, MISSING), MISSING)
        altered, rule = mutations.get(fact.label, ("", ""))
        if state == MUTATED:
            out.append(FactAtFold(fact.label, fact.value, MUTATED, altered or None, rule or None))
        else:
            out.append(FactAtFold(fact.label, fact.value, state))
    return FoldFacts(fold_index, first_chunk, last_chunk, tuple(out))


def recompute_fold(record: FoldRecord, facts: Sequence[PlantedFact]) -> FoldRecord:
    """A stored fold with its fact states recomputed from its carrier by today's rules."""
    states = carrier_states(record.carrier, facts, record.last_chunk)
    return replace(record, fact_status={s.label: s.state for s in states},
                   fact_mutations=mutations_of(states))


def stored_timeline(records: Sequence[FoldRecord], facts: Sequence[PlantedFact],
                    histories: Sequence[FactHistory] = ()) -> Timeline:
    """A row's fact timeline from its stored folds.

    Args:
        records: the row's folds in order.
        facts: the scenario's planted facts (graded and decoys), in the order to show.
        histories: the facts' stored courses; used when they cover every fact (same labels),
            else derived from the folds' stored states (``advance_histories``).

    Returns:
        The timeline, its facts in the order of ``facts``.
    """
    entries = tuple(fold_facts_of(r, facts) for r in records)
    by_label = {h.label: h for h in histories}
    if histories and all(f.label in by_label for f in facts):
        return Timeline(entries, tuple(by_label[f.label] for f in facts))
    courses = start_histories(facts)
    for entry in entries:
        courses = advance_histories(courses, entry)
    return Timeline(entries, courses)


@dataclass(frozen=True)
class FoldTally:
    """What a row's folds add up to, as far as its verdict is concerned."""

    folds: int = 0
    catch_up: bool = False
    parse_failures: int = 0
    length_stops: int = 0

    @classmethod
    def of(cls, folds: Sequence[FoldRecord]) -> FoldTally:
        """Tally a row's fold records."""
        return cls(len(folds), any(f.catch_up for f in folds),
                   sum(f.parse_failure for f in folds), sum(f.length_stop for f in folds))

    @classmethod
    def of_row(cls, row: RowRecord) -> FoldTally:
        """The tally a stored row keeps as its folds are committed."""
        return cls(row.folds_done, row.catch_up, row.parse_failures, row.length_stops)

    def after(self, fold: FoldRecord) -> FoldTally:
        """The tally with one more fold: what the stored row's counters become when the fold is
        committed (``of_row`` of the row after the commit), without reading it back."""
        return FoldTally(self.folds + 1, self.catch_up or fold.catch_up,
                         self.parse_failures + fold.parse_failure,
                         self.length_stops + fold.length_stop)


@dataclass(frozen=True, slots=True)
class Check:
    """One graded fact of a row: the answer found for its label and how it was judged."""

    label: str
    expected: str
    found: str | None
    correct: bool
    abstained: bool
    unit_dropped: bool
    in_carrier: bool | None
    """Whether the final carrier held the value (None when graded without a carrier)."""
    classification: str
    """The answer class (``core.answers.classify_fact``), judged by ``carrier_state``."""
    carrier_state: str
    """The final carrier's state of the fact: ``present``, ``mutated`` or ``missing`` (also
    when graded without a carrier: the fact then counts as lost)."""
    class_detail: str | None
    """For ``read_failure``: what the answer gave instead (``core.answers.READ_FAILURE_KINDS``)."""


@dataclass(frozen=True, slots=True)
class StoredCheck(Check):
    """A check as stored, with its id, its row and a person's fabrication flag."""

    id: int
    row_id: int
    flagged: bool


def grade_checks(answer: str, graded: Sequence[PlantedFact], *, carrier: str | None = None,
                 rivals: Iterable[str] = (), markers: AnswerMarkers | None = None,
                 carriers: Sequence[str] = ()) -> tuple[Check, ...]:
    """Grade an answer's every graded fact, classing each by the final carrier's state of it.

    Args:
        answer: the recall answer text.
        graded: the facts asked (a scenario's graded facts: label, value, chunk, kind).
        carrier: the carrier the recall turn read, or None when there is none (``foldscope
            grade`` on a bare answer): every fact then counts as lost, so a wrong value reads
            ``fabricated`` and an abstention ``honest_abstention``.
        rivals: every planted value of the scenario, decoys too: competing candidates for the
            one-value-per-label rule (``core.grading.judge_value``).
        markers: the answer markers (default: the shipped ones).
        carriers: the row's carriers before the final one, fold 0 first: a wrong value that
            repeats a form the value took in any of them is ``carried_corruption``
            (``core.forensics.value_course``).
    """
    grades = grade_answer(answer, graded, rivals=rivals, markers=markers)
    every = [*carriers, carrier] if carrier is not None else list(carriers)
    if carrier is None:
        states: list[tuple[str, str | None]] = [(MISSING, None)] * len(grades)
    else:
        last = max((f.chunk for f in graded), default=0)
        states = [(s.state, s.altered) for s in carrier_states(carrier, graded, last)]
    checks = []
    for g, fact, (state, altered) in zip(grades, graded, states, strict=True):
        course = course_for(g, every, fact.kind) if state != PRESENT else ()
        verdict = classify_fact(g, state, altered, fact.kind, course)
        checks.append(Check(
            label=g.label, expected=g.expected, found=g.found, correct=g.correct,
            abstained=g.abstained, unit_dropped=g.unit_dropped,
            in_carrier=state == PRESENT if carrier is not None else None,
            classification=verdict.answer_class, carrier_state=verdict.carrier_state,
            class_detail=verdict.detail))
    return tuple(checks)


@dataclass(frozen=True)
class RowResult:
    """A graded row: its answer, per-fact checks, recall and verdict."""

    answer: str
    checks: tuple[Check, ...]
    verdict: Validity

    @property
    def correct(self) -> int:
        """Graded facts answered correctly."""
        return sum(c.correct for c in self.checks)

    @property
    def graded(self) -> int:
        """Graded facts asked."""
        return len(self.checks)

    @property
    def recall(self) -> float:
        """Fraction of graded facts answered correctly (0.0 when none was asked)."""
        return self.correct / self.graded if self.checks else 0.0


def grade_row(answer: str, carrier: str, scenario: Scenario, tally: FoldTally,
              carriers: Sequence[str] = ()) -> RowResult:
    """Grade a finished row; its verdict comes from ``core.validity`` alone.

    Args:
        answer: the recall answer.
        carrier: the final carrier (what the recall turn read).
        scenario: the row's scenario.
        tally: what the row's folds added up to (catch-up, parse failures, length stops).
        carriers: the carriers before the final one, fold 0 first (the value's course).
    """
    verdict = row_validity(RowFacts(
        status=RowStatus.DONE, parse_failures=tally.parse_failures, length_stops=tally.length_stops,
        catch_up=tally.catch_up, scenario_distributed=scenario.distributed, answered=True))
    checks = grade_checks(answer, scenario.graded, carrier=carrier,
                          rivals=[f.value for f in scenario.facts], carriers=carriers)
    return RowResult(answer, checks, verdict)


def failure_verdict(*, infra: bool, error: str) -> Validity:
    """The verdict on a row that ended without an answer.

    Args:
        infra: the harness's infrastructure failed (transport, timeout, retries exhausted):
            retryable. Otherwise the endpoint rejected the request (or the row could not go
            on): not retryable.
        error: what happened, as recorded on the row.
    """
    return row_validity(RowFacts(status=RowStatus.FAILED, infra_error=error if infra else None,
                                 rejected=not infra))


@dataclass(frozen=True, slots=True)
class RowRecord:
    """One stored row as readers see it (without its answer text), with its stored verdict."""

    id: int
    position: int
    scenario: str
    model: str
    arm: str
    repeat: int
    status: str
    attempt: int = 0
    infra_retries: int = 0
    call_retries: int = 0
    next_chunk: int = 0
    folds_done: int = 0
    catch_up: bool = False
    parse_failures: int = 0
    length_stops: int = 0
    infra_error: str | None = None
    """The error that ended a failed row (infrastructure or a rejected request)."""
    recall: float | None = None
    correct: int | None = None
    graded: int | None = None
    valid: bool | None = None
    validity_reason: str | None = None
    retryable: bool = False
    simulated: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0
    est_prompt_tokens: int = 0
    cost_usd: float = 0.0
    wall_s: float = 0.0
    cached_calls: int = 0
    answer_truncated: bool = False
    """The recall answer was longer than the model's ``max_reply_bytes`` and was cut there."""
    answer_finish: str | None = None
    """The recall answer's finish reason (``stop``, ``length``, ``server_cut``; None: stored
    before it was kept)."""
    unpriced_calls: int = 0
    """Calls whose cost the provider did not report: the row's cost is then unknown."""
    seq: int = 0
    """The store's change sequence when this row last changed (readers poll past it)."""
    answer: str | None = field(default=None, compare=False)
    """The recall answer, when the reader asked for it."""

    @property
    def cost_known(self) -> bool:
        """Every call of the row was priced (by the provider or the model's prices)."""
        return self.unpriced_calls == 0

    @property
    def finished(self) -> bool:
        """Done or failed."""
        return self.status in FINISHED_ROW_STATUSES

    @property
    def verdict(self) -> Validity:
        """The verdict stored with the row (``incomplete`` while it is planned or running)."""
        return stored_verdict(self.status, self.valid, self.validity_reason, self.retryable)


ROW_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(RowRecord) if f.name != "answer")
"""The row record's stored fields (the answer is read only on request)."""


def stored_verdict(status: str, valid: bool | None, reason: str | None,
                   retryable: bool) -> Validity:
    """Read a verdict back from a stored row.

    Rows still planned or running are ``incomplete``. A finished row's verdict is the one the
    runner stored from ``core.validity``; a reason this version does not know (a database
    written by another build) reads as ``failed`` and invalid, never as valid.
    """
    if status not in FINISHED_ROW_STATUSES:
        return Validity(False, INCOMPLETE, False)
    if reason not in REASONS or valid is None:
        return Validity(False, FAILED, False)
    return Validity(bool(valid), reason, bool(retryable))


@dataclass(frozen=True, slots=True)
class PlannedRow:
    """One row of a sweep's plan as it is stored before any call (``Store.create_sweep``)."""

    position: int
    """Its place in the execution order."""
    scenario: str
    model: str
    arm: str
    repeat: int
    prompt_digest: str
    """The arm's prompt, by digest (``core.arms``)."""
    declared_ceilings: dict[str, int]
    output_budget: int
    carry_cap: int

"""Deterministic transcript generation for scenarios: filler tool-call rounds with planted facts.

The text follows a contract shared with the simulated models (which see only request bodies):

* Every turn starts with a role marker line. ``[assistant] <text>`` is assistant prose or a tool
  call (``[assistant] calling bash: <command>``); ``[tool result: <tool>]`` is followed by the tool
  output lines; ``[operator] <text>`` is a human operator speaking. Turns are separated by one
  blank line and never contain a blank line themselves.
* Filler log lines start with an ISO timestamp and an upper-case level (see ``LOG_LINE_RE``).
  Other filler output lines (tables, ``(12 rows)``) never contain ``": "``.
* A planted fact is stated on its own line: ``<label>: <value>`` inside a tool output, or
  ``[assistant] ... the <label> is <value>.`` / ``[operator] ... the <label> is <value>.`` where
  the value is always followed by a final ``.`` and the end of the line.
* Filler never contains a planted value or label, and filler prose never uses a
  ``the <words> is`` form, so the two fact forms above are the only fact-shaped lines.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Literal, Protocol

Role = Literal["tool", "assistant", "operator"]

LOG_LINE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z [A-Z]+ ")
"""Matches the start of a filler log line: ISO timestamp, then an upper-case level."""

TURN_SEPARATOR = "\n\n"
"""What sits between two rendered turns in ``Chunk.text``."""

ASSISTANT_FACT_FORMS: tuple[str, ...] = (
    "Noted: the {label} is {value}.",
    "Writing this down for later: the {label} is {value}.",
    "Confirmed from the output above, the {label} is {value}.",
)
"""How an assistant turn states a fact; each contains ``the <label> is <value>.`` at its end."""

OPERATOR_FACT_FORMS: tuple[str, ...] = (
    "For the record, the {label} is {value}.",
    "Before you go further: the {label} is {value}.",
    "Please keep this in mind, the {label} is {value}.",
)
"""How an operator turn states a fact; each contains ``the <label> is <value>.`` at its end."""

_SESSION_START = datetime(2026, 7, 12, 8, 0, 0, tzinfo=UTC)
# Generation would loop forever if a template could only ever produce forbidden text; a
# bounded retry turns that (a generator bug) into a loud error instead.
_MAX_REDRAWS = 50


class FillerConflict(RuntimeError):
    """Filler kept producing a planted value or label: it is too generic to keep out of filler."""

    def __init__(self, needle: str) -> None:
        super().__init__(f"filler cannot avoid {needle!r}")
        self.needle = needle
        """The casefolded value or label the filler kept containing."""


class PlantedFact(Protocol):
    """What the generator needs to know about a fact (``foldscope.core.scenario.Fact`` fits).

    Read-only properties, so frozen records (pydantic or dataclass) match it.
    """

    @property
    def label(self) -> str: ...
    @property
    def value(self) -> str: ...
    @property
    def role(self) -> Role: ...
    @property
    def chunk(self) -> int: ...


@dataclass(frozen=True)
class Turn:
    """One turn of a chunk: who speaks and what they say (without the role marker).

    ``tool`` names the tool for tool results; ``planted`` lists the labels of the facts this
    turn states, so views can highlight them without searching the text.
    """

    role: Role
    text: str
    tool: str | None = None
    planted: tuple[str, ...] = ()

    def render(self) -> str:
        """Return the turn as transcript text, starting with its role marker line."""
        if self.role == "tool":
            return f"[tool result: {self.tool or 'tool'}]\n{self.text}"
        return f"[{self.role}] {self.text}"


@dataclass(frozen=True)
class Chunk:
    """One chunk of a scenario: its 0-based index, its turns, rendered text and token estimate."""

    index: int
    turns: list[Turn]
    text: str
    tokens: int


@dataclass
class _Clock:
    """Session time that only moves forward, so log timestamps read like one continuous run."""

    now: datetime = field(default_factory=lambda: _SESSION_START)

    def tick(self, rng: random.Random, low_ms: int, high_ms: int) -> str:
        self.now += timedelta(milliseconds=rng.randint(low_ms, high_ms))
        return self.now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{self.now.microsecond // 1000:03d}Z"


# ---------------------------------------------------------------------------------------------
# Filler vocabulary. Prose is written without "the <words> is" on purpose: that is the fact form.
# ---------------------------------------------------------------------------------------------

_PODS = ("ledger-api", "ledger-migrate", "ledger-worker", "pg-primary", "pg-replica",
         "reconciler", "audit-sink", "pgbouncer")
_TABLES = ("journal_entries", "postings", "accounts", "balances_daily", "fx_rates",
           "settlement_batches", "audit_trail", "ledger_locks")
_UNITS = ("ledger-api", "ledger-worker", "ledger-migrate", "pgbouncer", "reconciler")
_ENDPOINTS = ("/v2/accounts/{n}/balance", "/v2/postings", "/v2/journal/{n}", "/v2/fx/latest",
              "/v2/settlements/{n}", "/healthz", "/readyz", "/v2/accounts/{n}/history")
_TF_RESOURCES = (
    "module.ledger_db.aws_db_instance.primary",
    "module.ledger_db.aws_db_parameter_group.pg16",
    "module.ledger_net.aws_security_group.api",
    "module.ledger_api.aws_lb_target_group.blue",
    "module.ledger_api.aws_lb_target_group.green",
    "module.ledger_cache.aws_elasticache_cluster.main",
    "module.ledger_iam.aws_iam_role.migrate",
    "module.ledger_dns.aws_route53_record.api",
)

_ASSISTANT_PROSE: tuple[str, ...] = (
    "Replay progressed by {n} batches since the last check; row counts still line up with the "
    "old primary, so I will keep going.",
    "Before cutting traffic over I want to compare checksums on {table}; running the comparison "
    "query next.",
    "Lag on the replica went up to {ms} ms during the last burst, which stays within what we "
    "agreed; continuing the replay.",
    "That warning about slow batches looks transient. I will tail the migrate logs again to make "
    "sure it settles.",
    "Health checks came back green on all {k} probes. Next step: look at pod restarts in the "
    "ledger namespace.",
    "Terraform wants to touch {k} resources; I will read the plan carefully before applying "
    "anything.",
    "Two batches needed a retry after a lock timeout. Retries succeeded, so no manual action "
    "needed yet.",
    "I will look at pgbouncer pool usage, since the api pods opened more connections than usual "
    "after the restart.",
    "Checkpoint writes look healthy now. Moving on to verify {table} against the reporting "
    "snapshot.",
    "Nothing alarming in the journal for the worker unit; only routine reconnects. Checking the "
    "api unit next.",
    "Row counts for {table} differ by {k} rows, but those rows arrived after the snapshot, so "
    "that gap looks expected.",
    "I am going to rerun the smoke probes through the new target group before widening the "
    "rollout.",
    "Error rate stays under one percent across the last {k} minutes. Proceeding with the next "
    "wave of batches.",
    "Let me confirm that the reconciler caught up before we touch any settlement data.",
    "Plan output shows only in-place updates, no replacements, so applying should not interrupt "
    "service.",
    "Connection storms stopped after the pool resize; I will keep watching for a few more "
    "minutes.",
)

_OPERATOR_PROSE: tuple[str, ...] = (
    "Looks good so far, carry on with the replay.",
    "Keep an eye on replica lag while you work through the big tables.",
    "Finance asked us not to touch settlement data until their close finishes, so leave that "
    "for later.",
    "If anything looks odd in the audit sink, stop and ping me before retrying.",
    "Fine by me. Please post a short status once this wave completes.",
    "No rush on the cutover; correctness over speed today.",
    "Heads up, the reporting team runs heavy queries around the top of the hour.",
    "Thanks. Go ahead with the next step when ready.",
)

# Messages that report trouble get a matching level, so a log reads as a log, not as noise.
_WARN_MARKERS = ("slow batch", "lock wait", "status=409", "status=404")
_ERROR_MARKERS = ("status=503",)
_QUIET_LEVELS = ("INFO",) * 6 + ("DEBUG",)


def _hex(rng: random.Random, n: int) -> str:
    return f"{rng.getrandbits(4 * n):0{n}x}"


def _fmt(template: str, rng: random.Random) -> str:
    return template.format(
        n=rng.randint(1000, 9999), k=rng.randint(2, 48), ms=rng.randint(40, 900),
        table=rng.choice(_TABLES),
    )


def _level(rng: random.Random, message: str) -> str:
    if any(m in message for m in _ERROR_MARKERS):
        return "ERROR"
    if any(m in message for m in _WARN_MARKERS):
        return "WARN"
    return rng.choice(_QUIET_LEVELS)


# Each family draws a command and a log message; the process name and pid go in the log prefix.
@dataclass(frozen=True)
class _Family:
    tool: str
    command: Callable[[random.Random], str]
    proc: Callable[[random.Random], str]
    message: Callable[[random.Random], str]


def _migrate_msg(rng: random.Random) -> str:
    b, rows, ms = rng.randint(1000, 9999), rng.randint(50, 2000), rng.randint(5, 400)
    table = rng.choice(_TABLES)
    return rng.choice((
        f"replayed batch {b} ({rows} rows, {ms} ms)",
        f"checkpoint committed lsn=0/{_hex(rng, 8).upper()} batch={b}",
        f"copy table={table} offset={rng.randint(10_000, 9_999_999)} chunk_rows={rows}",
        f"slow batch batch={b} took_ms={ms * 9} rows={rows} retry=0",
        f"lock wait table={table} waited_ms={ms} holder_pid={rng.randint(200, 30000)}",
        f"verified batch {b} checksum={_hex(rng, 12)} rows={rows}",
    ))


def _pg_msg(rng: random.Random) -> str:
    table = rng.choice(_TABLES)
    return rng.choice((
        f"checkpoint complete wrote={rng.randint(100, 9000)} buffers "
        f"write={rng.randint(1, 90) / 10}s sync={rng.randint(1, 30) / 100}s",
        f"automatic vacuum table=ledger.public.{table} pages_removed={rng.randint(0, 4000)} "
        f"tuples_removed={rng.randint(0, 90000)}",
        f"duration={rng.randint(1, 3000)}.{rng.randint(100, 999)} ms statement=SELECT "
        f"sum(amount_minor) FROM {table} WHERE batch_id = ${rng.randint(1, 4)}",
        f"replication slot=ledger_migrate restart_lsn=0/{_hex(rng, 8).upper()} "
        f"lag_bytes={rng.randint(0, 9_000_000)}",
        f"connection authorized user=ledger_app database=ledger "
        f"application_name={rng.choice(_PODS)}",
    ))


def _api_msg(rng: random.Random) -> str:
    path = rng.choice(_ENDPOINTS).format(n=rng.randint(100_000, 999_999))
    status = rng.choice((200,) * 18 + (201, 204, 404, 409, 503))
    method = rng.choice(("GET", "GET", "POST"))
    return rng.choice((
        f"{method} {path} status={status} dur_ms={rng.randint(2, 600)} req_id={_hex(rng, 16)}",
        f"pool stats open={rng.randint(4, 80)} idle={rng.randint(0, 30)} "
        f"wait_ms={rng.randint(0, 200)}",
        f"cache {rng.choice(('hit', 'hit', 'miss'))} key=acct:{rng.randint(100_000, 999_999)} "
        f"ttl_s={rng.randint(10, 600)}",
    ))


def _tf_msg(rng: random.Random) -> str:
    res = rng.choice(_TF_RESOURCES)
    return rng.choice((
        f"terraform resource={res} action=refresh id=ledger-{_hex(rng, 6)}",
        f"terraform resource={res} action=update-in-place attrs_changed={rng.randint(1, 6)}",
        f"terraform provider=registry.terraform.io/hashicorp/aws call=Describe "
        f"elapsed_ms={rng.randint(20, 1500)}",
        f"terraform resource={res} action=no-op",
    ))


def _probe_msg(rng: random.Random) -> str:
    return (f"probe seq={rng.randint(1, 400)} status={rng.choice((200,) * 12 + (503,))} "
            f"latency_ms={rng.randint(3, 250)} upstream={rng.choice(_PODS)}-{_hex(rng, 5)}")


def _cmd_migrate_logs(r: random.Random) -> str:
    return (f"kubectl logs -n ledger deploy/ledger-migrate --since={r.randint(5, 40)}m "
            f"--tail={r.randint(2, 9)}00")


def _cmd_pg_log(r: random.Random) -> str:
    return (f"kubectl exec -n ledger pg-primary-0 -- tail -n {r.randint(2, 6)}00 "
            "/var/log/postgresql/postgresql.log")


def _cmd_journal(r: random.Random) -> str:
    return f"journalctl -u {r.choice(_UNITS)} --since \"{r.randint(5, 30)} min ago\" --no-pager"


def _cmd_terraform(r: random.Random) -> str:
    return (f"TF_LOG=info terraform -chdir=infra/ledger {r.choice(('plan', 'plan', 'apply'))} "
            f"-no-color -lock-timeout={r.randint(1, 5)}m")


def _cmd_probe(r: random.Random) -> str:
    return (f"for i in $(seq 1 {r.randint(20, 90)}); do curl -sS -o /dev/null -w "
            "'%{http_code}' https://ledger-api.staging.svc/healthz; done")


def _cmd_systemctl(r: random.Random) -> str:
    return f"systemctl status {r.choice(_UNITS)} --no-pager --lines={r.randint(40, 150)}"


_FAMILIES: tuple[_Family, ...] = (
    _Family("bash", _cmd_migrate_logs, lambda r: "ledger-migrate", _migrate_msg),
    _Family("bash", _cmd_pg_log, lambda r: r.choice(("postgres", "pg-primary", "autovacuum")),
            _pg_msg),
    _Family("bash", _cmd_journal, lambda r: r.choice(_UNITS), _api_msg),
    _Family("bash", _cmd_terraform, lambda r: "terraform", _tf_msg),
    _Family("bash", _cmd_probe, lambda r: "probe", _probe_msg),
    _Family("bash", _cmd_systemctl, lambda r: r.choice(_UNITS), _api_msg),
)


def _table_output(rng: random.Random) -> list[str]:
    """A short non-log output (a kubectl table or a psql result); contains no ``": "``."""
    if rng.random() < 0.5:
        lines = [f"{'NAME':<34}{'READY':<8}{'STATUS':<12}{'RESTARTS':<10}AGE"]
        for _ in range(rng.randint(4, 12)):
            name = f"{rng.choice(_PODS)}-{_hex(rng, 9)}-{_hex(rng, 5)}"
            status = rng.choice(("Running",) * 8 + ("Pending", "Completed"))
            age = f"{rng.randint(1, 20)}d{rng.randint(0, 23)}h"
            lines.append(f"{name:<34}{'1/1':<8}{status:<12}{rng.randint(0, 4):<10}{age}")
        return lines
    table = rng.choice(_TABLES)
    lines = [" batch_id | rows  | sum_minor_units", "----------+-------+-----------------"]
    n = rng.randint(3, 10)
    for _ in range(n):
        lines.append(f" {rng.randint(1000, 9999):>8} | {rng.randint(50, 2000):>5} | "
                     f"{rng.randint(10**6, 10**10):>15}")
    lines.append(f"({n} rows)")
    return [f"-- {table}"] + lines


class _Writer:
    """Builds one scenario's turns from one ``random.Random``, refusing any forbidden text."""

    def __init__(self, rng: random.Random, forbidden: Sequence[str],
                 chars_per_token: float) -> None:
        self.rng = rng
        self.clock = _Clock()
        self.forbidden = tuple(f.casefold() for f in forbidden)
        self.chars_per_token = chars_per_token

    def _dirty(self, text: str) -> bool:
        folded = text.casefold()
        return any(needle in folded for needle in self.forbidden)

    def _clean(self, make: Callable[[], str]) -> str:
        # Filler is random, so it can stumble on a planted value (a 5-digit port inside a row
        # count, a hex run inside a request id); redraw rather than ever plant by accident.
        for _ in range(_MAX_REDRAWS):
            text = make()
            if not self._dirty(text):
                return text
        folded = text.casefold()
        raise FillerConflict(next(n for n in self.forbidden if n in folded))

    def _log_rest(self, family: _Family) -> str:
        rng = self.rng
        proc, pid, message = family.proc(rng), rng.randint(100, 32000), family.message(rng)
        return f"{_level(rng, message)} {proc}[{pid}] {message}"

    def _log_lines(self, family: _Family, count: int = 0, chars: float = 0) -> list[str]:
        """Log lines: ``count`` of them, or as many as fill ``chars``; at least one."""
        lines: list[str] = []
        size = 0
        while not lines or len(lines) < count or size < chars:
            line = f"{self.clock.tick(self.rng, 3, 700)} {self._log_rest(family)}"
            lines.append(line)
            size += len(line) + 1
        # Checking the joined output once is far cheaper than checking each line; only when it
        # trips are the offending lines found and redrawn (keeping their timestamps in order).
        if self._dirty("\n".join(lines)):
            for i, line in enumerate(lines):
                if self._dirty(line):
                    stamp = line.split(" ", 1)[0]
                    lines[i] = f"{stamp} {self._clean(lambda: self._log_rest(family))}"
        return lines

    def filler_round(self, budget_chars: float) -> list[Turn]:
        """A tool-call round: maybe some prose, a call, a long output, maybe an operator remark."""
        rng = self.rng
        self.clock.tick(rng, 5_000, 90_000)
        turns: list[Turn] = []
        if rng.random() < 0.55:
            prose = self._clean(lambda: _fmt(rng.choice(_ASSISTANT_PROSE), rng))
            turns.append(Turn("assistant", prose))
        if rng.random() < 0.15:
            output = self._clean(lambda: "\n".join(_table_output(rng))).split("\n")
            if output[0].startswith("NAME"):
                tool, command = "bash", "kubectl get pods -n ledger -o wide"
            else:
                tool = "psql"
                command = (f"SELECT batch_id, rows, sum_minor_units FROM replay_audit "
                           f"WHERE table_name = '{output[0][3:]}' ORDER BY batch_id DESC LIMIT 10")
        else:
            family = rng.choice(_FAMILIES)
            tool, command = family.tool, self._clean(lambda: family.command(rng))
            used = sum(len(t.render()) for t in turns) + len(command) + 40
            # Long log outputs are the bulk of the session; size them to the remaining budget
            # so a chunk lands close to its token target instead of overshooting by a round.
            want = min(budget_chars - used, rng.randint(2_500, 14_000))
            output = self._log_lines(family, chars=want)
        turns.append(Turn("assistant", f"calling {tool}: {command}"))
        turns.append(Turn("tool", "\n".join(output), tool=tool))
        if rng.random() < 0.08:
            turns.append(Turn("operator", self._clean(lambda: rng.choice(_OPERATOR_PROSE))))
        return turns

    def fact_turns(self, fact: PlantedFact, padding: int) -> list[Turn]:
        """The turns that state one fact in the form its role calls for.

        ``padding`` caps the log lines around a fact in a tool output, so small chunks with
        many facts stay near their size.
        """
        rng = self.rng
        self.clock.tick(rng, 5_000, 60_000)
        if fact.role == "tool":
            family = rng.choice(_FAMILIES)
            command = rng.choice(("kestrelctl inventory --env prod --verbose",
                                  "kestrelctl describe ledger --env prod",
                                  "kestrelctl config show --resolved",
                                  "kestrelctl preflight --target ledger-v4"))
            before = self._log_lines(family, count=rng.randint(1, padding))
            after = self._log_lines(family, count=rng.randint(1, padding))
            body = before + [f"{fact.label}: {fact.value}"] + after
            return [Turn("assistant", f"calling bash: {command}"),
                    Turn("tool", "\n".join(body), tool="bash", planted=(fact.label,))]
        forms = ASSISTANT_FACT_FORMS if fact.role == "assistant" else OPERATOR_FACT_FORMS
        text = rng.choice(forms).format(label=fact.label, value=fact.value)
        return [Turn(fact.role, text, planted=(fact.label,))]

    def chunk_turns(self, facts: Sequence[PlantedFact], target_tokens: int) -> list[Turn]:
        """Fill one chunk to about ``target_tokens``, planting ``facts`` at random points in it."""
        rng = self.rng
        budget = int(target_tokens * self.chars_per_token)
        # Facts land at random depths between 5% and 95% of the chunk, in file order when two
        # draws tie, so the planted turns are never the very first or very last thing.
        depths = sorted((rng.uniform(0.05, 0.95) * budget, i) for i in range(len(facts)))
        pending = [facts[i] for _, i in depths]
        # Roughly a quarter of the chunk may go to the log lines around facts (~100 chars each).
        padding = max(2, min(25, budget // (400 * max(len(facts), 1))))
        marks = [d for d, _ in depths]
        turns: list[Turn] = []
        used = 0
        while used < budget or pending:
            while pending and (used >= marks[0] or used >= budget):
                for turn in self.fact_turns(pending.pop(0), padding):
                    turns.append(turn)
                    used += len(turn.render()) + len(TURN_SEPARATOR)
                marks.pop(0)
            if used >= budget:
                break
            next_stop = marks[0] if marks else budget
            for turn in self.filler_round(max(next_stop - used, 600)):
                turns.append(turn)
                used += len(turn.render()) + len(TURN_SEPARATOR)
        return turns


def render_turns(turns: Sequence[Turn]) -> str:
    """Render turns as transcript text, one turn after another.

    Args:
        turns: The turns of one chunk.

    Returns:
        The transcript text: each turn's ``render()``, separated by a blank line.
    """
    return TURN_SEPARATOR.join(t.render() for t in turns)


def forbidden_strings(facts: Sequence[PlantedFact]) -> list[str]:
    """List the strings filler must never contain, compared case-insensitively.

    Args:
        facts: Every planted fact of the scenario.

    Returns:
        Every planted value and label, sorted.
    """
    return sorted({f.value for f in facts} | {f.label for f in facts})


def generate_chunks(seed: int, n_chunks: int, tokens_per_chunk: int,
                    facts: Sequence[PlantedFact],
                    estimate: Callable[[str], int]) -> list[Chunk]:
    """Generate a scenario's chunks deterministically from its seed.

    Args:
        seed: Seed for the one ``random.Random`` that draws all filler and placements.
        n_chunks: Number of chunks.
        tokens_per_chunk: Target estimated tokens per chunk (the filler size).
        facts: Planted facts; ``chunk`` is the 0-based chunk index each is stated in.
        estimate: The token estimator (``foldscope.core.tokens.estimate_tokens``).

    Returns:
        The chunks, each with its turns, rendered text and estimated tokens.

    Raises:
        FillerConflict: A planted value or label is so generic that filler keeps containing it.
    """
    forbidden = forbidden_strings(facts)
    # Calibrate characters per token on a sample of filler drawn from a separate stream, so
    # chunk sizes follow whatever the estimator counts without perturbing the main draw.
    sample_writer = _Writer(random.Random(f"calibrate:{seed}"), forbidden, 4.0)
    sample = render_turns([t for _ in range(6) for t in sample_writer.filler_round(6_000)])
    chars_per_token = len(sample) / max(estimate(sample), 1)

    writer = _Writer(random.Random(seed), forbidden, chars_per_token)
    chunks: list[Chunk] = []
    for index in range(n_chunks):
        turns = writer.chunk_turns([f for f in facts if f.chunk == index], tokens_per_chunk)
        text = render_turns(turns)
        chunks.append(Chunk(index=index, turns=turns, text=text, tokens=estimate(text)))
    return chunks

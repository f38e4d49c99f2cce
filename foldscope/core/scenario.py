"""Scenarios: the TOML format, its validation, and building generated transcripts from it.

Core receives a scenario file's text (``parse_scenario``); finding and reading files is the
engine's job (``foldscope.engine.loader``). A scenario file (``scenarios/<name>.toml``) looks like::

    name = "smoke"                      # lower-case letters, digits and dashes
    description = "Small and fast."     # one line
    seed = 11                           # seeds the one random.Random that writes all filler
    chunks = 3                          # number of chunks the session is folded in
    tokens_per_chunk = 1500             # target estimated tokens per chunk (filler size)

    [[facts]]                           # one table per planted fact, in recall order
    label = "ledger service port"
    value = "62114"
    role = "tool"                       # tool | assistant | operator: who states it
    chunk = 1                           # 1-BASED in files (as humans count); 0-based in the API
    graded = true                       # asked at the recall turn; false = decoy, never asked
    kind = "port"                       # free-form tag: port, path, cluster_id, licence_key ...

On parsing, the text is validated, the transcript is generated deterministically from the seed
(``foldscope.core.scenario_gen`` documents the text conventions), and two checks run: no planted
value is a substring of another planted value, and every value appears in the text of exactly
the chunk the file names, once, and in no other chunk. Any failure is a ``ScenarioError`` with
one line naming the file, the field and the problem, e.g.
``scenarios/broken.toml: facts[3].role: must be one of tool, assistant, operator (got 'user')``
(``facts[i]`` counts the ``[[facts]]`` tables from 0, like the API's indexes).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from foldscope.core.errors import ScenarioError
from foldscope.core.nesting import NestingError, loads_toml
from foldscope.core.scenario_gen import (
    LOG_LINE_RE,
    TURN_SEPARATOR,
    Chunk,
    FillerConflict,
    Turn,
    generate_chunks,
)
from foldscope.core.text import ID_MAX_CHARS, VALUE_MAX_CHARS, check_field
from foldscope.core.tokens import estimate_tokens

__all__ = [
    "ROLES",
    "LOG_LINE_RE",
    "TURN_SEPARATOR",
    "Chunk",
    "Fact",
    "Scenario",
    "Turn",
    "parse_facts",
    "parse_scenario",
]

ROLES: tuple[str, ...] = ("tool", "assistant", "operator")
"""Who may state a planted fact, in the order error messages list them."""

_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")
# Generous upper bounds: they exist to turn a typo (an extra zero) into an error message rather
# than a minute-long generation, not to limit real studies.
_MAX_CHUNKS = 64
_MAX_TOKENS_PER_CHUNK = 200_000


def _single_line(value: str, limit: int = VALUE_MAX_CHARS) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    if value != value.strip():
        raise ValueError("must not start or end with whitespace")
    # Values end up on terminals, in transcripts and in every model's prompt: a newline would
    # break the one-line fact form, an escape or bidi control would act on the terminal, and a
    # megabyte value would swamp the chunk it is planted in.
    return check_field(value, limit=limit)


def _short_line(value: str) -> str:
    return _single_line(value, ID_MAX_CHARS)


class Fact(BaseModel):
    """A planted fact: a labelled value stated once, by one role, in one chunk.

    ``chunk`` is the 0-based chunk index (files use 1-based numbers; humans are shown 1-based).
    Graded facts are asked at the recall turn; decoys (``graded=False``) never are.
    """

    model_config = ConfigDict(frozen=True)

    label: str
    value: str
    role: Literal["tool", "assistant", "operator"]
    chunk: int
    graded: bool
    kind: str


class _FactSpec(BaseModel):
    """One ``[[facts]]`` table as written in a file (1-based chunk number)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    label: str
    value: str
    role: Literal["tool", "assistant", "operator"]
    chunk: int = Field(ge=1)
    graded: bool
    kind: str

    _one_line = field_validator("value")(_single_line)
    _short = field_validator("label", "kind")(_short_line)


class _ScenarioSpec(BaseModel):
    """A whole scenario file as written."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: str
    description: str
    seed: int
    chunks: int = Field(ge=1, le=_MAX_CHUNKS)
    tokens_per_chunk: int = Field(ge=100, le=_MAX_TOKENS_PER_CHUNK)
    facts: list[_FactSpec] = Field(min_length=1)

    _one_line = field_validator("description")(_single_line)

    @field_validator("name")
    @classmethod
    def _name_shape(cls, value: str) -> str:
        if not _NAME_RE.match(value):
            raise ValueError("must be lower-case letters, digits and dashes")
        return check_field(value, limit=ID_MAX_CHARS)


@dataclass
class Scenario:
    """A loaded scenario: its generated chunks and planted facts. Treat it as read-only.

    Loaded scenarios are cached and shared between callers, so mutating one would change it for
    everyone else in the process.
    """

    name: str
    description: str
    seed: int
    tokens_per_chunk: int
    chunks: list[Chunk]
    facts: list[Fact]
    path: Path | None = None

    @property
    def graded(self) -> list[Fact]:
        """The facts asked at the recall turn, in file order."""
        return [f for f in self.facts if f.graded]

    @property
    def decoys(self) -> list[Fact]:
        """The planted facts that are never asked, in file order."""
        return [f for f in self.facts if not f.graded]

    @property
    def distributed(self) -> bool:
        """True when the graded facts are spread over more than one chunk."""
        return len({f.chunk for f in self.graded}) > 1

    @property
    def total_tokens(self) -> int:
        """Estimated tokens of all chunks together (the sum of the per-chunk estimates)."""
        return sum(c.tokens for c in self.chunks)

    def facts_in_chunk(self, index: int) -> list[Fact]:
        """The facts stated in one chunk.

        Args:
            index: 0-based chunk index.

        Returns:
            Those facts, in file order.
        """
        return [f for f in self.facts if f.chunk == index]

    def fact(self, label: str) -> Fact:
        """Look a fact up by its label.

        Args:
            label: The exact label.

        Returns:
            The fact.

        Raises:
            KeyError: No fact has that label.
        """
        for f in self.facts:
            if f.label == label:
                return f
        raise KeyError(label)


def _loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(file)"


_TYPE_WORDS = {
    "int_type": "must be an integer",
    "string_type": "must be a string",
    "bool_type": "must be true or false",
    "list_type": "must be an array of [[facts]] tables",
    "model_type": "must be a table",
    "dict_type": "must be a table",
}


def _short(value: Any) -> str:
    """``repr`` cut to a length that keeps an error message on one readable line."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _problem(error: Any) -> str:
    """Phrase one pydantic error as a short clause a person can act on."""
    kind, ctx = error["type"], error.get("ctx") or {}
    got = error.get("input")
    if kind == "missing":
        return "required field is missing"
    if kind == "extra_forbidden":
        return "unknown field"
    if kind == "literal_error":
        return f"must be one of {', '.join(ROLES)} (got {_short(got)})"
    if kind in _TYPE_WORDS:
        return f"{_TYPE_WORDS[kind]} (got {type(got).__name__} {_short(got)})"
    if kind in ("greater_than_equal", "less_than_equal"):
        word = "at least" if kind == "greater_than_equal" else "at most"
        bound = ctx.get("ge", ctx.get("le"))
        return f"must be {word} {bound} (got {_short(got)})"
    if kind == "too_short":
        return "must not be empty"
    if kind == "value_error":
        return str(ctx.get("error", error["msg"]))
    return str(error["msg"]).splitlines()[0]


def _fail(where: str, field: str, problem: str) -> ScenarioError:
    return ScenarioError(f"{where}: {field}: {problem}")


def _parse(text: str, where: str) -> _ScenarioSpec:
    try:
        data = loads_toml(text)
    except (tomllib.TOMLDecodeError, NestingError) as exc:
        raise ScenarioError(f"{where}: invalid TOML: {str(exc).splitlines()[0]}") from None
    facts = data.get("facts")
    if isinstance(facts, list) and len(facts) > MAX_FACTS:  # before any per-fact work
        raise _fail(where, "facts", f"{len(facts):,} facts; at most {MAX_FACTS:,} are supported "
                    "per scenario")
    try:
        spec = _ScenarioSpec.model_validate(data)
    except ValidationError as exc:
        # Several problems may be reported; the first one, stated precisely, is more useful on
        # one line than all of them run together.
        first = exc.errors()[0]
        raise _fail(where, _loc(first["loc"]), _problem(first)) from None
    _check_facts(spec, where)
    return spec


MAX_FACTS = 1000
"""Most planted facts a scenario may have (kestrel has 50); more is refused at load."""


def _check_facts(spec: _ScenarioSpec, where: str) -> None:
    """Checks that need the whole file: a bounded number of facts, at least one graded, chunk
    range, unique labels, no value inside another."""
    if len(spec.facts) > MAX_FACTS:
        # The checks below compare every value with every other: bound them before they run.
        raise _fail(where, "facts", f"{len(spec.facts):,} facts; at most {MAX_FACTS:,} are "
                    "supported per scenario")
    if not any(f.graded for f in spec.facts):
        raise _fail(where, "facts", "no graded fact (graded = true): the recall turn would ask "
                    "nothing and every row would score 0")
    seen: dict[str, int] = {}
    for i, fact in enumerate(spec.facts):
        if fact.chunk > spec.chunks:
            raise _fail(where, f"facts[{i}].chunk", f"must be between 1 and {spec.chunks} "
                        f"(chunks = {spec.chunks}; got {fact.chunk})")
        key = fact.label.casefold()
        if key in seen:
            raise _fail(where, f"facts[{i}].label",
                        f"duplicate label {fact.label!r} (also facts[{seen[key]}])")
        seen[key] = i
    # A value inside another (62114 inside 621140) would make grading and placement ambiguous:
    # the shorter one would be "present" wherever the longer one is. Case-insensitive, like the
    # filler guard, so a hex decoy cannot hide a graded key id in another case.
    folded = [f.value.casefold() for f in spec.facts]
    for i, fact in enumerate(spec.facts):
        for j, other in enumerate(spec.facts):
            if i != j and folded[i] in folded[j] and (folded[i] != folded[j] or i > j):
                what = "graded value" if fact.graded else "decoy value"
                other_kind = "graded" if other.graded else "decoy"
                relation = "duplicates" if folded[i] == folded[j] else "is a substring of"
                raise _fail(where, f"facts[{i}].value",
                            f"{what} {fact.value!r} {relation} facts[{j}].value "
                            f"({other_kind}) {other.value!r}")


def _check_placement(chunks: list[Chunk], facts: list[Fact], where: str) -> None:
    """Every value must be stated once, in its own chunk, and nowhere else."""
    folded_texts = [c.text.casefold() for c in chunks]
    for i, fact in enumerate(facts):
        needle = fact.value.casefold()
        counts = [t.count(needle) for t in folded_texts]
        if counts[fact.chunk] != 1 or sum(counts) != 1:
            found = ", ".join(f"chunk {k + 1} x{n}" for k, n in enumerate(counts) if n) or "nowhere"
            # Extra copies mean filler (timestamps, ids) contains the value: the fix is a value
            # that cannot occur by chance, so say so rather than leave the author guessing.
            hint = "; choose a more distinctive value" if sum(counts) > 1 else ""
            raise _fail(where, f"facts[{i}].value",
                        f"generated text must state {fact.value!r} once, in chunk "
                        f"{fact.chunk + 1} only; found {found}{hint}")


def _facts(spec: _ScenarioSpec) -> list[Fact]:
    return [Fact(label=f.label, value=f.value, role=f.role, chunk=f.chunk - 1, graded=f.graded,
                 kind=f.kind) for f in spec.facts]


def parse_facts(text: str, where: str) -> list[Fact]:
    """A scenario file's planted facts, validated as :func:`parse_scenario` validates them, without
    generating its transcript (what reading the facts alone needs: a report's capacity notes).

    Raises:
        ScenarioError: as :func:`parse_scenario`, for every check that does not need the text.
    """
    return _facts(_parse(text, where))


def parse_scenario(text: str, where: str, *, path: Path | None = None) -> Scenario:
    """Validate a scenario file's text and generate its transcript.

    Args:
        text: The file's TOML text.
        where: How error messages name the file (e.g. ``scenarios/kestrel.toml``).
        path: The file it came from, recorded on the scenario (None for text from elsewhere).

    Returns:
        The scenario with its chunks generated (deterministic from the text).

    Raises:
        ScenarioError: The text is malformed or fails its checks; one line starting ``where: ``.
    """
    spec = _parse(text, where)
    facts = _facts(spec)
    try:
        chunks = generate_chunks(spec.seed, spec.chunks, spec.tokens_per_chunk, facts,
                                 estimate_tokens)
    except FillerConflict as exc:
        for i, f in enumerate(facts):
            for name in ("value", "label"):
                if getattr(f, name).casefold() == exc.needle:
                    raise _fail(where, f"facts[{i}].{name}",
                                f"{exc}; choose a more distinctive {name}") from None
        raise ScenarioError(f"{where}: {exc}") from None
    _check_placement(chunks, facts, where)
    return Scenario(name=spec.name, description=spec.description, seed=spec.seed,
                    tokens_per_chunk=spec.tokens_per_chunk, chunks=chunks, facts=facts,
                    path=path)

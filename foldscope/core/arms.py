"""The catalog of carrier arms (f n j p q k o m t u l g) as data, with the rules that bind them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from foldscope.core.errors import ArmError
from foldscope.core.prompts import (
    HEADED_INSTRUCTION,
    LONG_FIELD_DESCRIPTION,
    PROSE_INSTRUCTION,
    PROSE_SYSTEM_PROMPT,
    SCHEMA_INSTRUCTION,
    SECTIONS_REQUEST,
    SHARED_SYSTEM_PROMPT,
    prompt_digest,
)
from foldscope.core.sections import SECTIONS, Section

Representation = Literal["schema", "plain"]

DEFAULT_CARRY_CAP = 2400
"""Tokens the harness carries forward by default (arm u lowers it to 1,400)."""

DEDICATED_CEILING = 9600
"""Arm j's single-field ceiling; q's five fields must share exactly this capacity."""

DEPLOYED_BUDGET = 900
"""Output tokens of the deployed configuration: arm f, and arm l that matches it."""

HEADED_BUDGET = 2400
"""Output tokens of arm m (and u, which differs from m only by its carry cap)."""

SHARED_PROMPT_ARMS = "jqmptu"
"""The arms that share one system prompt byte for byte (the study's; o has its own)."""


@dataclass(frozen=True)
class FieldSpec:
    """One property of a schema arm's response schema.

    Attributes:
        name: JSON property name.
        max_length: declared ceiling in characters (None for arrays or unbounded strings).
        description: optional schema description shown to the model.
        carried: whether the field's content is carried to the next fold.
        kind: "string" or "array" (arrays hold strings).
        section: the fixed section the field renders back under, if any.
    """

    name: str
    max_length: int | None = None
    description: str | None = None
    carried: bool = True
    kind: Literal["string", "array"] = "string"
    section: Section | None = None


@dataclass(frozen=True)
class Arm:
    """A carrier representation: everything that differs between arms, as data."""

    id: str
    title: str
    representation: Representation
    system_prompt: str
    instruction: str
    output_budget: int
    carry_cap: int = DEFAULT_CARRY_CAP
    fields: tuple[FieldSpec, ...] = ()
    schema_name: str = ""
    carry_raw_json: bool = False
    headed: bool = False
    notes: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def carried_fields(self) -> tuple[FieldSpec, ...]:
        """The string fields whose content reaches the next fold."""
        return tuple(f for f in self.fields if f.carried and f.kind == "string")

    @property
    def declared_ceilings(self) -> dict[str, int]:
        """Declared ceiling per carried field (empty for plain arms)."""
        return {f.name: f.max_length for f in self.carried_fields if f.max_length is not None}

    @property
    def declared_ceiling(self) -> int | None:
        """Total declared capacity in characters, or None for plain arms."""
        ceilings = self.declared_ceilings
        return sum(ceilings.values()) if ceilings else None

    @property
    def prompt_digest(self) -> str:
        """Digest of the system prompt, recorded on every row."""
        return prompt_digest(self.system_prompt)

    def response_format(self) -> dict[str, Any] | None:
        """Return the strict ``json_schema`` response_format for a schema arm, else None."""
        if self.representation != "schema":
            return None
        props: dict[str, Any] = {}
        for spec in self.fields:
            if spec.kind == "array":
                prop: dict[str, Any] = {"type": "array", "items": {"type": "string"}}
            else:
                prop = {"type": "string"}
                if spec.max_length is not None:
                    prop["maxLength"] = spec.max_length
            if spec.description:
                prop["description"] = spec.description
            props[spec.name] = prop
        return {
            "type": "json_schema",
            "json_schema": {
                "name": self.schema_name or "carrier",
                "strict": True,
                "schema": {
                    "type": "object",
                    "properties": props,
                    "required": [f.name for f in self.fields],
                    "additionalProperties": False,
                },
            },
        }

    def describe(self) -> dict[str, Any]:
        """Return the catalog entry as plain JSON-ready data."""
        return {
            "id": self.id,
            "title": self.title,
            "representation": self.representation,
            "field_count": len(self.fields),
            "carried_field_count": len(self.carried_fields),
            "fields": [
                {"name": f.name, "max_length": f.max_length, "carried": f.carried, "kind": f.kind,
                 "section": f.section.heading if f.section else None,
                 "description_chars": len(f.description or "")}
                for f in self.fields
            ],
            "declared_ceiling": self.declared_ceiling,
            "output_budget": self.output_budget,
            "carry_cap": self.carry_cap,
            "carry_raw_json": self.carry_raw_json,
            "headed": self.headed,
            "prompt_digest": self.prompt_digest,
            "notes": self.notes,
        }


def _shared_schema(ceiling: int) -> tuple[FieldSpec, ...]:
    """The deployed shared schema: one summary string plus two arrays that are not carried."""
    return (
        FieldSpec("summary", ceiling, "Summary of the conversation so far."),
        FieldSpec("preserved_paths", None, "File paths touched.", carried=False, kind="array"),
        FieldSpec("preserved_tool_names", None, "Tools used.", carried=False, kind="array"),
    )


def _single(ceiling: int, description: str | None = None) -> tuple[FieldSpec, ...]:
    return (FieldSpec("summary", ceiling, description),)


def _five_fields(total: int) -> tuple[FieldSpec, ...]:
    per_field = total // len(SECTIONS)
    return tuple(FieldSpec(s.key, per_field, None, section=s) for s in SECTIONS)


# The study declares no ceiling on k's fields: they carry what the model writes.
_SEMANTIC = (
    FieldSpec("task_state", None, "Where the task stands.", section=SECTIONS[0]),
    FieldSpec("identifiers", None, "Every identifier and value, verbatim.", section=SECTIONS[1]),
    FieldSpec("decisions", None, "Decisions made and constraints.", section=SECTIONS[2]),
    FieldSpec("problems", None, "Failures and their causes.", section=SECTIONS[3]),
    FieldSpec("next_steps", None, "What is still open.", section=SECTIONS[4]),
)


def _schema(id_: str, title: str, fields: tuple[FieldSpec, ...], schema_name: str,
            budget: int = 4096, **kw: Any) -> Arm:
    return Arm(id_, title, "schema", SHARED_SYSTEM_PROMPT, SCHEMA_INSTRUCTION, budget,
               fields=fields, schema_name=schema_name, **kw)


def _plain(id_: str, title: str, *, headed: bool, budget: int = 4096,
           carry_cap: int = DEFAULT_CARRY_CAP, **kw: Any) -> Arm:
    system = SHARED_SYSTEM_PROMPT if headed else PROSE_SYSTEM_PROMPT
    instruction = HEADED_INSTRUCTION if headed else PROSE_INSTRUCTION
    return Arm(id_, title, "plain", system, instruction, budget, carry_cap=carry_cap,
               headed=headed, **kw)


ARMS: dict[str, Arm] = {
    arm.id: arm
    for arm in (
        _schema("f", "deployed shared schema", _shared_schema(1024), "shared_summary",
                budget=DEPLOYED_BUDGET, carry_raw_json=True,
                notes="carries the raw JSON envelope"),
        _schema("n", "shared schema, ceiling lifted", _shared_schema(DEDICATED_CEILING),
                "shared_summary"),
        _schema("j", "dedicated schema, one field", _single(DEDICATED_CEILING), "carrier"),
        _schema("p", "one field with a long description",
                _single(DEDICATED_CEILING, LONG_FIELD_DESCRIPTION), "carrier"),
        _schema("q", "five named fields", _five_fields(DEDICATED_CEILING), "carrier"),
        _schema("k", "semantic schema", _SEMANTIC, "semantic_carrier"),
        _plain("o", "plain text, no headings", headed=False),
        _plain("m", "plain text under five headings", headed=True, budget=HEADED_BUDGET),
        _schema("t", "one field, ceiling halved", _single(DEDICATED_CEILING // 2), "carrier"),
        _plain("u", "five headings, carry cap 1,400", headed=True, budget=HEADED_BUDGET,
               carry_cap=1400),
        _plain("l", "five headings at the deployed 900-token budget", headed=True,
               budget=DEPLOYED_BUDGET, carry_cap=DEPLOYED_BUDGET),
        _schema("g", "deployed shared schema, parsed", _shared_schema(1024), "shared_summary",
                budget=DEPLOYED_BUDGET, notes="parsed and rendered rather than carried raw"),
    )
}
"""Every arm, keyed by its one-letter id, in catalog order."""


def get_arm(arm_id: str) -> Arm:
    """Return the arm with this id.

    Raises:
        ArmError: the id is not in the catalog.
    """
    try:
        return ARMS[arm_id]
    except KeyError:
        raise ArmError(f"unknown arm '{arm_id}' (known: {' '.join(ARMS)})") from None


def check_catalog(arms: dict[str, Arm] = ARMS) -> None:
    """Enforce the catalog's invariants; raise ArmError naming the first one broken.

    - q's per-field ceiling is j's ceiling divided by the number of sections;
    - j, p, q, m, t, u share one system prompt byte for byte, it asks for the five named
      sections, and o has its own;
    - f and l answer within the deployed 900-token budget, m within 2,400.
    """
    j, q = arms["j"], arms["q"]
    expected = j.declared_ceiling // len(SECTIONS)  # type: ignore[operator]
    for spec in q.carried_fields:
        if spec.max_length != expected:
            raise ArmError(f"arm q field '{spec.name}' ceiling {spec.max_length} != j/5 = {expected}")
    shared = {arms[a].system_prompt for a in SHARED_PROMPT_ARMS}
    if len(shared) != 1:
        raise ArmError("arms j, p, q, m, t, u must share one system prompt")
    if SECTIONS_REQUEST not in next(iter(shared)):
        raise ArmError("the shared system prompt must ask for the five named sections")
    if arms["o"].system_prompt in shared:
        raise ArmError("arm o must have its own system prompt")
    for arm_id, budget in (("f", DEPLOYED_BUDGET), ("l", DEPLOYED_BUDGET), ("m", HEADED_BUDGET)):
        if arms[arm_id].output_budget != budget:
            raise ArmError(f"arm {arm_id} output budget {arms[arm_id].output_budget} != {budget}")


check_catalog()


def fact_line_chars(facts: Sequence[tuple[str, str]]) -> int:
    """Characters the planted facts take as one ``- label: value`` line each (newlines
    included): the least a carrier needs to keep every value when it cannot tell the graded
    facts from the decoys."""
    return sum(len(f"- {label}: {value}\n") for label, value in facts)


def capacity_note(arm: Arm, facts: Sequence[tuple[str, str]], graded: int) -> str | None:
    """Say when an arm's declared ceiling cannot hold a scenario's planted facts even one line
    each — so a carrier that keeps every value it can (sim/faithful) still loses the oldest
    there and scores low — or None when it can (or the arm declares no ceiling).

    Args:
        arm: the arm.
        facts: every planted (label, value), graded facts and decoys alike.
        graded: how many of them are graded.
    """
    ceiling = arm.declared_ceiling
    need = fact_line_chars(facts)
    if ceiling is None or need <= ceiling:
        return None
    return (f"arm {arm.id}: its declared ceiling of {ceiling:,} characters cannot hold the "
            f"{len(facts)} planted facts ({graded} graded), which take {need:,} characters as "
            "one line each, so even a carrier that keeps every value (sim/faithful) loses the "
            "oldest and scores low there")

"""Simulated temperaments folded through a synthetic multi-segment session, via the real client.

The conversation follows the transcript convention scenario generators use: ``[assistant]``,
``[operator]`` and ``[tool result: name]`` turns, timestamped filler logs, facts as
``label: value`` tool-output lines or ``the <label> is <value>`` sentences.
"""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kestrel_facts import KESTREL_GRADED

from foldscope.core.forensics import fact_state
from foldscope.core.identifiers import main_kind
from foldscope.core.messages import (
    UNKNOWN,
    fold_user_message,
    headings_instruction,
    recall_user_message,
)
from foldscope.core.nearmiss import is_near_miss, near_miss
from foldscope.core.signatures import signature_hits
from foldscope.engine.client.chat import ChatRequest
from foldscope.engine.connect import make_client
from foldscope.engine.models import resolve_model
from foldscope.engine.sim.request import StringField
from foldscope.engine.sim.temperaments import garble, map_fields

GRADED = KESTREL_GRADED
DECOYS = {f"cluster id {i}": f"kc-{i:02d}-eu" for i in range(8)} | {
    f"tenant code {i}": f"TC-{9100 + i}" for i in range(8)}
SPLIT = (3, 3, 2, 2, 3, 1)
TOOLS = ("kubectl", "psql", "helm", "curl", "terraform")

J_SCHEMA = {"type": "json_schema", "json_schema": {"name": "carrier", "strict": True, "schema": {
    "type": "object", "properties": {"summary": {"type": "string", "maxLength": 9600}},
    "required": ["summary"], "additionalProperties": False}}}
Q_FIELDS = ("progress", "facts_and_values", "decisions_and_constraints", "failures", "open_items")
Q_SCHEMA = {"type": "json_schema", "json_schema": {"name": "carrier", "strict": True, "schema": {
    "type": "object",
    "properties": {f: {"type": "string", "maxLength": 1920} for f in Q_FIELDS},
    "required": list(Q_FIELDS), "additionalProperties": False}}}
F_SCHEMA = {"type": "json_schema", "json_schema": {"name": "carrier", "strict": True, "schema": {
    "type": "object", "properties": {
        "summary": {"type": "string", "maxLength": 1024},
        "paths": {"type": "array", "items": {"type": "string"}},
        "tool_names": {"type": "array", "items": {"type": "string"}}},
    "required": ["summary", "paths", "tool_names"], "additionalProperties": False}}}


def conversation(seed: int = 0) -> list[str]:
    """Six segments: graded facts split 3/3/2/2/3/1 across roles, decoys, tool calls, logs."""
    rng = random.Random(seed)
    graded = list(GRADED.items())
    decoys = list(DECOYS.items())
    segments = []
    for n, take in enumerate(SPLIT):
        facts, graded = graded[:take], graded[take:]
        lines = [f"[assistant] Continuing the ledger migration, part {n + 1}."]
        for i, (label, value) in enumerate(facts + decoys[n * 2:n * 2 + 3]):
            tool = TOOLS[(n + i) % len(TOOLS)]
            lines.append(f"[assistant] Running {tool} to inspect the cluster.")
            lines.append(f"[tool result: {tool}]")
            for k in range(12):
                lines.append(f"2026-07-12T10:{n:02d}:{k:02d}.{rng.randint(100, 999)}Z "
                             f"{rng.choice(['INFO', 'DEBUG', 'WARN'])} worker-{k} heartbeat ok "
                             f"port=62{k}14 path=/tmp/x{k}")
            role = i % 3
            if role == 0:
                lines.append(f"{label}: {value}")
            elif role == 1:
                lines.append("status: complete")
                lines.append(f"[assistant] Noted: the {label} is {value}.")
            else:
                lines.append(f"[operator] For the record, the {label} is {value}.")
        lines.append("[assistant] We decided to keep writes frozen until the cutover.")
        lines.append("[operator] Next we still need to confirm the rollback plan.")
        segments.append("\n".join(lines))
    return segments


async def fold_through(model: str, response_format: dict | None, *, seed: int = 0,
                       instruction: str = "Write the new summary.", max_tokens: int = 4096,
                       segments: list[str] | None = None) -> tuple[str, list, dict]:
    """Fold every segment, then recall; return (final carrier, fold replies, answers)."""
    segments = segments or conversation()
    replies = []
    carrier = ""
    async with make_client(resolve_model(model)) as client:
        for i, seg in enumerate(segments):
            msg = fold_user_message(carrier, [seg], i, len(segments), instruction)
            reply = await client.chat(ChatRequest(
                [{"role": "system", "content": "You maintain an agent's running summary."},
                 {"role": "user", "content": msg}], max_tokens, response_format, seed=seed))
            replies.append(reply)
            carrier = render(reply.content, response_format)
        recall = await client.chat(ChatRequest(
            [{"role": "user", "content": recall_user_message(carrier, list(GRADED))}], 1024,
            seed=seed))
    answers = {}
    for line in recall.content.splitlines():
        label, _, value = line.partition(": ")
        answers[label] = value
    return carrier, replies, answers


def render(content: str, response_format: dict | None) -> str:
    """Schema arms carry their fields back as headed text (as the fold layer does)."""
    if response_format is None:
        return content
    obj = json.loads(content)
    strings = {k: v for k, v in obj.items() if isinstance(v, str)}
    if len(strings) == 1:
        return next(iter(strings.values()))
    return "\n".join(f"## {k.replace('_', ' ').capitalize()}\n{v}" for k, v in strings.items())


def correct(answers: dict) -> int:
    return sum(answers.get(label) == value for label, value in GRADED.items())


@pytest.mark.parametrize("shape", ["j", "q", "m", "o"])
async def test_faithful_keeps_every_fact(shape):
    rf = {"j": J_SCHEMA, "q": Q_SCHEMA}.get(shape)
    instruction = headings_instruction() if shape == "m" else "Write the new summary."
    carrier, replies, answers = await fold_through("sim/faithful", rf, instruction=instruction)
    assert correct(answers) == 14
    assert all(r.finish_reason == "stop" and r.simulated for r in replies)
    planted = "\n".join(conversation())
    for label, value in DECOYS.items():
        if value in planted:
            assert f"{label}: {value}" in carrier
    if rf is not None:
        for r in replies:
            obj = json.loads(r.content)
            props = rf["json_schema"]["schema"]["properties"]
            assert set(obj) == set(props)
            assert all(len(obj[k]) <= p["maxLength"] for k, p in props.items())


async def test_faithful_writes_to_a_tight_ceiling_dropping_oldest():
    tight = json.loads(json.dumps(J_SCHEMA))
    tight["json_schema"]["schema"]["properties"]["summary"]["maxLength"] = 700
    carrier, replies, answers = await fold_through("sim/faithful", tight)
    for r in replies:
        assert r.finish_reason == "stop"
        assert len(json.loads(r.content)["summary"]) <= 700
    # The latest facts survive; the oldest went first.
    assert answers["release tag"] == GRADED["release tag"]
    assert answers["ledger service port"] == UNKNOWN


async def test_describer_loses_facts_in_one_slot_but_not_when_divided():
    _, replies, j_answers = await fold_through("sim/describer", J_SCHEMA)
    assert correct(j_answers) <= 2
    summary = json.loads(replies[-1].content)["summary"]
    assert "tool calls" in summary and "configuration values" in summary
    _, _, o_answers = await fold_through("sim/describer", None)
    assert correct(o_answers) <= 2
    _, _, q_answers = await fold_through("sim/describer", Q_SCHEMA)
    assert correct(q_answers) == 14
    _, _, m_answers = await fold_through("sim/describer", None, instruction=headings_instruction())
    assert correct(m_answers) == 14


def _with_ceiling(ceiling: int) -> dict:
    rf = json.loads(json.dumps(J_SCHEMA))
    rf["json_schema"]["schema"]["properties"]["summary"]["maxLength"] = ceiling
    return rf


@pytest.mark.parametrize("ceiling", [9600, 4800, 1024])
@pytest.mark.parametrize("seed", [0, 1, 2])
async def test_describer_fills_most_of_an_undivided_slot_with_description(ceiling, seed):
    # The study's describers fill 59–100 % of the ceiling; the sim reads the ceiling from the
    # request's schema alone and writes description, not values.
    rf = _with_ceiling(ceiling)
    _, replies, answers = await fold_through("sim/describer", rf, seed=seed)
    assert correct(answers) <= 2
    for r in replies:
        summary = json.loads(r.content)["summary"]
        assert 0.59 * ceiling <= len(summary) <= ceiling and r.finish_reason == "stop"
    final = json.loads(replies[-1].content)["summary"]
    present = [label for label, value in GRADED.items() if value in final]
    assert len(present) <= 2
    _, faithful, _ = await fold_through("sim/faithful", rf, seed=seed)
    gist_carrier, _, _ = await fold_through("sim/gister", rf, seed=seed)
    # Over-writing vs under-writing: the gister stays under half the ceiling (the default
    # failure-mode cut), the describer above it.
    assert len(gist_carrier) < 0.5 * ceiling < len(final)
    if ceiling == 9600:  # and more than the healthy faithful sim, which holds every value
        assert len(final) > len(json.loads(faithful[-1].content)["summary"])


async def test_describer_length_follows_the_declared_ceiling_not_anything_else():
    # Same conversation, only the schema's maxLength differs: the describer's reply follows it.
    _, big, _ = await fold_through("sim/describer", _with_ceiling(9600))
    _, small, _ = await fold_through("sim/describer", _with_ceiling(2000))
    assert len(json.loads(big[-1].content)["summary"]) > 3 * 2000 * 0.59
    assert len(json.loads(small[-1].content)["summary"]) <= 2000


@pytest.mark.parametrize("rf", [J_SCHEMA, Q_SCHEMA, None])
async def test_gister_loses_facts_whatever_the_shape(rf):
    carrier, replies, answers = await fold_through("sim/gister", rf)
    assert correct(answers) <= 2
    assert sum(a == UNKNOWN for a in answers.values()) >= 12
    assert len(carrier) < 1200


async def test_inventor_fabricates_at_recall():
    _, _, answers = await fold_through("sim/inventor", J_SCHEMA)
    assert UNKNOWN not in answers.values()
    assert correct(answers) <= 2
    invented = [a for label, a in answers.items() if a != GRADED[label]]
    assert len(invented) >= 12
    # Mostly stock stand-ins the signatures name, some random values of the right shape.
    stock = [a for a in invented if signature_hits(a)]
    assert len(stock) >= len(invented) // 3
    assert len(stock) < len(invented)


@pytest.mark.parametrize("label", list(GRADED))
def test_inventor_stock_stand_ins_all_hit_a_signature(label):
    from foldscope.engine.sim.temperaments import _STOCK, STOCK_SHARE

    assert 0 < STOCK_SHARE < 1
    for words, stock, _ in _STOCK:
        if any(w in label.casefold() for w in words):
            assert all(signature_hits(v) for v in stock), stock
            break


@settings(max_examples=60)
@given(st.sampled_from(sorted(set(GRADED.values()) | set(DECOYS.values()))), st.integers(0, 10**6))
def test_garble_is_an_edit_the_near_miss_rules_name(value, seed):
    garbled = garble(value, random.Random(seed))
    if main_kind(value) is None:
        return
    assert garbled != value
    miss = is_near_miss(garbled, value)
    assert miss is not None, (garbled, value)
    assert miss.rule in ("transposed", "char_dropped", "digit_changed", "minute_changed",
                         "truncated", "case_changed")


async def test_garbler_mutates_some_values_and_answers_from_its_carrier():
    mutated = corrupted = present = 0
    for seed in range(3):
        carrier, replies, answers = await fold_through("sim/garbler", J_SCHEMA, seed=seed)
        assert all(r.simulated for r in replies)
        for label, value in GRADED.items():
            state = fact_state(carrier, value)
            present += state == "present"
            if state == "mutated":
                mutated += 1
                miss = near_miss(carrier, value)
                corrupted += answers[label] == miss.altered
    assert mutated >= 2 and present >= mutated
    assert corrupted >= 1  # the recall repeats a mutation it carried


async def test_deterministic_per_seed():
    a = await fold_through("sim/describer", J_SCHEMA, seed=5)
    b = await fold_through("sim/describer", J_SCHEMA, seed=5)
    assert [r.content for r in a[1]] == [r.content for r in b[1]]
    assert [r.request_digest for r in a[1]] == [r.request_digest for r in b[1]]
    carriers = {(await fold_through("sim/describer", J_SCHEMA, seed=s))[0] for s in range(6)}
    assert len(carriers) > 1  # the seed matters


async def test_output_budget_truncates_with_length():
    _, replies, _ = await fold_through("sim/faithful", None, instruction=headings_instruction(),
                                       max_tokens=60)
    assert all(len(r.content) <= 240 for r in replies)
    assert replies[-1].finish_reason == "length"
    assert replies[-1].completion_tokens <= 60


async def test_array_fields_are_filled_from_the_segment():
    _, replies, _ = await fold_through("sim/faithful", F_SCHEMA)
    obj = json.loads(replies[0].content)
    assert "kubectl" in obj["tool_names"]
    assert all(isinstance(p, str) and p.startswith("/") for p in obj["paths"])
    assert len(obj["summary"]) <= 1024


def test_field_mapping_is_memoised_per_schema_but_never_shared():
    fields = [StringField(name, 1920, "") for name in
              ("progress", "facts_and_values", "decisions_and_constraints", "failures",
               "open_items")]
    mapping, facts_field = map_fields(fields)
    assert facts_field == "facts_and_values" and mapping["failures"] == "failures"
    mapping["failures"] = "progress"
    assert map_fields(list(fields))[0]["failures"] == "failures"

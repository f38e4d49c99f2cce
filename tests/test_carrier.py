"""Carrier rules: parse and recover schema replies, render fields, clip at line boundaries."""

import json

from hypothesis import given
from hypothesis import strategies as st

from foldscope.core.arms import ARMS
from foldscope.core.carrier import (
    carry_forward,
    clip_to_cap,
    headings_carried,
    parse_schema_reply,
    render_fields,
)
from foldscope.core.sections import SECTIONS
from foldscope.core.tokens import estimate_tokens

Q = ARMS["q"]
J = ARMS["j"]


def q_reply(**overrides):
    fields = {s.key: f"{s.heading} text" for s in SECTIONS}
    fields.update(overrides)
    return json.dumps(fields)


def test_valid_reply_parses_ok_and_renders_headed_text():
    parsed = parse_schema_reply(Q, q_reply(facts_and_values="- ledger service port: 62114"))
    assert parsed.status == "ok"
    text = render_fields(Q, parsed.fields)
    assert "## Facts and values\n- ledger service port: 62114" in text
    assert headings_carried(text) == 5


def test_truncated_json_is_repaired_and_says_how():
    reply = q_reply()[:-25]
    parsed = parse_schema_reply(Q, reply)
    assert parsed.status == "repaired"
    assert "closed truncated JSON" in parsed.recovery
    assert parsed.fields["progress"] == "Progress text"


def test_missing_property_is_repaired_not_dropped():
    reply = json.dumps({s.key: "x" for s in SECTIONS[:4]})
    parsed = parse_schema_reply(Q, reply)
    assert parsed.status == "repaired" and "missing open_items" in parsed.recovery


def test_fenced_json_and_prose_wrapped_json():
    assert parse_schema_reply(J, '```json\n{"summary": "a"}\n```').status == "ok"
    assert parse_schema_reply(J, 'Here you go: {"summary": "a"} hope it helps').status == "ok"


def test_not_json_is_carried_as_raw_text():
    parsed = parse_schema_reply(J, "The port is 62114.")
    assert parsed.status == "raw_text"
    assert parsed.fields["summary"] == "The port is 62114."


def test_salvaged_by_pattern():
    parsed = parse_schema_reply(Q, '{"progress": "a", "facts_and_values": "b" oops "failures": "c"')
    assert parsed.status in {"salvaged", "repaired"}
    assert parsed.fields["progress"] == "a"


def test_empty_reply():
    assert parse_schema_reply(J, "  ").status == "empty"


def test_single_field_is_carried_as_its_text_and_f_carries_the_envelope():
    reply = json.dumps({"summary": "port 62114", "preserved_paths": ["/a"],
                        "preserved_tool_names": ["bash"]})
    assert carry_forward(ARMS["g"], reply).text == "port 62114"
    f = carry_forward(ARMS["f"], reply)
    assert f.text == reply and f.parse_status == "ok"
    assert f.fill_fraction == len("port 62114") / 1024


def test_plain_arm_takes_text_as_is():
    out = carry_forward(ARMS["m"], "## Progress\nok\n## Failures\nnone")
    assert out.parse_status == "plain" and out.headings_carried == 2 and out.fill_fraction is None


def test_clip_at_line_boundaries_records_removed_chars():
    text = "\n".join(f"- fact {i}: value-{i:05d}" for i in range(2000))
    clipped, removed = clip_to_cap(text, 1400)
    assert estimate_tokens(clipped) <= 1400
    assert removed == len(text) - len(clipped)
    assert all(line.startswith("- fact") and line.count("value-") == 1 for line in clipped.splitlines())
    assert clip_to_cap("short", 100) == ("short", 0)


@given(st.text(min_size=0, max_size=3000), st.integers(min_value=1, max_value=400))
def test_clip_never_exceeds_cap_and_is_a_prefix(text, cap):
    clipped, removed = clip_to_cap(text, cap)
    assert estimate_tokens(clipped) <= cap
    assert text.startswith(clipped)
    assert removed == len(text) - len(clipped)


def test_storable_replaces_only_lone_surrogates():
    from foldscope.core.text import storable

    assert storable("ok [b]x[/b] \x1b[31m") == "ok [b]x[/b] \x1b[31m"
    assert storable("a\ud800b") == "a\ufffdb"
    assert storable("😀") == "😀"

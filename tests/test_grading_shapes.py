"""Answers as real models write them (issues 18 and 21): every layout binds, one label has one
value across the whole answer, paraphrased labels bind (never to the wrong one of two similar
labels), kind-aware extensions, abstentions and answers that give nothing."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kestrel_facts import KESTREL_GRADED

from foldscope.core.grading import bind_answer, grade_answer, judge_value, parse_answer


class _Fact:
    def __init__(self, label: str, value: str, kind: str) -> None:
        self.label, self.value, self.kind = label, value, kind


KINDS = {"ledger service port": "port", "install lock path": "path", "backup cutoff": "timestamp",
         "admin console port": "port", "ledger shard count": "count", "on-call handle": "handle",
         "tenant UUID": "uuid", "freeze start": "timestamp", "certificate expiry": "timestamp",
         "cache origin": "url", "DNS zone": "hostname", "signing key id": "key_id",
         "owning department": "department", "release tag": "version"}
FACTS = [_Fact(label, value, KINDS[label]) for label, value in KESTREL_GRADED.items()]
LABELS = [f.label for f in FACTS]
VALUES = [f.value for f in FACTS]
# A wrong value of each fact's own kind (what a model that misread the carrier would give).
WRONG = {
    "ledger service port": "62115", "install lock path": "/opt/kestrel/state/install.lck",
    "backup cutoff": "2026-07-14 01:45 UTC", "admin console port": "47301",
    "ledger shard count": "16 shards", "on-call handle": "@marta.oncall",
    "tenant UUID": "3f1c9a52-7d4e-4b8a-9e21-c5d0b7a6f414", "freeze start": "2026-07-18T22:00Z",
    "certificate expiry": "2026-08-02 06:00 UTC",
    "cache origin": "https://origin-8.cdn.kestrel-internal.net/assets",
    "DNS zone": "zone-a.kestrel-internal.net", "signing key id": "kid-7F3A9C22",
    "owning department": "Отдел платежей-4", "release tag": "v4.18.1-rc3",
}


def _grades(answer: str) -> dict[str, object]:
    return {g.label: g for g in grade_answer(answer, FACTS, rivals=VALUES)}


def _correct(answer: str) -> int:
    return sum(g.correct for g in _grades(answer).values())


# --- layouts ------------------------------------------------------------------------------------

def _lines(pairs, fmt):
    return "\n".join(fmt.format(i=i, l=label, v=value) for i, (label, value) in
                     enumerate(pairs, 1))


LINE_FORMATS = [
    "{l}: {v}", "- {l}: {v}", "* **{l}:** {v}", "**{l}**: {v}", "**{l}** {v}", "- {l} {v}",
    "{i}. {l} {v}", "{i}. {l}: {v}", "{l}? {v}", "{l} = {v}", "{l} — {v}", "{l} | {v}",
    "| {l} | {v} |", "> {l}: `{v}`", "### {l}\n{v}", "{l}:\n  {v}", "{l}\t{v}",
]


def _layout(pairs, kind: str, fmt: str = "{l}: {v}") -> str:
    if kind == "lines":
        return _lines(pairs, fmt)
    if kind == "capitalised":
        return _lines([(lab[0].upper() + lab[1:], v) for lab, v in pairs], "{l} {v}")
    if kind == "index_table":
        return "| # | Label | Value |\n|---|---|---|\n" + _lines(pairs, "| {i} | {l} | {v} |")
    if kind == "value_first_table":
        return "| Value | Label |\n|---|---|\n" + _lines(pairs, "| {v} | {l} |")
    if kind == "notes_table":
        return "| Field | Answer | Source |\n|:--|:--|:--|\n" + _lines(pairs, "| {l} | {v} | chunk {i} |")
    if kind == "bare_table":
        return _lines(pairs, "{l} | {v}")
    if kind == "json_object":
        return "```json\n" + json.dumps(dict(pairs), ensure_ascii=False, indent=2) + "\n```"
    if kind == "json_answers":
        return json.dumps({"answers": [{"label": lab, "value": v} for lab, v in pairs]},
                          ensure_ascii=False)
    if kind == "json_list":
        return "Here you go:\n" + json.dumps([{"field": lab, "answer": v} for lab, v in pairs],
                                             ensure_ascii=False) + "\nDone."
    if kind == "json_nested":
        return json.dumps({"result": {"facts": {lab: {"value": v, "source": "chunk 2"}
                                                for lab, v in pairs}}}, ensure_ascii=False)
    if kind == "json_snake":
        return json.dumps({lab.replace(" ", "_").replace("-", "_"): v for lab, v in pairs},
                          ensure_ascii=False)
    if kind == "yaml_records":
        return "answers:\n" + _lines(pairs, "  - label: {l}\n    value: {v}")
    if kind == "echo_then_answers":
        return "Questions:\n" + "\n".join(f"- {lab}" for lab, _ in pairs) + "\n\nAnswers:\n" + \
            _lines(pairs, "- {l}: {v}")
    raise AssertionError(kind)


LAYOUTS = ["lines", "capitalised", "index_table", "value_first_table", "notes_table",
           "bare_table", "json_object", "json_answers", "json_list", "json_nested", "json_snake",
           "yaml_records", "echo_then_answers"]


@settings(max_examples=80, deadline=None)
@given(st.permutations(list(KESTREL_GRADED.items())), st.sampled_from(LAYOUTS),
       st.sampled_from(LINE_FORMATS), st.sets(st.sampled_from(LABELS), max_size=5))
def test_every_layout_in_any_label_order_binds(pairs, layout, fmt, wrong):
    pairs = [(label, WRONG[label] if label in wrong else value) for label, value in pairs]
    grades = _grades(_layout(pairs, layout, fmt))
    for label, g in grades.items():
        assert g.correct is (label not in wrong), (layout, fmt, label, g)
        if label in wrong:
            assert not g.hedged and not g.abstained and not g.nothing, (layout, fmt, label, g)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(LAYOUTS), st.sampled_from(LAYOUTS), st.sampled_from(LINE_FORMATS),
       st.sampled_from(["\n", "\n\nCorrection:\n", "\n\nAlternatives, if those are wrong:\n",
                        "\n\n---\n", "\nOn second thought:\n"]))
def test_the_repetition_shotgun_scores_zero(first, second, fmt, between):
    right = list(KESTREL_GRADED.items())
    wrong = [(label, WRONG[label]) for label, _ in right]
    answer = _layout(right, first, fmt) + between + _layout(wrong, second, fmt)
    grades = _grades(answer)
    assert sum(g.correct for g in grades.values()) == 0
    assert all(g.hedged for g in grades.values()), [g for g in grades.values() if not g.hedged]


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(LAYOUTS), st.sampled_from(LAYOUTS), st.sampled_from(LINE_FORMATS))
def test_the_same_right_value_twice_is_still_correct(first, second, fmt):
    right = list(KESTREL_GRADED.items())
    assert _correct(_layout(right, first, fmt) + "\n\n" + _layout(right, second, fmt)) == 14


def test_issue_examples_of_one_label_with_two_values():
    right = _layout(list(KESTREL_GRADED.items()), "lines")
    assert _grades(right + "\nledger service port: 47031")["ledger service port"].hedged
    g = _grades(right + "\nCorrection: the ledger service port is actually 8080.")
    assert g["ledger service port"].hedged and sum(x.correct for x in g.values()) == 13
    g = _grades("ledger service port: unknown\n" + right)["ledger service port"]
    assert g.hedged and not g.abstained
    g = _grades("ledger service port: 8080\n" + right)["ledger service port"]
    assert g.hedged and not g.correct


@pytest.mark.parametrize("found", [
    "~~62115~~ 62114", "<del>62115</del> 62114", "not 62115 but 62114", "62115 is wrong; 62114",
    "~~47031~~ **62114**", "not 62110, 62114",
])
def test_a_struck_or_negated_value_then_one_asserted_value_is_that_value(found):
    verdict = judge_value(found, "62114", tag="port", rivals=VALUES)
    assert verdict.correct and not verdict.hedged


@pytest.mark.parametrize(("found", "given"), [
    ("~~62114~~ 62115", "62115"), ("not 62114 but 47031", "47031"),
])
def test_struck_right_value_then_a_wrong_one_is_that_wrong_value(found, given):
    verdict = judge_value(found, "62114", tag="port", rivals=VALUES)
    assert not verdict.correct and not verdict.hedged and verdict.given == given


@pytest.mark.parametrize("found", ["~~62114~~ 62114", "62114, not 62115", "not 62114"])
def test_self_contradiction_and_trailing_negation_stay_hedged(found):
    assert judge_value(found, "62114", tag="port", rivals=VALUES).hedged


# --- real answer shapes (issue 21) ---------------------------------------------------------------

@pytest.mark.parametrize("line", [
    "- backup cutoff 2026-07-14 01:26 UTC", "**backup cutoff** 2026-07-14 01:26 UTC",
    "1. backup cutoff 2026-07-14 01:26 UTC", "Backup cutoff 2026-07-14 01:26 UTC",
    "backup cutoff: 2026-07-14 01:26 UTC", "Backup cutoff? 2026-07-14 01:26 UTC",
    "backup cutoff | 2026-07-14 01:26 UTC", "The backup cutoff is 2026-07-14 01:26 UTC.",
])
def test_a_value_with_its_own_colon_is_never_split(line):
    g = _grades(line)["backup cutoff"]
    assert g.correct and g.found.rstrip(".").endswith("2026-07-14 01:26 UTC"), g


@pytest.mark.parametrize("line", [
    "- cache origin https://origin-7.cdn.kestrel-internal.net/assets",
    "**cache origin** https://origin-7.cdn.kestrel-internal.net/assets",
    "Cache origin: https://origin-7.cdn.kestrel-internal.net/assets",
])
def test_urls_bind_whole(line):
    assert _grades(line)["cache origin"].correct


def test_a_numbered_list_of_bare_values_binds_in_question_order():
    answer = "\n".join(f"{i}. {v}" for i, v in enumerate(VALUES, 1))
    assert _correct(answer) == 14
    echoed = "\n".join(f"{i}. {label}" for i, label in enumerate(LABELS, 1))
    assert _correct(echoed + "\n\nAnswers:\n" + answer) == 14
    g = _grades(echoed + "\n\nAnswers:\n")
    assert all(x.nothing and x.found != "Answers:" for x in g.values())


@pytest.mark.parametrize(("line", "label"), [
    ("Ledger port: 62114", "ledger service port"),
    ("Port of the ledger service: 62114", "ledger service port"),
    ("The ledger service listens on port 62114.", "ledger service port"),
    ("Number of ledger shards: 19 shards", "ledger shard count"),
    ("Ledger shards: 19 shards", "ledger shard count"),
    ("Cert expiry: 2026-08-02 06:10 UTC", "certificate expiry"),
    ("Freeze begins: 2026-07-18T22:45Z", "freeze start"),
    ("The freeze begins at 2026-07-18T22:45Z.", "freeze start"),
    ("Console port — 47031", "admin console port"),
    ("Admin port: 47031", "admin console port"),
    ("Lock file path: /opt/kestrel/state/install.lock", "install lock path"),
    ("Key ID: kid-7F3A9C21", "signing key id"),
    ("Tenant id: 3f1c9a52-7d4e-4b8a-9e21-c5d0b7a6f413", "tenant UUID"),
    ("Oncall handle: @marta.v-oncall", "on-call handle"),
    ("On call handle: @marta.v-oncall", "on-call handle"),
    ("ledgerServicePort: 62114", "ledger service port"),
])
def test_paraphrased_labels_bind(line, label):
    g = _grades(line)
    assert g[label].correct, g[label]
    assert sum(x.correct for x in g.values()) == 1


@pytest.mark.parametrize("line", [
    "Port: 62114", "The port is 62114", "Ledger: 62114", "Service: 62114",
    "I think the service probably uses 62114.", "Console ledger port: 62114",
    "Admin ledger port: 62114", "Expiry: 2026-08-02 06:10 UTC ; start 2026-07-18T22:45Z",
])
def test_ambiguous_paraphrases_are_refused(line):
    bound = bind_answer(line, LABELS)
    named = [label for label, b in bound.items() if b]
    assert "ledger service port" not in named or "admin console port" not in named
    assert not (bound["ledger service port"] and bound["admin console port"])
    for label in ("ledger service port", "admin console port"):
        if bound[label]:  # "Console ledger port" names words of both: bound to neither
            pytest.fail(f"{line!r} bound {label}")


def test_two_similar_labels_in_one_sentence_keep_their_own_values():
    g = _grades("The ledger service listens on port 62114; the admin console uses port 47031.")
    assert g["ledger service port"].correct and g["admin console port"].correct


# --- extensions, hedges, abstentions, nothing -----------------------------------------------------

@pytest.mark.parametrize(("label", "found"), [
    ("backup cutoff", "2026-07-14 01:26 UTC+3"), ("backup cutoff", "2026-07-14 01:26 UTC+5"),
    ("backup cutoff", "2026-07-14 01:26 UTC+03"), ("backup cutoff", "2026-07-14 01:26 UTC-05:00"),
    ("freeze start", "2026-07-18T22:45Z+02"), ("freeze start", "2026-07-18T22:45:30Z"),
    ("release tag", "v4.18.2-rc3+build.7"), ("release tag", "v4.18.2-rc3.1"),
    ("signing key id", "kid-7F3A9C21/2"), ("signing key id", "kid-7F3A9C21:2"),
    ("install lock path", "/opt/kestrel/state/install.lock/"),
    ("install lock path", "/opt/kestrel/state/install.lock/tmp"),
])
def test_extensions_of_the_value_are_not_credited(label, found):
    g = _grades(f"{label}: {found}")[label]
    assert not g.correct and not g.nothing and not g.abstained, g


@pytest.mark.parametrize(("label", "found"), [
    ("backup cutoff", "2026-07-14 01:26 UTC."), ("release tag", "v4.18.2-rc3."),
    ("signing key id", "kid-7F3A9C21 (rotated yearly)"),
    ("install lock path", "`/opt/kestrel/state/install.lock`"),
    ("cache origin", "https://origin-7.cdn.kestrel-internal.net/assets/"),
])
def test_punctuation_after_the_value_is_no_extension(label, found):
    assert _grades(f"{label}: {found}")[label].correct


@pytest.mark.parametrize("found", [
    "62114 (unverified)", "62114 (unconfirmed)", "62114, to be confirmed", "62114 — best guess",
    "62114 (low confidence)", "tentatively 62114", "62114 (needs verification)",
])
def test_hedge_markers(found):
    g = _grades(f"ledger service port: {found}")["ledger service port"]
    assert g.hedged and not g.correct


@pytest.mark.parametrize("found", [
    "None recorded", "I'm not able to find this in the summary", "missing", "not specified",
    "not mentioned", "Not in the summary.", "The summary has no record of it",
    "Information not available", "nothing recorded", "I cannot locate it", "absent",
    "It is not part of the notes", "(none)", "none given", "Not documented",
    "I'm unable to find that", "There is no mention of it",
])
def test_real_abstention_phrasings(found):
    g = _grades(f"ledger service port: {found}")["ledger service port"]
    assert g.abstained and not g.hedged and not g.nothing, g


@pytest.mark.parametrize("answer", [
    "", "admin console port: 47031", "ledger service port:", "- ledger service port",
    "ledger service port: see the runbook", "ledger service port: the usual one",
    "ledger service port: it was discussed in the incident review",
])
def test_no_value_is_nothing_not_an_abstention(answer):
    g = _grades(answer)["ledger service port"]
    assert g.nothing and not g.abstained and not g.correct and not g.hedged, g


def test_prose_without_a_value_of_the_kind_is_nothing_but_a_kindless_value_is_a_value():
    g = _grades("backup cutoff: shortly before the freeze\nowning department: Finance")
    assert g["backup cutoff"].nothing
    assert not g["owning department"].nothing and not g["owning department"].correct


def test_parse_answer_joins_every_binding():
    got = parse_answer("ledger service port: 62114\n| ledger service port | 47031 |\n", LABELS)
    assert got["ledger service port"] == "62114 ; 47031"


# --- more shapes: Q/A, HTML, reasoning blocks, echoed lists, decorations ---------------------------

@pytest.mark.parametrize("answer", [
    "Q: ledger service port\nA: 62114",
    "<table><tr><th>Label</th><th>Value</th></tr><tr><td>ledger service port</td>"
    "<td>62114</td></tr></table>",
    "<ul><li>ledger service port: 62114</li><li>admin console port: 47031</li></ul>",
    "<think>maybe 62115 for the ledger service port</think>\nledger service port: 62114",
    "ledger service port,62114", "What is the ledger service port? 62114",
    "ledger service port\n: 62114", "1. ledger service port\n   Answer: 62114",
    "Ledger service port => 62114", "LEDGER SERVICE PORT: 62114", "ledger-service-port: 62114",
    "ledger service port: 62114 (see chunk 3 of the log)", "ledger service port: 62114 (#4)",
    "**Ledger Service Port** — `62114`",
])
def test_more_shapes_bind(answer):
    g = _grades(answer)["ledger service port"]
    assert g.correct, g


@pytest.mark.parametrize("sep", ["\n\n", "\n\nAnswers:\n", "\n"])
@pytest.mark.parametrize(("echo", "values"), [
    ("{i}. {l}", "{i}. {v}"), ("- {l}", "{v}"), ("{l}:", "{i}. {v}"), ("{l}?", "{i}) {v}"),
])
def test_an_echoed_question_list_then_bare_values_in_order(echo, values, sep):
    answer = _lines([(label, "") for label in LABELS], echo) + sep + \
        _lines(list(zip(LABELS, VALUES, strict=True)), values)
    assert _correct(answer) == 14


_DECOR = st.sampled_from(["{v}", "**{v}**", "`{v}`", "\"{v}\"", "{v}.", "{v} (from the carrier)",
                          "{v} (chunk 2)"])
_HEDGE = st.sampled_from(["{v} or {w}", "probably {v}", "{v} (unverified)", "{v}?", "{w}, not {v}",
                          "unknown", "I don't know", "{v} / {w}", "{v} (maybe {w})"])


@settings(max_examples=60, deadline=None)
@given(st.permutations(LABELS), st.sampled_from(LAYOUTS), _DECOR, st.sampled_from(LABELS), _HEDGE)
def test_one_hedged_label_among_right_ones(order, layout, decor, hedged_label, hedge):
    pairs = []
    for label in order:
        value = KESTREL_GRADED[label]
        text = hedge if label == hedged_label else decor
        pairs.append((label, text.format(v=value, w=WRONG[label])))
    grades = _grades(_layout(pairs, layout))
    for label, g in grades.items():
        if label == hedged_label:
            assert not g.correct, (layout, g)
            assert g.hedged or g.abstained, (layout, g)
        else:
            assert g.correct, (layout, label, g)


def _nest(value, depth: int):
    for i in range(depth):
        value = {f"level{i}": value} if i % 2 else [value]
    return value


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 6), st.sampled_from(["records", "object", "wrapped"]))
def test_json_at_any_depth(depth, shape):
    pairs = list(KESTREL_GRADED.items())
    if shape == "records":
        doc = [{"name": lab, "value": v} for lab, v in pairs]
    elif shape == "object":
        doc = dict(pairs)
    else:
        doc = {lab: {"answer": v, "confidence": "high"} for lab, v in pairs}
    assert _correct(json.dumps(_nest(doc, depth), ensure_ascii=False)) == 14


@pytest.mark.parametrize(("confidence", "hedged"), [
    ("high", False), ("low", True), ("medium", True), (0.95, False), (0.4, True), ("55%", True),
    ("certain", False),
])
def test_a_confidence_beside_the_value(confidence, hedged):
    doc = {"answers": [{"label": "ledger service port", "value": "62114",
                        "confidence": confidence}]}
    g = _grades(json.dumps(doc))["ledger service port"]
    assert g.hedged is hedged and g.correct is not hedged
    table = f"| label | value | confidence |\n|---|---|---|\n| ledger service port | 62114 | {confidence} |"
    g = _grades(table)["ledger service port"]
    assert g.hedged is hedged and g.correct is not hedged


# --- answers a real model wrote (SmolLM2-135M behind llama.cpp, /work/notes/real-answers.txt) ----

_REAL = __import__("pathlib").Path(__file__).parent / "fixtures" / "real_answers"
_TINY = [f for f in FACTS if f.label in ("ledger service port", "install lock path",
                                         "signing key id", "release tag")]


def _real(name: str) -> dict[str, object]:
    text = (_REAL / name).read_text(encoding="utf-8")
    return {g.label: g for g in grade_answer(text, _TINY, rivals=VALUES)}


def test_real_answer_listing_numbers_under_every_label_is_a_shotgun():
    grades = _real("smollm2-plain-list.txt")
    assert all(g.hedged and not g.correct for g in grades.values()), grades


def test_real_answer_with_numbered_stand_ins_and_prose_gives_nothing():
    # Fourteen numbered "1.0.23-SNAPSHAD" items for four labels are no list in question order,
    # and "The ledger service port is a key that allows you to manage your account" holds no
    # port: nothing was answered; nothing was abstained from either.
    grades = _real("smollm2-numbered-prose.txt")
    assert all(g.nothing and not g.abstained and not g.correct for g in grades.values()), grades


@pytest.mark.parametrize("answer", [
    "[" * 5000, "{" * 5000, "[1, " * 3000, "{\"a\": " * 3000, "see [a](b) " * 2000,
    "| a | b |\n" * 2000, "ledger service port: " + "1024, " * 3000,
])
def test_hostile_shapes_grade_without_error(answer):
    grades = _grades(answer)
    assert not any(g.correct for g in grades.values())


@pytest.mark.parametrize("answer", [
    "The ledger service port and the admin console port are 62114 and 47031 respectively.",
    "The ledger service port and the admin console port are 62114 and 47031.",
    "ledger service port, admin console port and release tag are 62114, 47031 and v4.18.2-rc3, "
    "respectively",
])
def test_labels_joined_in_one_sentence_bind_pairwise(answer):
    g = _grades(answer)
    assert g["ledger service port"].correct and g["admin console port"].correct


def test_pairwise_binding_never_pairs_a_hedge():
    g = _grades("The ledger service port and the admin console port are 62114 or 47031.")
    assert not g["ledger service port"].correct and not g["admin console port"].correct


def test_json_answers_numbered_in_question_order():
    doc = {"answers": {str(i): v for i, v in enumerate(VALUES, 1)}}
    assert _correct(json.dumps(doc, ensure_ascii=False)) == 14


@pytest.mark.parametrize("header", [
    "| Fact | Recalled value | Notes |", "| Item | Answer | Comment |", "| Question | Answer | - |",
    "| Key | Value | Source |", "| Parameter | Setting | Remarks |",
])
def test_table_headers_name_the_columns(header):
    rows = "\n".join(f"| **{lab}** | `{v}` | from chunk {i} |"
                     for i, (lab, v) in enumerate(KESTREL_GRADED.items(), 1))
    assert _correct(header + "\n|---|---|---|\n" + rows) == 14


# --- labels other than kestrel's: the binder knows no label by heart -------------------------------

_VOCAB = ["queue", "broker", "primary", "replica", "backup", "window", "owner", "region", "cluster",
          "token", "rotation", "gateway", "service", "port", "path", "deadline", "start", "id"]
_KIND_VALUES = [st.integers(1024, 65535).map(str),
                st.uuids().map(str),
                st.tuples(st.integers(1, 12), st.integers(1, 28)).map(
                    lambda t: f"2027-{t[0]:02d}-{t[1]:02d} 04:{t[1]:02d} UTC"),
                st.text(alphabet="abcdefgh", min_size=3, max_size=6).map(lambda s: f"/srv/{s}/run.lock")]


@st.composite
def _facts(draw):
    labels = draw(st.lists(st.lists(st.sampled_from(_VOCAB), min_size=2, max_size=3, unique=True)
                           .map(" ".join), min_size=2, max_size=6, unique=True))
    values = draw(st.lists(st.one_of(*_KIND_VALUES), min_size=len(labels), max_size=len(labels),
                           unique=True))
    return [_Fact(lab, v, "") for lab, v in zip(labels, values, strict=True)]


@settings(max_examples=60, deadline=None)
@given(_facts(), st.sampled_from(LAYOUTS), st.sampled_from(LINE_FORMATS))
def test_any_labels_in_any_layout_bind(facts, layout, fmt):
    # Labels that are word-prefixes of one another ("broker port" / "broker port id") still keep
    # their own lines: the longest label at a line's start wins.
    pairs = [(f.label, f.value) for f in facts]
    values = [f.value for f in facts]
    grades = grade_answer(_layout(pairs, layout, fmt), facts, rivals=values)
    assert all(g.correct for g in grades), [(layout, fmt, g) for g in grades if not g.correct]

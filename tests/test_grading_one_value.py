"""One value per label (issue 8): hedges, shotguns, negation, strike-through, abstention markers
and kind-aware boundaries, around random planted values."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from kestrel_facts import KESTREL_FACTS

from foldscope.core.answers import classify_fact
from foldscope.core.errors import ConfigError
from foldscope.core.grading import (
    competing_kinds,
    contains_token,
    default_markers,
    grade_answer,
    is_abstention,
    judge_value,
    markers_from_data,
)

KESTREL = KESTREL_FACTS
VALUES = [f.value for f in KESTREL]

# --- random planted values, one strategy per kind ---------------------------------------------

_seg = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_", min_size=1, max_size=8)
ports = st.integers(1024, 65535).map(str)
paths = st.lists(_seg, min_size=2, max_size=5).map(lambda p: "/" + "/".join(p) + ".lock")
handles = st.tuples(st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=2, max_size=8),
                    st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=6)).map(
    lambda t: f"@{t[0]}.{t[1]}-oncall")
uuids = st.uuids().map(str)
timestamps = st.tuples(st.integers(2000, 2099), st.integers(1, 12), st.integers(1, 28),
                       st.integers(0, 23), st.integers(0, 59)).map(
    lambda t: f"{t[0]:04d}-{t[1]:02d}-{t[2]:02d} {t[3]:02d}:{t[4]:02d} UTC")
versions = st.tuples(st.integers(0, 30), st.integers(0, 30), st.integers(0, 30)).map(
    lambda t: f"v{t[0]}.{t[1]}.{t[2]}")
key_ids = st.text(alphabet="0123456789ABCDEF", min_size=8, max_size=8).map(lambda s: f"kid-{s}")
departments = st.tuples(st.sampled_from(["Отдел", "Группа", "Служба"]),
                        st.sampled_from(["расчётов", "платежей", "учёта"]),
                        st.integers(1, 99)).map(lambda t: f"{t[0]} {t[1]}-{t[2]}")
KINDS = {"port": ports, "path": paths, "handle": handles, "uuid": uuids, "timestamp": timestamps,
         "version": versions, "key_id": key_ids, "department": departments}


@st.composite
def value_pair(draw, kinds=tuple(KINDS)):
    """A planted value of some kind and a different value of the same kind (its competitor)."""
    kind = draw(st.sampled_from(kinds))
    value = draw(KINDS[kind])
    other = draw(KINDS[kind])
    assume(other != value and other not in value and value not in other)
    return kind, value, other


HEDGES = [
    "{v} or {w}", "{w} (or maybe {v})", "{v} (possibly {w})", "either {v} or {w}",
    "probably {v}", "{v}?", "maybe {v}", "{v} — I think", "unknown (possibly {v})",
    "I don't know, perhaps {v}", "not {v}", "isn't {v}", "{v} is wrong", "~~{v}~~",
    "<del>{v}</del>", "{v}, {w}", "{v} / {w}", "{w}; {v}",
    "{v} | {w}", "{v}\n  - or {w}", "{v} (previously {w})", "{v} or so",
]
CORRECT = [
    "{v}", "**{v}**", "`{v}`", "_{v}_", "{v}.", "«{v}»", "{v} ({v})", "\"{v}\"",
]


def _grade(answer: str, value: str, kind: str, rivals=()):
    fact = type("F", (), {"label": "the fact", "value": value, "kind": kind})()
    return grade_answer(f"the fact: {answer}", [fact], rivals=rivals)[0]


@settings(max_examples=60)
@given(value_pair(), st.sampled_from(HEDGES))
def test_hedges_around_a_random_value_are_never_credited(pair, template):
    kind, value, other = pair
    grade = _grade(template.format(v=value, w=other), value, kind, rivals=[other])
    assert not grade.correct
    assert grade.hedged and not grade.abstained


@settings(max_examples=60)
@given(value_pair(kinds=("port", "path", "handle", "uuid", "timestamp", "version", "key_id")),
       st.sampled_from(["{v}, {w}", "{w} {v}", "{v} and {w}", "{v}\n{w}"]))
def test_another_token_of_the_value_kind_competes_even_when_not_planted(pair, template):
    kind, value, other = pair
    grade = _grade(template.format(v=value, w=other).replace("\n", " "), value, kind)
    assert not grade.correct and grade.hedged


@settings(max_examples=60)
@given(value_pair(), st.sampled_from(CORRECT))
def test_a_plain_value_stays_correct(pair, template):
    kind, value, other = pair
    grade = _grade(template.format(v=value), value, kind, rivals=[other])
    assert grade.correct and not grade.hedged and not grade.abstained


@settings(max_examples=40)
@given(st.lists(st.sampled_from(VALUES), min_size=2, max_size=6, unique=True),
       st.sampled_from([", ", " / ", "; ", " or ", "\n  - "]))
def test_a_shotgun_scores_zero(picked, sep):
    line = sep.join(picked)
    answer = "\n".join(f"{f.label}: {line}" for f in KESTREL)
    grades = grade_answer(answer, KESTREL, rivals=VALUES)
    assert sum(g.correct for g in grades) == 0
    for g in grades:
        if g.expected in picked:
            assert g.hedged, g


def test_every_value_under_every_label_scores_zero():
    everything = " ".join(VALUES)
    grades = grade_answer("\n".join(f"{f.label}: {everything}" for f in KESTREL), KESTREL)
    assert sum(g.correct for g in grades) == 0
    assert all(g.hedged for g in grades)


@pytest.mark.parametrize("found", [
    "62114 or 47031", "47031 (or maybe 62114)", "unknown (possibly 62114)", "not 62114",
    "~~62114~~", "<del>62114</del>", "<strike>62114</strike> 62114", "6\u03362\u03361\u03361\u03364\u0336",
    "62114?", "62114, 8080", "port 62114 or port 8080", "62114 (formerly 62110)",
    "It isn't 62114", "62114 — incorrect", "~62114",
])
def test_issue_examples_are_hedged(found):
    verdict = judge_value(found, "62114", tag="port", rivals=["47031"])
    assert verdict.hedged and not verdict.correct and not verdict.abstained


@pytest.mark.parametrize(("value", "tag", "found"), [
    ("62114", "port", "62114"),
    ("62114", "port", "62114 (TCP)"),
    ("62114", "port", "62114/tcp"),
    ("62114", "port", "62114, as recorded in chunk 1 — the admin console port is separate"),
    ("19 shards", "count", "19 shards"),
    ("19 shards", "count", "19 shards across 3 regions"),
    ("2026-07-14 01:26 UTC", "timestamp", "2026-07-14 01:26 UTC"),
    ("2026-07-14 01:26 UTC", "timestamp", "2026-07-14 01:26 UTC (date 2026-07-14, 01:26 UTC)"),
    ("/opt/kestrel/state/install.lock", "path", "/opt/kestrel/state/install.lock."),
    ("@marta.v-oncall", "handle", "@marta.v-oncall on the pager"),
    ("https://origin-7.cdn.kestrel-internal.net/assets", "url",
     "https://origin-7.cdn.kestrel-internal.net/assets/"),
    ("Отдел расчётов-4", "department", "Отдел расчётов-4"),
])
def test_legitimate_answers_are_correct(value, tag, found):
    verdict = judge_value(found, value, tag=tag, rivals=[v for v in VALUES if v != value])
    assert verdict.correct and not verdict.hedged, verdict


@pytest.mark.parametrize("found", [
    "I don't know", "I do not know.", "unknown", "Unknown", "N/A", "n/a", "not recorded",
    "The summary does not record it", "the summary doesn't mention the port",
    "The summary does not say.", "no information", "No information available", "none", "—",
    "not available", "not specified", "cannot determine", "Can't determine from the summary",
    "The value was lost in compaction", "?", "**unknown**", "I don’t know",
    "I'm not sure", "unclear", "Uncertain.", "I do not have that information",
    "I don't have the port any more", "not retained in my notes", "no clue",
])
def test_abstention_markers(found):
    verdict = judge_value(found, "62114", tag="port", rivals=["47031"])
    assert verdict.abstained and not verdict.hedged and not verdict.correct
    assert is_abstention(found)


@pytest.mark.parametrize("found", [
    "62114 (not sure)", "not sure, 62114", "62114 I think, but unclear", "I don't have it; 62114?",
])
def test_uncertainty_beside_the_value_is_still_hedged(found):
    verdict = judge_value(found, "62114", tag="port", rivals=["47031"])
    assert verdict.hedged and not verdict.correct and not verdict.abstained


def test_a_single_wrong_value_is_neither_hedged_nor_abstained():
    verdict = judge_value("47031", "62114", tag="port", rivals=["47031"])
    assert not (verdict.correct or verdict.hedged or verdict.abstained)
    assert not is_abstention("47031")


def test_hedged_is_a_class_and_abstention_is_not_fabrication():
    grades = {g.label: g for g in grade_answer(
        "ledger service port: 62114 or 47031\nadmin console port: I don't know\n"
        "release tag: The summary does not record it", KESTREL, rivals=VALUES)}
    assert classify_fact(grades["ledger service port"], "present").answer_class == "hedged"
    assert classify_fact(grades["ledger service port"], "missing").answer_class == "hedged"
    assert classify_fact(grades["admin console port"], "missing").answer_class == \
        "honest_abstention"
    assert classify_fact(grades["release tag"], "missing").answer_class == "honest_abstention"


def test_several_labels_on_one_line_keep_their_own_values():
    grades = {g.label: g for g in grade_answer(
        "ledger service port: 62114, admin console port: 47031", KESTREL, rivals=VALUES)}
    assert grades["ledger service port"].correct and grades["admin console port"].correct


def test_competing_kinds_combine_value_shape_and_scenario_tag():
    assert {"number", "port"} <= competing_kinds("62114", "port")
    assert {"timestamp", "time"} <= competing_kinds("2026-07-14 01:26 UTC", "timestamp")
    assert "host" in competing_kinds("zone-b.kestrel-internal.net", "hostname")
    assert competing_kinds("Отдел расчётов-4", "department") == frozenset()


# --- kind-aware boundaries ---------------------------------------------------------------------

EXTENDERS = ["/x", ".bak", "-2", "@y", ":z", "x"]


@settings(max_examples=60)
@given(st.sampled_from(["path", "handle"]).flatmap(lambda k: KINDS[k]),
       st.sampled_from(EXTENDERS), st.sampled_from(["", " "]))
def test_a_name_inside_a_longer_one_is_not_the_value(value, extension, lead):
    assert not contains_token(lead + value + extension, value)
    assert not contains_token(lead + "a" + value, value)


@settings(max_examples=60)
@given(st.sampled_from(["path", "handle"]).flatmap(lambda k: KINDS[k]),
       st.sampled_from(["", " ", "(", "«", "`", "**", "\n"]),
       st.sampled_from(["", ".", ". Next", ",", ")", "»", "`", " now", ":", "/ "]))
def test_a_free_name_matches(value, before, after):
    # Issue 18: a path with a trailing separator names a directory, not the file.
    assume(not (value.startswith("/") and after.startswith("/")))
    assert contains_token(before + value + after, value)


# --- markers are data --------------------------------------------------------------------------

def test_user_markers_extend_the_defaults():
    extra = markers_from_data({"abstention": {"anywhere": ["keine ahnung"]},
                               "hedge": {"anywhere": ["vielleicht"]}}, base=default_markers())
    assert judge_value("keine Ahnung", "62114", markers=extra).abstained
    assert judge_value("vielleicht 62114", "62114", markers=extra).hedged
    assert not judge_value("keine Ahnung", "62114").abstained


@pytest.mark.parametrize("data", [
    {"hedge": {"anywhere": "or"}}, {"hedge": {"anywhere": ["("]}}, {"hedges": {}},
    {"hedge": {"everywhere": []}},
])
def test_bad_marker_files_are_one_line_errors(data):
    with pytest.raises(ConfigError) as err:
        markers_from_data(data, source="m.toml")
    assert "m.toml" in str(err.value) and "\n" not in str(err.value)

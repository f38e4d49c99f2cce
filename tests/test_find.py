"""The find rule (core.find): the query language, its one-line errors, the joint fact terms and
the time budget that keeps a catastrophic regular expression from hanging a search."""

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core.find import (
    FIELDS,
    FactItem,
    Findable,
    QueryError,
    find,
    matches,
    parse_query,
)

ROW = Findable("sim/garbler", "j", (FactItem("backup cutoff", "fabricated"),
                                    FactItem("on-call handle", "correct")),
               ("backup cutoff: 2026-07-14 01:30", "carrier with /opt/kestrel/state"), "done")
OTHER = Findable("sim/faithful", "q", (FactItem("backup cutoff", "correct"),), ("nothing here",),
                 "failed")


def hit(query: str, subject: Findable = ROW) -> bool:
    return matches(parse_query(query), subject)


def test_each_field_reads_its_own_values():
    assert hit("model:garbler") and not hit("model:faithful")
    assert hit("model:GARB")  # part of it, any case
    assert hit("arm:j") and hit("arm:J") and not hit("arm:jq")  # an arm whole
    assert hit("arm:q,j")  # alternatives
    assert hit("label:cutoff") and not hit("label:digest")
    assert hit("class:fabricated") and hit("class:fab") and hit("class:correct")
    assert not hit("class:honest_abstention")
    assert hit("text:kestrel") and hit("kestrel") and not hit("digest")
    assert hit('"/opt/kestrel"') and hit('text:"01:30"')
    assert hit(r"/20\d\d-07-14/") and not hit(r"/20\d\d-08/") and hit("/KESTREL/i")
    assert not hit("/KESTREL/")


def test_status_is_the_rows_whole_status_a_prefix_will_do():
    assert hit("status:done") and not hit("status:failed")
    assert hit("status:failed", OTHER) and hit("status:fail", OTHER) and hit("status:F", OTHER)
    assert hit("-status:failed") and not hit("-status:failed", OTHER)
    assert hit("status:failed,done", OTHER) and hit("status:failed,done")
    assert hit("status:fail model:faithful", OTHER) and not hit("status:fail arm:j", OTHER)
    with pytest.raises(QueryError, match="unknown status 'zebra'.*failed"):
        parse_query("status:zebra")


def test_a_row_left_running_by_a_dead_runner_is_found_as_interrupted():
    from foldscope.core.find import row_findable
    from foldscope.core.row import RowRecord

    row = RowRecord(id=1, position=0, scenario="smoke", model="m", arm="j", repeat=0,
                    status="running")
    assert matches(parse_query("status:running"), row_findable(row, (), ()))
    dead = row_findable(row, (), (), sweep_running=False)
    assert matches(parse_query("status:interrupted"), dead)
    assert not matches(parse_query("status:running"), dead)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["planned", "running", "done", "failed", "interrupted"]),
       st.sampled_from(["planned", "running", "done", "failed", "interrupted"]),
       st.integers(min_value=1, max_value=11), st.booleans())
def test_status_matches_exactly_the_status_its_prefix_names(status, wanted, cut, negated):
    subject = Findable("m", "j", (), ("failed done running",), status)  # texts never count
    query = ("-" if negated else "") + "status:" + wanted[:cut].upper()
    assert matches(parse_query(query), subject) == ((status == wanted) != negated)


def test_terms_all_hold_and_minus_negates():
    assert hit("model:garbler arm:j kestrel")
    assert not hit("model:garbler arm:q")
    assert hit("-model:faithful") and not hit("-model:garbler")
    assert hit("-class:honest_abstention") and not hit("-class:correct")


def test_class_and_label_terms_are_matched_by_one_fact():
    assert hit("label:cutoff class:fabricated")
    assert not hit("label:on-call class:fabricated")  # the row has both, not on one fact
    assert hit("label:on-call class:correct")
    assert not hit("label:cutoff class:fabricated", OTHER)


def test_an_empty_query_matches_everything():
    q = parse_query("   ")
    assert q.empty and find(q, [ROW, OTHER]).matched == (0, 1)


@pytest.mark.parametrize(("query", "says"), [
    ("colour:red", "unknown field 'colour'"),
    ("http://x", "quote a text that holds a colon"),
    ("class:zebra", "unknown class 'zebra'"),
    ("class:c", "ambiguous class 'c'"),
    ("model:", "'model:' has no value"),
    ("-", "'-' has no value"),
    ('label:"backup', "unterminated quote"),
    ("/(a/", "bad regular expression /(a/"),
    ("/[z-a]/", "bad regular expression /[z-a]/"),
    ("/opt", "unterminated regular expression"),
    ("/opt/kestrel", 'quote a text that starts with /: "/opt/kestrel"'),
    ("arm:j,", "empty alternative"),
    ('"a"b', "expected a space after"),
])
def test_a_bad_query_is_one_line_naming_what_is_wrong(query, says):
    with pytest.raises(QueryError) as e:
        parse_query(query)
    assert says in str(e.value) and "\n" not in str(e.value)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(list('ab :/"-,\\()[]*+?.icl') + [f + ":" for f in FIELDS]),
                max_size=20).map("".join))
def test_any_query_parses_or_fails_with_a_query_error(text):
    try:
        q = parse_query(text)
    except QueryError as e:
        assert str(e) and "\n" not in str(e)
        return
    find(q, [ROW, OTHER], budget_s=0.5)


@settings(max_examples=100, deadline=None)
@given(st.text(min_size=1, max_size=200), st.data())
def test_a_quoted_part_of_a_text_finds_it_and_its_negation_does_not(text, data):
    start = data.draw(st.integers(0, len(text) - 1))
    end = data.draw(st.integers(start + 1, len(text)))
    part = text[start:end]
    subject = Findable("m", "a", (), (text,))
    quoted = '"' + part.replace("\\", "\\\\").replace('"', '\\"') + '"'
    assert matches(parse_query(quoted), subject)
    assert not matches(parse_query("-" + quoted), subject)


def test_a_catastrophic_pattern_on_a_long_carrier_gives_up_within_its_budget():
    carriers = tuple("a" * 100_000 for _ in range(5))
    subjects = [Findable("m", "j", (), carriers) for _ in range(4)]
    q = parse_query("/(a+)+$b/")
    t0 = time.monotonic()
    result = find(q, subjects, budget_s=0.3)
    took = time.monotonic() - t0
    assert took < 5, took  # the budget bounds it (regex checks its timeout as it goes)
    assert result.matched == () and result.gave_up > 0
    assert "budget" in result.note()


def test_a_cancelled_search_stops_and_says_so():
    asked = []

    def cancelled() -> bool:
        asked.append(1)
        return len(asked) > 1

    result = find(parse_query("kestrel"), [ROW, ROW, ROW], cancelled=cancelled)
    assert result.cancelled and result.matched == (0,)


def test_cheap_terms_rule_out_a_subject_before_its_texts_are_searched():
    q = parse_query("/(a+)+$b/ model:nobody")
    result = find(q, [Findable("m", "j", (), ("a" * 100_000,))], budget_s=0.2)
    assert result.gave_up == 0 and result.matched == ()

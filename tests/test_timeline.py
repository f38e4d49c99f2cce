"""The fact timeline: each planted fact's state per fold, and its course through a row."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st
from test_nearmiss import named_edit_holds

from foldscope.core.forensics import (
    advance_histories,
    carrier_states,
    fact_timeline,
    fold_facts,
    start_histories,
)
from foldscope.core.grading import contains_token


@dataclass(frozen=True)
class P:
    label: str
    value: str
    chunk: int
    graded: bool = True
    kind: str = ""


FACTS = [P("port", "61873", 0, kind="port"), P("key", "kid-4C91E0A7", 0, kind="key_id"),
         P("zone", "zone-c.lyra-internal.net", 1, kind="hostname"),
         P("cluster", "kc-eu-n-5520", 1, graded=False, kind="cluster_id"),
         P("tenant", "9c2e71d4-0b5a-4f3e-8d16-2a7be94c0f58", 2, kind="uuid")]


def test_states_per_fold_and_each_facts_course():
    folds = [
        (0, 0, "- port: 61873\n- key: kid-4C91E0A7"),
        (1, 1, "- port: 61873\n- key: kid-4C91E0A1\n- zone: zone-c.lyra-internal.net"),
        (2, 2, "- port: 61873\n- tenant: 9c2e71d4\n- key: kid-4C91E0A7"),
    ]
    tl = fact_timeline(folds, FACTS)
    assert [f.state for f in tl.folds[0].facts] == ["present", "present", "not_yet", "not_yet",
                                                    "not_yet"]
    key1 = tl.folds[1].state("key")
    assert (key1.state, key1.altered, key1.rule) == ("mutated", "kid-4C91E0A1", "digit_changed")
    assert tl.folds[1].state("cluster").state == "missing"
    assert tl.folds[2].state("tenant").rule == "truncated"

    port, key, zone, cluster, tenant = tl.facts
    assert (port.planted_fold, port.first_carried_fold, port.lost_fold, port.returned,
            port.final_state) == (0, 0, None, False, "present")
    # Mutated at fold 1 is lost there; present again at fold 2 is flagged as a return.
    assert (key.lost_fold, key.returned, key.final_state) == (1, True, "present")
    assert (zone.planted_fold, zone.first_carried_fold, zone.lost_fold) == (1, 1, 2)
    assert zone.final_state == "missing"
    # A decoy dropped by the very fold that read it: never carried, lost at its planting fold.
    assert (cluster.graded, cluster.first_carried_fold, cluster.lost_fold) == (False, None, 1)
    assert (tenant.final_state, tenant.final_altered, tenant.final_rule) == (
        "mutated", "9c2e71d4", "truncated")


def test_catch_up_fold_plants_every_chunk_it_read():
    tl = fact_timeline([(0, 1, "port 61873"), (2, 2, "nothing")], FACTS)
    assert tl.history("zone").planted_fold == 0
    assert tl.history("tenant").planted_fold == 1
    assert tl.history("port").lost_fold == 1


def test_incremental_steps_equal_the_whole_timeline():
    folds = [(0, 0, "port 61873"), (1, 1, "port 61837 zone-c.lyra-internal.net"), (2, 2, "")]
    histories = start_histories(FACTS)
    for i, (a, b, text) in enumerate(folds):
        histories = advance_histories(histories, fold_facts(i, a, b, text, FACTS))
    assert histories == fact_timeline(folds, FACTS).facts


_words = st.sampled_from(["port", "key", "noted", "the", "zone", "value", "-", "kept", "61873",
                          "61837", "6187", "kid-4C91E0A7", "kid-4c91e0a7", "kid-4C91EA7",
                          "zone-c.lyra-internal.net", "zone-c.lyra-internal.nett", "9c2e71d4",
                          "9c2e71d4-0b5a-4f3e-8d16-2a7be94c0f58", "kc-eu-n-5520", "x61873",
                          "618733", "kc-eu-n-5520.bak", "2026-07-14", "@ops"])


@settings(max_examples=80)
@given(st.lists(_words, max_size=30).map(" ".join))
def test_reported_states_hold_on_any_carrier(carrier):
    for fact in carrier_states(carrier, FACTS, last_chunk=2):
        if fact.state == "present":
            assert contains_token(carrier, fact.value)
        elif fact.state == "missing":
            assert fact.value not in carrier
        else:
            assert fact.altered in carrier and fact.altered != fact.value
            assert named_edit_holds(fact.rule, fact.altered, fact.value)

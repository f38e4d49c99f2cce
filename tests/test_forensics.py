"""Per-fold forensics: present, mutated (near miss) or missing, and where a fact was lost."""

from dataclasses import dataclass

from foldscope.core.forensics import fact_state, fact_status
from foldscope.core.nearmiss import near_miss


@dataclass
class F:
    label: str
    value: str


def test_present_mutated_missing():
    carrier = "- ledger service port: 62114\n- signing key id: kid-7F3A9C2l\n"
    assert fact_state(carrier, "62114") == "present"
    assert fact_state(carrier, "kid-7F3A9C21") == "mutated"
    assert fact_state(carrier, "/opt/kestrel/state/install.lock") == "missing"


def test_glued_value_is_not_present():
    assert fact_state("port 621140", "62114") != "present"


def test_whitespace_runs_still_present():
    assert fact_status("cutoff 2026-07-14  01:26 UTC", [F("c", "2026-07-14 01:26 UTC")]) == {"c": "present"}


def test_near_miss_reports_the_altered_text():
    miss = near_miss("the tag was v4.18.2-rc4 yesterday", "v4.18.2-rc3")
    assert miss is not None and miss.altered == "v4.18.2-rc4" and miss.rule == "digit_changed"
    assert near_miss("abc", "xyz") is None


def test_fact_spans_mark_present_and_mutated_values_in_place():
    from foldscope.core.forensics import fact_spans

    carrier = "- port: 62114\n- key: kid-7F3A9C2l\n- again 62114."
    facts = [F("port", "62114"), F("key", "kid-7F3A9C21"), F("lost", "/opt/x.lock")]
    spans = fact_spans(carrier, facts)
    assert [(carrier[s.start:s.end], s.label, s.state) for s in spans] == [
        ("62114", "port", "present"), ("kid-7F3A9C2l", "key", "mutated"),
        ("62114", "port", "present")]


def test_remembered_bound_texts_are_the_ones_read_afresh():
    from foldscope.core.forensics import _BOUND_TEXTS, bound_texts

    carriers = ["- ledger shard count: 19\n- ledger service port: 62114",
                "The ledger shard count is 19 and the ledger holds 3 regions.",
                '{"facts": "ledger shard count: 19"}', "nothing here"]
    first = [bound_texts(c, "ledger shard count") for c in carriers]
    again = [bound_texts(c, "ledger shard count") for c in carriers]
    _BOUND_TEXTS.clear()
    assert first == again == [bound_texts(c, "ledger shard count") for c in carriers]
    assert first[0] == ["19"]

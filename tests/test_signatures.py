"""Stock-value signatures: the shipped rules name stand-ins, leave real values alone, and extend."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core.errors import ConfigError
from foldscope.core.signatures import (
    default_signatures,
    merge_signatures,
    signature_hits,
    signatures_from_data,
)


@pytest.mark.parametrize(("value", "kind", "rule"), [
    ("5432", "port", "well_known_port"),
    ("9090", None, "well_known_port"),
    ("https://api.acme.io:8443/v1", None, "well_known_port"),
    ("port 8080", None, "well_known_port"),
    ("127.0.0.1:6379", None, "well_known_port"),
    ("3000", None, "round_number"),
    ("250 replicas", None, "round_number"),
    ("32 shards", None, "power_of_two"),
    ("12345", None, "placeholder_number"),
    ("2025-11-02T09:00Z", None, "time_on_the_hour"),
    ("17:00:00", None, "time_on_the_hour"),
    ("2025-11-02 14:30 UTC", None, "time_on_the_half_hour"),
    ("2025-03-01", None, "round_date"),
    ("https://assets.example.net/v2", None, "example_domain"),
    ("build.internal.example", None, "example_domain"),
    ("queue.invalid", None, "example_domain"),
    ("alerts@mail.example.org", None, "example_domain"),
    ("db.localhost:5432", None, "example_domain"),
    ("printer.local", None, "private_domain"),
    ("https://billing.internal/api", None, "private_domain"),
    ("203.0.113.45", None, "documentation_ip"),
    ("http://192.0.2.10:8000/x", None, "documentation_ip"),
    ("2001:db8:ffff::2", None, "documentation_ip"),
    ("0.0.0.0", None, "stock_ip"),
    ("550E8400-E29B-41D4-A716-446655440000", None, "canonical_uuid"),
    ("f47ac10b-58cc-4372-a567-0e02b2c3d479", None, "canonical_uuid"),
    ("/tmp/app.sock", None, "stock_path"),
    ("/var/log/service.log", None, "stock_path"),
    ("/usr/local/bin", None, "stock_path"),
    ("/path/to/config.yaml", None, "placeholder_path"),
    ("@jane.doe", None, "generic_handle"),
    ("@Admin", None, "generic_handle"),
    ("@sre-oncall", None, "generic_handle"),
    ("kid-12345678", None, "placeholder_key"),
    ("0.1.0", None, "generic_version"),
    ("v2.0", None, "generic_version"),
    ("xxxx-xxxx-xxxx", None, "placeholder_key"),
    ("YOUR_API_KEY", None, "placeholder_key"),
    ("<token>", None, "placeholder_key"),
    ("aaaaaaaa", None, "repeated_character"),
    ("DevOps team", None, "generic_team"),
])
def test_stock_values_hit_their_rule(value, kind, rule):
    assert rule in signature_hits(value, kind)


@pytest.mark.parametrize("value", [
    "61873", "23 nodes", "2025-11-02T09:47Z", "14:17", "https://cdn.acme-corp.io/a",
    "zone-c.lyra-internal.net", "10.44.7.19", "9c2e71d4-0b5a-4f3e-8d16-2a7be94c0f58",
    "/srv/lyra/run/daemon.pid", "@priya.k-pager", "v3.7.11-rc2", "kid-4C91E0A7", "Группа учёта-7",
    "2025-11-17",
])
def test_real_looking_values_hit_nothing(value):
    assert signature_hits(value) == []


def test_kinds_limit_a_rule():
    extra = signatures_from_data({"signature": [
        {"name": "odd_port", "match": "number", "kinds": ["port"], "values": ["7"]}]})
    assert signature_hits("7", kind="port", rules=extra) == ["odd_port"]
    assert signature_hits("7", kind="path", rules=extra) == []
    assert signature_hits("7", rules=extra) == []      # a bare 7 is a number, not a port


def test_every_shipped_rule_has_a_description_and_a_distinct_name():
    rules = default_signatures()
    assert len({r.name for r in rules}) == len(rules) >= 15
    assert all(r.description for r in rules)


def test_user_rules_add_and_replace():
    extra = signatures_from_data({"signature": [
        {"name": "well_known_port", "match": "number", "values": ["62114"]},
        {"name": "house_port", "match": "number", "pattern": "4[0-9]{4}"},
    ]})
    rules = merge_signatures(default_signatures(), extra)
    assert signature_hits("62114", rules=rules) == ["well_known_port"]
    assert signature_hits("8080", rules=rules) == []          # replaced, not extended
    assert signature_hits("47031", rules=rules) == ["house_port"]
    assert [r.name for r in rules][-1] == "house_port"


@pytest.mark.parametrize(("data", "message"), [
    ({}, "no [[signature]] rules"),
    ({"rule": []}, "unknown key 'rule'"),
    ({"signature": [{"name": "Bad Name", "values": ["x"]}]}, "lower-case identifier"),
    ({"signature": [{"name": "a", "values": ["x"], "pattern": "y"}]}, "exactly one of"),
    ({"signature": [{"name": "a", "pattern": "("}]}, "bad pattern"),
    ({"signature": [{"name": "a", "pattern": "x*"}]}, "matches the empty string"),
    ({"signature": [{"name": "a", "match": "colour", "values": ["x"]}]}, "'match' must be one of"),
    ({"signature": [{"name": "a", "networks": ["10.0.0.0/8"]}]}, "needs match"),
    ({"signature": [{"name": "a", "match": "ip", "networks": ["nope"]}]}, "bad network"),
    ({"signature": [{"name": "a", "values": ["x"]}, {"name": "a", "values": ["y"]}]}, "defined twice"),
    ({"signature": [{"name": "a", "values": ["x"], "colour": 1}]}, "unknown field 'colour'"),
])
def test_bad_files_are_one_line_errors(data, message):
    with pytest.raises(ConfigError, match=re.escape(message)) as err:
        signatures_from_data(data, source="my.toml")
    assert str(err.value).startswith("my.toml: ") and "\n" not in str(err.value)


@settings(max_examples=60)
@given(st.text(max_size=60))
def test_any_text_gives_rule_names_without_error(text):
    names = {r.name for r in default_signatures()}
    assert set(signature_hits(text)) <= names


@pytest.mark.parametrize(("pattern", "problem"), [
    ("", "'pattern' must be a non-empty string"), ("(", "bad pattern: "),
    ("a*", "pattern matches the empty string"), ("(?:x|)", "pattern matches the empty string")])
def test_identifier_kinds_and_signatures_refuse_a_pattern_by_one_rule(pattern, problem):
    from foldscope.core.identifiers import rules_from_data
    from foldscope.core.signatures import signatures_from_data

    with pytest.raises(ConfigError) as kinds:
        rules_from_data({"kind": [{"name": "k", "pattern": pattern}]}, "k.toml")
    with pytest.raises(ConfigError) as sigs:
        signatures_from_data({"signature": [{"name": "k", "kinds": ["host"], "pattern": pattern}]},
                             "k.toml")
    assert problem in str(kinds.value) and problem in str(sigs.value)
    assert str(kinds.value).split(": ", 2)[-1] == str(sigs.value).split(": ", 2)[-1]

"""The arm catalog: twelve arms as data, with the rules that bind them enforced."""

import dataclasses
import json

import pytest

from foldscope.cli.main import main
from foldscope.core.arms import ARMS, DEDICATED_CEILING, check_catalog, get_arm, parse_arm_list
from foldscope.core.errors import ArmError
from foldscope.core.sections import SECTIONS


def test_all_twelve_arms_in_catalog_order():
    assert list(ARMS) == list("fnjpqkomtulg")


def test_declared_ceilings_match_the_protocol():
    assert ARMS["f"].declared_ceiling == 1024
    assert ARMS["g"].declared_ceiling == 1024
    assert ARMS["n"].declared_ceiling == 9600
    assert ARMS["j"].declared_ceiling == DEDICATED_CEILING == 9600
    assert ARMS["p"].declared_ceiling == 9600
    assert ARMS["t"].declared_ceiling == 4800
    assert ARMS["q"].declared_ceilings == {s.key: 1920 for s in SECTIONS}
    assert ARMS["k"].declared_ceiling == 9600 and len(ARMS["k"].carried_fields) > 1
    for plain in "omul":
        assert ARMS[plain].declared_ceiling is None


def test_q_ceiling_is_enforced_against_j():
    broken = dict(ARMS)
    q = ARMS["q"]
    fields = (dataclasses.replace(q.fields[0], max_length=2000),) + q.fields[1:]
    broken["q"] = dataclasses.replace(q, fields=fields)
    with pytest.raises(ArmError, match="ceiling"):
        check_catalog(broken)


def test_shared_prompt_byte_for_byte_and_o_has_its_own():
    digests = {ARMS[a].prompt_digest for a in "jpqmtu"}
    assert len(digests) == 1
    assert ARMS["o"].prompt_digest not in digests
    broken = dict(ARMS)
    broken["m"] = dataclasses.replace(ARMS["m"], system_prompt=ARMS["m"].system_prompt + " ")
    with pytest.raises(ArmError, match="share one system prompt"):
        check_catalog(broken)


def test_carry_caps_and_budgets():
    assert ARMS["m"].carry_cap == 2400 and ARMS["u"].carry_cap == 1400
    assert ARMS["l"].output_budget == 900


def test_shared_schema_arrays_are_not_carried_and_f_carries_raw_json():
    f = ARMS["f"]
    assert [s.name for s in f.carried_fields] == ["summary"]
    assert {s.name for s in f.fields} == {"summary", "paths", "tool_names"}
    assert f.carry_raw_json and not ARMS["g"].carry_raw_json


def test_response_format_is_strict_json_schema():
    rf = ARMS["q"].response_format()
    assert rf["type"] == "json_schema" and rf["json_schema"]["strict"] is True
    schema = rf["json_schema"]["schema"]
    assert schema["required"] == [s.key for s in SECTIONS]
    assert all(p["maxLength"] == 1920 for p in schema["properties"].values())
    assert ARMS["m"].response_format() is None
    assert "description" in ARMS["p"].response_format()["json_schema"]["schema"]["properties"]["summary"]


def test_unknown_arm_is_one_clear_error():
    with pytest.raises(ArmError, match="unknown arm 'z'"):
        get_arm("z")
    with pytest.raises(ArmError):
        parse_arm_list("j,j")
    assert parse_arm_list(" j, q ,m") == ["j", "q", "m"]


def test_arms_cli(capsys):
    assert main(["arms"]) == 0
    out = capsys.readouterr().out
    assert "5×1920" in out and "9600" in out and "4800" in out
    assert main(["arms", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [a["id"] for a in data] == list("fnjpqkomtulg")
    assert {a["prompt_digest"] for a in data if a["id"] in "jpqmtu"} == {ARMS["j"].prompt_digest}

"""The arm catalog: twelve arms as data, with the rules that bind them enforced."""

import dataclasses
import json

import pytest

from foldscope.cli.main import main
from foldscope.core.arms import ARMS, DEDICATED_CEILING, check_catalog, get_arm
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
    assert ARMS["k"].declared_ceiling is None and len(ARMS["k"].carried_fields) > 1
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
    assert {s.name for s in f.fields} == {"summary", "preserved_paths", "preserved_tool_names"}
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


def test_arms_cli(capsys):
    assert main(["arms"]) == 0
    out = capsys.readouterr().out
    assert "5×1920" in out and "9600" in out and "4800" in out
    assert main(["arms", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [a["id"] for a in data] == list("fnjpqkomtulg")
    assert {a["prompt_digest"] for a in data if a["id"] in "jpqmtu"} == {ARMS["j"].prompt_digest}


# --- the study's arms table (DESIGN.md, "The study protocol"), pinned field by field ---------

# arm: (representation, headed, schema fields declared, carried fields, declared capacity)
STUDY_TABLE = {
    "f": ("schema", False, 3, 1, 1024),
    "n": ("schema", False, 3, 1, 9600),
    "j": ("schema", False, 1, 1, 9600),
    "p": ("schema", False, 1, 1, 9600),
    "q": ("schema", False, 5, 5, 9600),
    "k": ("schema", False, 5, 5, None),
    "o": ("plain", False, 0, 0, None),
    "m": ("plain", True, 0, 0, None),
    "t": ("schema", False, 1, 1, 4800),
    "u": ("plain", True, 0, 0, None),
    "l": ("plain", True, 0, 0, None),
    "g": ("schema", False, 3, 1, 1024),
}


@pytest.mark.parametrize("arm_id", list(STUDY_TABLE))
def test_arm_matches_the_study_table(arm_id):
    rep, headed, declared, carried, capacity = STUDY_TABLE[arm_id]
    arm = ARMS[arm_id]
    assert (arm.representation, arm.headed) == (rep, headed)
    assert (len(arm.fields), len(arm.carried_fields)) == (declared, carried)
    assert arm.declared_ceiling == capacity


def test_k_declares_no_ceilings():
    assert all(f.max_length is None for f in ARMS["k"].fields)
    props = ARMS["k"].response_format()["json_schema"]["schema"]["properties"]
    assert not any("maxLength" in p for p in props.values())


def test_output_budgets_and_carry_caps_of_the_study():
    assert ARMS["f"].output_budget == ARMS["l"].output_budget == 900
    assert ARMS["m"].output_budget == 2400
    assert ARMS["m"].carry_cap == 2400 and ARMS["u"].carry_cap == 1400


def test_shared_schema_array_names():
    for arm_id in "fng":
        props = ARMS[arm_id].response_format()["json_schema"]["schema"]["properties"]
        assert list(props) == ["summary", "preserved_paths", "preserved_tool_names"]
        assert props["preserved_paths"]["type"] == props["preserved_tool_names"]["type"] == "array"


def test_one_shared_system_prompt_asks_for_the_five_named_sections():
    prompts = {ARMS[a].system_prompt for a in "jqmptu"}
    assert len(prompts) == 1
    shared = prompts.pop()
    for section in SECTIONS:
        assert section.heading in shared
    assert ARMS["o"].system_prompt != shared
    assert not any(s.heading in ARMS["o"].system_prompt for s in SECTIONS[1:])
    # The per-arm instruction never carries the section request: the q -> m rung changes the
    # representation only.
    for arm_id in "jqmptu":
        assert not any(s.heading in ARMS[arm_id].instruction for s in SECTIONS)


def test_p_field_description_is_the_study_length_and_says_what_the_field_holds():
    description = ARMS["p"].fields[0].description
    assert 1800 <= len(description) <= 1900
    assert description.startswith("This field must hold")
    assert ARMS["p"].response_format()["json_schema"]["schema"]["properties"]["summary"][
        "description"] == description
    assert ARMS["j"].fields[0].description is None


def test_arms_json_shows_every_schema_field(capsys):
    assert main(["arms", "--json"]) == 0
    data = {a["id"]: a for a in json.loads(capsys.readouterr().out)}
    for arm_id, (_rep, _headed, declared, carried, capacity) in STUDY_TABLE.items():
        assert data[arm_id]["field_count"] == declared == len(data[arm_id]["fields"])
        assert data[arm_id]["carried_field_count"] == carried
        assert data[arm_id]["declared_ceiling"] == capacity
    assert data["p"]["fields"][0]["description_chars"] == len(ARMS["p"].fields[0].description)
    assert main(["arms"]) == 0
    rows = {line.split()[0]: line.split() for line in capsys.readouterr().out.splitlines()[1:]}
    assert rows["f"][2:4] == ["3", "1"] and rows["n"][2:4] == ["3", "1"]
    assert rows["g"][2:4] == ["3", "1"]

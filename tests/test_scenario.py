"""Unit tests for scenario files: loading, the shipped scenarios, the text contract, bad files."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import foldscope.core.scenario as scenario_mod
from foldscope.core.errors import ScenarioError, UnknownScenario
from foldscope.core.scenario import (
    LOG_LINE_RE,
    Chunk,
    Fact,
    Scenario,
    parse_scenario,
)
from foldscope.core.scenario_gen import generate_chunks
from foldscope.core.tokens import estimate_tokens
from foldscope.engine.loader import list_scenarios, load_scenario, scenario_dirs

REPO_SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"

from kestrel_facts import KESTREL_GRADED  # noqa: E402

# The fact forms of the text contract, as a summariser (or a simulated model) would parse them.
_TOOL_FACT_RE = re.compile(r"^(?P<label>[^:\[][^:]*): (?P<value>.+)$")
_SPOKEN_FACT_RE = re.compile(r"^.*\bthe (?P<label>.+?) is (?P<value>.+)\.$")
_ROLE_MARKER_RE = re.compile(r"^(\[assistant\] |\[operator\] |\[tool result: [a-z_]+\]$)")

SMOKE_TOML = """\
name = "tiny"
description = "A tiny scenario for tests."
seed = 5
chunks = 2
tokens_per_chunk = 400

[[facts]]
label = "ledger service port"
value = "62114"
role = "tool"
chunk = 1
graded = true
kind = "port"

[[facts]]
label = "owning department"
value = "Отдел расчётов-4"
role = "operator"
chunk = 2
graded = true
kind = "department"

[[facts]]
label = "billing tenant code"
value = "TN-88213"
role = "assistant"
chunk = 2
graded = false
kind = "tenant_code"
"""


def extract_facts(scenario: Scenario) -> set[tuple[int, str, str]]:
    """Every fact-shaped line in the transcript, as (chunk, label, value), per the contract."""
    found: set[tuple[int, str, str]] = set()
    for chunk in scenario.chunks:
        for turn in chunk.turns:
            if turn.role == "tool":
                for line in turn.text.splitlines():
                    if LOG_LINE_RE.match(line):
                        continue
                    m = _TOOL_FACT_RE.match(line)
                    if m:
                        found.add((chunk.index, m["label"], m["value"]))
            else:
                m = _SPOKEN_FACT_RE.match(turn.text)
                if m:
                    found.add((chunk.index, m["label"], m["value"]))
    return found


@pytest.fixture(scope="module")
def kestrel() -> Scenario:
    return load_scenario("kestrel")


@pytest.fixture(autouse=True)
def _repo_scenarios(monkeypatch: pytest.MonkeyPatch) -> None:
    # Tests must see the shipped files even if the developer's shell points elsewhere.
    monkeypatch.delenv("FOLDSCOPE_SCENARIOS", raising=False)


# --- the shipped scenarios -------------------------------------------------------------------


def test_builtin_scenarios_are_the_repo_level_files() -> None:
    assert scenario_dirs()[-1].resolve() == REPO_SCENARIOS.resolve()
    assert {s.name for s in list_scenarios()} == {"kestrel", "kestrel-single", "smoke", "tiny"}


def test_kestrel_graded_facts_exactly(kestrel: Scenario) -> None:
    assert len(kestrel.facts) == 50
    assert len(kestrel.graded) == 14
    assert len(kestrel.decoys) == 36
    assert {f.label: f.value for f in kestrel.graded} == KESTREL_GRADED
    assert [f.label for f in kestrel.graded] == list(KESTREL_GRADED)  # recall order = file order


def test_kestrel_chunk_distribution(kestrel: Scenario) -> None:
    per_chunk = Counter(f.chunk for f in kestrel.graded)
    assert [per_chunk[i] for i in range(6)] == [3, 3, 2, 2, 3, 1]
    assert kestrel.distributed
    assert {f.chunk for f in kestrel.decoys} == set(range(6))


def test_kestrel_decoys_and_roles(kestrel: Scenario) -> None:
    kinds = Counter(f.kind for f in kestrel.decoys)
    assert kinds == {"cluster_id": 9, "tenant_code": 9, "licence_key": 9, "image_digest": 9}
    assert len({f.label for f in kestrel.facts}) == 50
    assert {f.role for f in kestrel.graded} == {"tool", "assistant", "operator"}
    assert {f.role for f in kestrel.decoys} == {"tool", "assistant", "operator"}
    assert all(f.value.startswith("sha256:") and len(f.value) == 71
               for f in kestrel.decoys if f.kind == "image_digest")


def test_kestrel_tokens(kestrel: Scenario) -> None:
    assert len(kestrel.chunks) == 6
    assert 142_500 <= kestrel.total_tokens <= 157_500
    for chunk in kestrel.chunks:
        assert chunk.tokens == estimate_tokens(chunk.text)
        assert 22_500 <= chunk.tokens <= 27_500


@pytest.mark.parametrize("name", ["kestrel", "kestrel-single", "smoke", "tiny"])
def test_every_value_only_in_its_chunk(name: str) -> None:
    scenario = load_scenario(name)
    for fact in scenario.facts:
        counts = [c.text.count(fact.value) for c in scenario.chunks]
        assert counts[fact.chunk] == 1, fact.label
        assert sum(counts) == 1, fact.label


@pytest.mark.parametrize("name", ["kestrel", "kestrel-single", "smoke", "tiny"])
def test_no_planted_value_inside_another(name: str) -> None:
    facts = load_scenario(name).facts
    for a in facts:
        for b in facts:
            if a is not b:
                assert a.value.casefold() not in b.value.casefold(), (a.label, b.label)


def test_kestrel_single_is_the_easy_case(kestrel: Scenario) -> None:
    single = load_scenario("kestrel-single")
    assert (len(single.facts), len(single.graded)) == (28, 7)
    assert {f.chunk for f in single.facts} == {0}
    assert not single.distributed
    for fact in single.graded:
        assert KESTREL_GRADED[fact.label] == fact.value
    assert 15_000 <= single.total_tokens <= 25_000


def test_smoke_is_small() -> None:
    smoke = load_scenario("smoke")
    assert len(smoke.chunks) == 3
    assert (len(smoke.graded), len(smoke.decoys)) == (6, 6)
    assert smoke.distributed
    assert smoke.total_tokens < 8_000


# --- the transcript text contract ------------------------------------------------------------


@pytest.mark.parametrize("name", ["kestrel", "kestrel-single", "smoke", "tiny"])
def test_fact_shaped_lines_are_exactly_the_planted_facts(name: str) -> None:
    scenario = load_scenario(name)
    planted = {(f.chunk, f.label, f.value) for f in scenario.facts}
    assert extract_facts(scenario) == planted


def test_turns_render_with_role_markers(kestrel: Scenario) -> None:
    for chunk in kestrel.chunks:
        assert chunk.text == "\n\n".join(t.render() for t in chunk.turns)
        for turn in chunk.turns:
            rendered = turn.render()
            assert _ROLE_MARKER_RE.match(rendered.split("\n", 1)[0]), rendered[:80]
            assert "\n\n" not in rendered
            if turn.role != "tool":
                assert "\n" not in turn.text


def test_filler_lines_follow_the_contract(kestrel: Scenario) -> None:
    values = [f.value for f in kestrel.facts]
    for chunk in kestrel.chunks:
        for turn in chunk.turns:
            if turn.role == "tool":
                for line in turn.text.splitlines():
                    if any(v in line for v in values):
                        continue
                    # Non-fact tool output: a timestamped log line, or a line with no "label: ".
                    assert LOG_LINE_RE.match(line) or ": " not in line, line
            elif not turn.planted:
                assert not re.search(r"\bthe\b.*\bis\b", turn.text, re.IGNORECASE), turn.text


def test_planted_turns_name_their_facts(kestrel: Scenario) -> None:
    stated = Counter(label for c in kestrel.chunks for t in c.turns for label in t.planted)
    assert stated == Counter(f.label for f in kestrel.facts)
    for fact in kestrel.facts:
        turn = next(t for t in kestrel.chunks[fact.chunk].turns if fact.label in t.planted)
        assert turn.role == fact.role
        if fact.role == "tool":
            assert f"\n{fact.label}: {fact.value}\n" in f"\n{turn.text}\n"
        else:
            assert f"the {fact.label} is {fact.value}." in turn.text


def test_log_lines_have_timestamp_and_level(kestrel: Scenario) -> None:
    sample = [line for t in kestrel.chunks[2].turns if t.role == "tool"
              for line in t.text.splitlines()]
    logs = [line for line in sample if LOG_LINE_RE.match(line)]
    assert len(logs) > 0.8 * len(sample)
    stamps = [line.split(" ", 1)[0] for line in logs]
    assert stamps == sorted(stamps)  # one continuous session: time only moves forward


# --- determinism -----------------------------------------------------------------------------


def _write(tmp_path: Path, text: str, name: str = "tiny.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_same_seed_same_text(tmp_path: Path) -> None:
    a = load_scenario(_write(tmp_path, SMOKE_TOML, "a.toml"))
    b = load_scenario(_write(tmp_path, SMOKE_TOML, "b.toml"))
    assert a is not b
    assert [c.text for c in a.chunks] == [c.text for c in b.chunks]


def test_different_seed_different_filler(tmp_path: Path) -> None:
    a = load_scenario(_write(tmp_path, SMOKE_TOML, "a.toml"))
    b = load_scenario(_write(tmp_path, SMOKE_TOML.replace("seed = 5", "seed = 6"), "b.toml"))
    assert [c.text for c in a.chunks] != [c.text for c in b.chunks]
    assert a.facts == b.facts


def test_kestrel_regenerates_identically() -> None:
    text = (REPO_SCENARIOS / "kestrel.toml").read_text(encoding="utf-8")
    first = parse_scenario(text, "kestrel.toml")
    second = parse_scenario(text, "kestrel.toml")
    assert [c.text for c in first.chunks] == [c.text for c in second.chunks]


_ROLE = st.sampled_from(["tool", "assistant", "operator"])
_VALUES = ["62114", "kid-7F3A9C21", "/opt/kestrel/state/install.lock", "TN-88213",
           "sha256:14ec7ce4fb879ae6090f10d69617b72ddd1fd006ae8b66d7c20672f1f3d2e874",
           "Отдел расчётов-4"]


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(min_value=-(2**63), max_value=2**63),
       placement=st.lists(st.tuples(st.integers(0, 2), _ROLE), min_size=1, max_size=6))
def test_any_seed_places_facts_only_in_their_chunk(seed: int,
                                                   placement: list[tuple[int, str]]) -> None:
    values = _VALUES
    facts = [Fact(label=f"fact number {i}", value=values[i], role=role, chunk=chunk, graded=True,
                  kind="x") for i, (chunk, role) in enumerate(placement)]
    chunks = generate_chunks(seed, 3, 300, facts, estimate_tokens)
    for fact in facts:
        counts = [c.text.count(fact.value) for c in chunks]
        assert counts[fact.chunk] == 1 and sum(counts) == 1
    assert all(isinstance(c, Chunk) and c.tokens >= 300 for c in chunks)


# --- loading, caching, lookup ----------------------------------------------------------------


def test_load_by_name_and_path_agree() -> None:
    by_name = load_scenario("smoke")
    by_path = load_scenario(REPO_SCENARIOS / "smoke.toml")
    by_str = load_scenario(str(REPO_SCENARIOS / "smoke.toml"))
    assert by_name is by_path is by_str
    assert by_name.path is not None and by_name.path.name == "smoke.toml"


def test_cache_reloads_an_edited_file(tmp_path: Path) -> None:
    path = _write(tmp_path, SMOKE_TOML)
    first = load_scenario(path)
    assert load_scenario(path) is first
    path.write_text(SMOKE_TOML.replace("seed = 5", "seed = 50"), encoding="utf-8")
    second = load_scenario(path)
    assert second is not first and second.seed == 50


def test_unknown_scenario_lists_known() -> None:
    with pytest.raises(UnknownScenario) as info:
        load_scenario("nope")
    assert str(info.value) == "unknown scenario 'nope' (known: kestrel, kestrel-single, smoke, tiny)"


def test_env_adds_user_scenario_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mine, theirs = tmp_path / "mine", tmp_path / "theirs"
    mine.mkdir()
    theirs.mkdir()
    _write(mine, SMOKE_TOML)
    # A user file named like a built-in one takes its place; the first folder listed wins.
    _write(mine, SMOKE_TOML.replace('"tiny"', '"smoke"').replace("seed = 5", "seed = 7"),
           "smoke.toml")
    _write(theirs, SMOKE_TOML.replace('"tiny"', '"smoke"'), "smoke.toml")
    monkeypatch.setenv("FOLDSCOPE_SCENARIOS", f"{mine}{os.pathsep}{theirs}")
    assert scenario_dirs()[:2] == [mine, theirs]
    assert [s.name for s in list_scenarios()] == ["kestrel", "kestrel-single", "smoke", "tiny"]
    assert load_scenario("tiny").name == "tiny"
    assert load_scenario("smoke").seed == 7
    assert load_scenario("kestrel").name == "kestrel"
    with pytest.raises(UnknownScenario, match=r"\(known: kestrel, kestrel-single, smoke, tiny\)"):
        load_scenario("nope")


def test_parse_scenario_names_where_the_text_came_from() -> None:
    with pytest.raises(ScenarioError, match=r"^pasted: invalid TOML"):
        parse_scenario("name = = 1", "pasted")
    scenario = parse_scenario(SMOKE_TOML, "pasted")
    assert scenario.name == "tiny" and scenario.path is None


def test_generator_violation_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = scenario_mod.generate_chunks

    def leaky(*args, **kwargs):  # a generator bug: the port leaks into another chunk's filler
        chunks = real(*args, **kwargs)
        last = chunks[-1]
        chunks[-1] = Chunk(last.index, last.turns, last.text + "\nport 62114", last.tokens)
        return chunks

    monkeypatch.setattr(scenario_mod, "generate_chunks", leaky)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ScenarioError) as info:
        load_scenario(_write(tmp_path, SMOKE_TOML))
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("tiny.toml: facts[0].value: ")
    assert "chunk 1 x1, chunk 2 x1" in message


# --- malformed files -------------------------------------------------------------------------


def _fact(**overrides: object) -> str:
    fields = {"label": '"ledger service port"', "value": '"62114"', "role": '"tool"',
              "chunk": "1", "graded": "true", "kind": '"port"'}
    fields.update({k: str(v) for k, v in overrides.items()})
    return "\n[[facts]]\n" + "".join(f"{k} = {v}\n" for k, v in fields.items() if v != "DROP")


_HEAD = textwrap.dedent("""\
    name = "broken"
    description = "A broken scenario."
    seed = 1
    chunks = 2
    tokens_per_chunk = 400
    """)

_OK_FACTS = (_fact() + _fact(label='"admin console port"', value='"47031"')
             + _fact(label='"DNS zone"', value='"zone-b.kestrel-internal.net"', role='"assistant"')
             + _fact(label='"release tag"', value='"v4.18.2-rc3"', role='"operator"', chunk=2))

BROKEN = [
    ("syntax", _HEAD + "seed = = 3\n", "invalid TOML"),
    ("missing-field", _HEAD.replace("seed = 1\n", "") + _OK_FACTS,
     "seed: required field is missing"),
    ("wrong-type", _HEAD.replace("seed = 1", 'seed = "1"') + _OK_FACTS,
     "seed: must be an integer"),
    ("role", _HEAD + _OK_FACTS + _fact(label='"x"', value='"y-1"', role='"user"'),
     "facts[4].role: must be one of tool, assistant, operator (got 'user')"),
    ("role-3", _HEAD + _fact() + _fact(label='"a"', value='"a-1"')
     + _fact(label='"b"', value='"b-1"') + _fact(label='"c"', value='"c-1"', role='"system"'),
     "facts[3].role: must be one of tool, assistant, operator"),
    ("chunk-high", _HEAD + _fact(chunk=3), "facts[0].chunk: must be between 1 and 2"),
    ("chunk-zero", _HEAD + _fact(chunk=0), "facts[0].chunk: must be at least 1"),
    ("dup-label", _HEAD + _fact() + _fact(value='"12"'),
     "facts[1].label: duplicate label 'ledger service port'"),
    ("substring", _HEAD + _fact() + _fact(label='"short port"', value='"6211"'),
     "facts[1].value: graded value '6211' is a substring of facts[0].value (graded) '62114'"),
    ("decoy-hides-graded",
     _HEAD + _fact() + _fact(label='"a digest"', value='"sha256:0062114f"', graded="false"),
     "facts[0].value: graded value '62114' is a substring of facts[1].value (decoy)"),
    ("dup-value", _HEAD + _fact() + _fact(label='"other port"'),
     "facts[1].value: graded value '62114' duplicates"),
    ("unknown-field", _HEAD + _fact(colour='"red"'), "facts[0].colour: unknown field"),
    ("bool", _HEAD + _fact(graded='"yes"'), "facts[0].graded: must be true or false"),
    ("multiline", _HEAD + _fact(value='"621\\n14"'), "facts[0].value: must be one line"),
    ("empty-label", _HEAD + _fact(label='"  "'), "facts[0].label: must not be empty"),
    ("missing-role", _HEAD + _fact(role="DROP"), "facts[0].role: required field is missing"),
    ("no-facts", _HEAD + "facts = []\n", "facts: must not be empty"),
    ("facts-not-tables", _HEAD + "facts = 3\n", "facts: must be an array"),
    ("bad-name", _HEAD.replace('"broken"', '"Broken Name"') + _fact(),
     "name: must be lower-case"),
    ("too-many-chunks", _HEAD.replace("chunks = 2", "chunks = 1000") + _fact(),
     "chunks: must be at most 64"),
    ("long-input", _HEAD + _fact(role='"' + "x" * 500 + '"'), "(got 'xxxxxxxx"),
    ("generic-value", _HEAD + _fact(value='"2026"'),
     "facts[0].value: generated text must state '2026' once, in chunk 1 only; found chunk 1 x"),
    ("generic-label", _HEAD + _fact(label='"e"'),
     "facts[0].label: filler cannot avoid 'e'; choose a more distinctive label"),
]


@pytest.mark.parametrize(("case", "text", "expected"), BROKEN, ids=[b[0] for b in BROKEN])
def test_malformed_file_gives_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       case: str, text: str, expected: str) -> None:
    monkeypatch.chdir(tmp_path)
    path = _write(tmp_path, text, "broken.toml")
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("broken.toml: "), message
    assert expected in message, message
    assert len(message) < 200, message


def test_broken_file_shows_path_relative_to_cwd(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "scenarios").mkdir()
    path = _write(tmp_path / "scenarios", _HEAD + _fact(role='"user"'), "broken.toml")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ScenarioError) as info:
        load_scenario("scenarios/broken.toml")
    assert str(info.value).startswith("scenarios/broken.toml: facts[0].role: must be one of tool, "
                                      "assistant, operator")
    assert path.exists()


def test_missing_and_non_utf8_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ScenarioError, match=r"^gone\.toml: no such scenario file$"):
        load_scenario("gone.toml")
    (tmp_path / "latin1.toml").write_bytes(b'name = "caf\xe9"\n')
    with pytest.raises(ScenarioError, match=r"^latin1\.toml: not UTF-8"):
        load_scenario("latin1.toml")


def test_core_scenario_imports_stay_pure() -> None:
    code = ("import sys, foldscope.core.scenario, foldscope.core.scenario_gen; "
            "bad = {'textual', 'httpx', 'sqlite3', 'sqlite_utils'} & set(sys.modules); "
            "print(sorted(bad))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_facts_alone_are_the_loaded_scenarios_facts(tmp_path):
    from foldscope.engine import loader

    for name in ("kestrel", "smoke"):
        path = loader._scenario_path(name)
        loader._CACHE.pop(path.resolve(), None)  # not loaded: the facts are parsed alone
        alone = loader.load_scenario_facts(name)
        assert path.resolve() not in loader._CACHE  # no transcript was generated for them
        assert alone == loader.load_scenario(name).facts
        assert loader.load_scenario_facts(name) == alone  # now from the loaded scenario
    with pytest.raises(UnknownScenario):
        loader.load_scenario_facts("no-such-scenario")
    broken = tmp_path / "broken.toml"
    broken.write_text('name = "broken"\n')
    with pytest.raises(ScenarioError, match="broken.toml"):
        loader.load_scenario_facts(broken)

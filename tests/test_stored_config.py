"""Stored pins and model entries read back typed, once (engine.pins, engine.sweep)."""

from __future__ import annotations

import json

import pytest

from foldscope.engine.live import pin_infos
from foldscope.engine.pins import ModelPin, stored_pins
from foldscope.engine.sweep import SweepConfig, stored_definition

STORED = json.loads("""{
 "sim/describer": {"concurrency": 8, "context_tokens": 131072, "dialect": "json_schema",
  "endpoint": {"context_length": 131072, "max_completion_tokens": 32768,
   "name": "foldscope-sim | sim/describer", "price_completion_per_mtok": 0.0,
   "price_prompt_per_mtok": 0.0, "provider_name": "foldscope-sim", "quantization": "bf16",
   "supported_parameters": ["max_tokens"], "tag": "foldscope-sim"},
  "pin": "foldscope-sim", "provider": "sim", "server": {"slots": null}, "warnings": []},
 "local": {"provider": "vllm", "pin": null, "endpoint": null,
  "warnings": ["unpinned: the server decides", "context 8,192 tokens < prompt"]},
 "gateway": {"provider": "openrouter", "pin": "box", "endpoint": {"provider_name": "Box"}},
 "old": {}
}""")


def test_stored_pins_read_typed_and_keep_what_they_do_not_name():
    pins = stored_pins(STORED)
    assert list(pins) == list(STORED)
    d = pins["sim/describer"]
    assert d.provider == "sim" and d.pin == "foldscope-sim" and d.context_tokens == 131072
    assert d.endpoint is not None and d.endpoint.quantization == "bf16"
    assert d.model_extra == {"concurrency": 8, "dialect": "json_schema", "server": {"slots": None}}
    assert pins["local"].warnings == ("unpinned: the server decides", "context 8,192 tokens < prompt")
    assert pins["old"] == ModelPin()  # an entry from before a field existed reads its default
    assert pins["old"].provider == "?" and pins["old"].endpoint is None


def test_the_pins_panel_rows_are_read_from_the_typed_pins():
    rows = {p.model: p for p in pin_infos(stored_pins(STORED))}
    assert rows["sim/describer"].endpoint == "foldscope-sim | sim/describer"
    assert rows["sim/describer"].context_length == 131072
    assert rows["gateway"].endpoint == "Box" and rows["gateway"].price_prompt_per_mtok is None
    assert rows["local"].pin is None and len(rows["local"].warnings) == 2
    assert rows["old"].provider == "?" and rows["old"].endpoint is None


def test_a_pin_record_that_is_not_one_is_refused():
    with pytest.raises(ValueError):
        stored_pins({"m": {"warnings": 3}})
    with pytest.raises(ValueError):
        stored_pins({"m": {"endpoint": {"context_length": "lots"}}})


def test_a_stored_definition_is_validated_once_into_the_sweep_config():
    raw = {"sweep": {"name": "a", "scenario": "smoke", "arms": ["j"], "repeats": 1},
           "models": [{"id": "sim/faithful", "latency_scale": 0.5}, {"id": "sim/garbler"}]}
    definition = stored_definition(raw)
    assert isinstance(definition.config, SweepConfig)
    assert definition.models == ("sim/faithful", "sim/garbler") == definition.config.model_ids
    assert definition.mode == "sequential"  # stored before modes existed
    faithful = definition.config.models[0]
    assert faithful.overrides == {"latency_scale": 0.5}
    assert faithful.resolve().latency_scale == 0.5 and faithful.resolve().provider == "sim"
    # The entry is kept as written: the stored definition and its digest do not change.
    assert definition.config.model_dump(mode="json")["models"] == raw["models"]
    with pytest.raises(ValueError):
        stored_definition({"sweep": raw["sweep"], "models": [{"provider": "sim"}]})


@pytest.mark.parametrize(("models", "problems"), [
    ([{"provider": "sim"}], ["x.toml: models[0].id: required"]),
    ([{"id": 3}], ["x.toml: models[0].id: must be a string"]),
    (["x"], ["x.toml: models.0: Input should be a valid dictionary", "x.toml: models[0].id: required"]),
    ([{"id": "sim/faithful"}, {"id": "sim/faithful"}],
     ["x.toml: models[1].id: model 'sim/faithful' listed twice"]),
    ([{"id": "sim/faithful", "bogus": 1}],
     ["model 'sim/faithful': field 'bogus': Extra inputs are not permitted"]),
    ([], ["x.toml: models: no model given"]),
])
def test_a_bad_model_entry_is_named_once_as_before_entries_were_typed(models, problems):
    from foldscope.engine.sweep import sweep_problems

    sweep = {"name": "a", "scenario": "smoke", "arms": ["j"], "repeats": 1}
    assert sweep_problems({"sweep": sweep, "models": models}, "x.toml") == problems


def test_a_pin_record_is_stored_as_the_runner_wrote_it():
    entry = {"provider": "openrouter", "pin": "box", "warnings": ["w1"], "context_tokens": 8192,
             "concurrency": 4, "tokens": {"smoke": {"chunk_tokens": (10, 12), "scale": 1.0}},
             "endpoint": {"name": "Box | m", "provider_name": "Box", "tag": None,
                          "quantization": "fp8", "context_length": 8192,
                          "max_completion_tokens": None, "price_prompt_per_mtok": 0,
                          "price_completion_per_mtok": 1.5, "supported_parameters": ["seed"]}}
    stored = ModelPin.model_validate(entry).stored()
    assert json.dumps(stored, sort_keys=True) == json.dumps(entry, sort_keys=True)
    read = stored_pins({"m": json.loads(json.dumps(stored))})["m"]  # read back, stored again
    assert json.dumps(read.stored(), sort_keys=True) == json.dumps(entry, sort_keys=True)
    assert read.endpoint is not None and read.endpoint.price_prompt_per_mtok == 0

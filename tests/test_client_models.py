"""Tests for model configuration: built-in sims, the TOML model file, warnings."""

from __future__ import annotations

import pytest

from foldscope.core.errors import ConfigError, ModelError
from foldscope.engine.models import (
    ModelConfig,
    load_models_toml,
    lookup_model,
    resolve_model,
    warnings,
)


def test_builtin_sims_resolve_without_config():
    for name in ("faithful", "describer", "gister", "inventor", "reasoning-mandatory",
                 "no-reasoning-param", "nonconforming"):
        cfg = resolve_model(f"sim/{name}")
        assert cfg.provider == "sim" and cfg.is_simulated and cfg.pin
        assert warnings(cfg) == []


def test_unknown_model_is_one_line_listing_builtins():
    with pytest.raises(ModelError) as info:
        resolve_model("acme/unknown")
    msg = str(info.value)
    assert "\n" not in msg and "unknown model 'acme/unknown'" in msg
    assert "sim/faithful, sim/describer" in msg and "config file" in msg


def test_overrides_are_fields_laid_over_builtins():
    cfg = resolve_model("sim/gister", {"faults": {"rate_429": 0.5}, "latency_scale": 0})
    assert cfg.provider == "sim" and cfg.faults.rate_429 == 0.5 and cfg.latency_scale == 0
    assert cfg.pin == "foldscope-sim"
    tagged = resolve_model("sim/faithful:slow")
    assert tagged.wire_model == "sim/faithful:slow"
    with pytest.raises(ModelError, match="field 'faults.rate_429'"):
        resolve_model("sim/gister", {"faults": {"rate_429": 5}})
    with pytest.raises(ModelError, match="unknown model 'qwen'"):
        resolve_model("qwen", {"pin": "x"})
    cfg = resolve_model("qwen", {"provider": "openrouter", "pin": "deepinfra/fp8"})
    assert cfg.base_url == "https://openrouter.ai/api/v1"
    assert cfg.reasoning_param == "openrouter" and cfg.api_key_env == "OPENROUTER_API_KEY"
    assert cfg.is_routing_gateway


def test_load_models_toml(tmp_path):
    path = tmp_path / "models.toml"
    path.write_text('''
[[models]]
id = "qwen3@deepinfra"
model = "qwen/qwen3-235b-a22b"
provider = "openrouter"
pin = "deepinfra/fp8"
quantizations = ["fp8"]
api_key_env = "MY_KEY"

[[models]]
id = "sim/faithful:slow"
provider = "sim"
[models.faults]
latency_s = 0.5
rate_429 = 0.1
retry_after_s = 2
reasoning_mandatory = true
''', encoding="utf-8")
    models = load_models_toml(path)
    assert list(models) == ["qwen3@deepinfra", "sim/faithful:slow"]
    q = models["qwen3@deepinfra"]
    assert q.wire_model == "qwen/qwen3-235b-a22b" and q.quantizations == ["fp8"]
    s = models["sim/faithful:slow"]
    assert s.faults.latency_s == 0.5 and s.faults.reasoning_mandatory
    assert lookup_model("sim/faithful:slow", models) is s
    assert lookup_model("sim/gister", models).provider == "sim"


@pytest.mark.parametrize("text,needle", [
    ('[[models]]\nid = "x"\nprovider = "nope"\n', "field 'provider'"),
    ('[[models]]\nid = "x"\nprovider = "openai"\ncolour = 1\n', "field 'colour'"),
    ('[[models]]\nprovider = "openai"\n', "field 'id'"),
    ('[[models]]\nid = "x"\nprovider = "openai"\n[models.faults]\nrate_429 = 0.1\n',
     "only for provider 'sim'"),
    ('[[models]]\nid = "x"\nprovider = "sim"\n[models.faults]\nrate_5xx = 2\n',
     "field 'faults.rate_5xx'"),
    ('[[models]]\nid = "x"\nprovider = "openai"\n[[models]]\nid = "x"\nprovider = "openai"\n',
     "duplicate"),
    ("models = 3\n", "field 'models'"),
    ("[[models]\n", "invalid TOML"),
])
def test_malformed_toml_is_one_line_naming_file_and_field(tmp_path, text, needle):
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_models_toml(path)
    msg = str(info.value)
    assert "\n" not in msg and str(path) in msg and needle in msg


def test_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        load_models_toml(tmp_path / "none.toml")


def test_pasted_key_is_refused_without_echo(tmp_path):
    secret = "sk-or-v1-abc-def-pasted"
    path = tmp_path / "k.toml"
    path.write_text(f'[[models]]\nid = "x"\nprovider = "openrouter"\napi_key_env = "{secret}"\n',
                    encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_models_toml(path)
    assert "api_key_env" in str(info.value) and secret not in str(info.value)


def test_warnings_for_unpinned_gateway():
    cfg = ModelConfig(id="x", provider="openrouter")
    assert "no pin on a routing gateway" in warnings(cfg)
    # Any unpinned model is said to be (README: the pins panel warns when a model is unpinned).
    assert any(w.startswith("unpinned") for w in warnings(ModelConfig(id="y", provider="vllm")))
    assert warnings(ModelConfig(id="y", provider="vllm", pin="my-server")) == []

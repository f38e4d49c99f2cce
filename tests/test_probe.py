"""Capability probe: verdicts, culprit parameters, and the ``foldscope probe`` command."""

from __future__ import annotations

import json
import subprocess
import sys

import httpx
import pytest

from foldscope.cli.main import main
from foldscope.engine.models import ModelConfig, resolve_model
from foldscope.engine.probe import (
    NONCONFORMING,
    OK,
    REJECTED_PARAMETERS,
    REJECTED_REASONING,
    TRANSPORT_ERROR,
    conformance_problem,
    probe_model,
    probe_models,
)

EXPECTED = {
    "sim/faithful": (OK, None),
    "sim/no-reasoning-param": (REJECTED_PARAMETERS, "reasoning"),
    "sim/reasoning-mandatory": (REJECTED_REASONING, "reasoning"),
    "sim/nonconforming": (NONCONFORMING, None),
}


async def test_builtin_verdicts_and_culprits():
    results = await probe_models([resolve_model(m) for m in EXPECTED])
    for r in results:
        assert (r.verdict, r.culprit) == EXPECTED[r.model], r.detail
        assert r.pin == "foldscope-sim" and r.simulated
        assert r.endpoint["quantization"] == "bf16"
        assert {"reasoning", "response_format.strict", "provider.require_parameters"} <= set(
            r.request)


async def test_no_reasoning_param_endpoint_listing_explains_it():
    r = await probe_model(resolve_model("sim/no-reasoning-param"))
    assert "reasoning" not in r.endpoint["supported_parameters"]
    assert r.tried == [{"relaxed": "reasoning", "passed": True}]


async def test_culprit_search_names_require_parameters_when_that_is_the_fix():
    """A gateway that rejects only strict parameter matching: the culprit is not reasoning."""
    def handler(request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            return httpx.Response(404, json={"error": {"message": "no listing"}})
        body = json.loads(request.content)
        if body.get("provider", {}).get("require_parameters"):
            return httpx.Response(404, json={"error": {"message": "No endpoints found that can "
                                                       "handle the requested parameters."}})
        return httpx.Response(200, json={"choices": [{"finish_reason": "stop", "message": {
            "content": '{"status": "ok"}'}}]})

    cfg = ModelConfig(id="acme/m", provider="openrouter", api_key_env=None, pin="acme",
                      max_retries=0)
    r = await probe_model(cfg, transport=httpx.MockTransport(handler))
    assert r.verdict == REJECTED_PARAMETERS and r.culprit == "provider.require_parameters"
    assert [t["relaxed"] for t in r.tried][0] == "reasoning"
    assert r.endpoint is None  # the mock has no listing: the probe still answers


async def test_transport_error_verdict():
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused")

    cfg = ModelConfig(id="local", provider="vllm", max_retries=0)
    r = await probe_model(cfg, transport=httpx.MockTransport(handler))
    assert r.verdict == TRANSPORT_ERROR and r.culprit is None and "connect" in r.detail


async def test_missing_key_is_a_transport_error_naming_the_variable(monkeypatch):
    monkeypatch.delenv("FS_PROBE_KEY", raising=False)
    cfg = ModelConfig(id="x", provider="openrouter", api_key_env="FS_PROBE_KEY", pin="p")
    r = await probe_model(cfg)
    assert r.verdict == TRANSPORT_ERROR and "FS_PROBE_KEY" in r.detail


def test_conformance_problem():
    from foldscope.engine.probe import PROBE_SCHEMA

    assert conformance_problem('{"status": "ok"}', PROBE_SCHEMA) is None
    assert "required" in conformance_problem('{"status_text": "ok"}', PROBE_SCHEMA)
    assert "not JSON" in conformance_problem("ok", PROBE_SCHEMA)
    assert "undeclared" in conformance_problem('{"status": "ok", "x": 1}', PROBE_SCHEMA)


def test_cli_json(capsys):
    code = main(["probe", *EXPECTED, "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1  # not every verdict is ok
    assert [(o["model"], o["verdict"], o["culprit"]) for o in out] == [
        (m, v, c) for m, (v, c) in EXPECTED.items()]
    for o in out:
        assert {"model", "verdict", "culprit", "endpoint", "pin", "request", "detail"} <= set(o)


def test_cli_human_lines(capsys):
    assert main(["probe", "sim/faithful"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and lines[0].startswith("sim/faithful: ok")


def test_cli_config_file(tmp_path, capsys):
    path = tmp_path / "models.toml"
    path.write_text('[[models]]\nid = "sim/faithful:flaky"\nprovider = "sim"\nlatency_scale = 0\n'
                    'backoff_base_s = 0\n[models.faults]\nrate_5xx = 1.0\n', encoding="utf-8")
    assert main(["probe", "sim/faithful:flaky", "--config", str(path), "--json"]) == 1
    (out,) = json.loads(capsys.readouterr().out)
    assert out["verdict"] == TRANSPORT_ERROR


@pytest.mark.parametrize("argv", [["probe", "acme/unknown"],
                                  ["probe", "sim/faithful", "--config", "/nonexistent.toml"]])
def test_cli_bad_input_is_one_line_exit_2(argv):
    proc = subprocess.run([sys.executable, "-m", "foldscope.cli.main", *argv],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("foldscope: error:")


def test_probe_reads_models_from_a_sweep_file(capsys):
    import json as _json

    from foldscope.cli.main import main as cli

    assert cli(["probe", "sim/describer", "--config", "examples/kestrel-sweep.toml", "--json"]) == 0
    (result,) = _json.loads(capsys.readouterr().out)
    assert result["model"] == "sim/describer" and result["verdict"] == "ok"

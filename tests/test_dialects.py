"""Provider dialects as data, the probe's ladder, refusals by what they are, and slow servers."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from fake_llamacpp import FakeLlamaCpp
from hypothesis import given
from hypothesis import strategies as st

from foldscope.core.arms import ARMS, get_arm
from foldscope.core.dialects import dialects_from_data, render, schema_of, shipped
from foldscope.core.errors import ConfigError
from foldscope.core.fabrication import Reach
from foldscope.core.row import SERVER_CUT, ScenarioInputs, context_warnings, finish_kind
from foldscope.core.text import cost_text
from foldscope.engine.client.chat import ChatRequest
from foldscope.engine.client.errors import InfraError, RequestRejected
from foldscope.engine.client.model_client import ModelClient
from foldscope.engine.loader import load_scenario
from foldscope.engine.models import ModelConfig, resolve_model
from foldscope.engine.probe import OK, TRANSPORT_ERROR, probe_arms, probe_model
from foldscope.engine.runner import endpoint_concurrency
from foldscope.engine.sweep import SweepSection

PROVIDERS = ("openai", "openrouter", "vllm", "llamacpp", "ollama")


def llamacpp(**kw) -> ModelConfig:
    return ModelConfig(id="smollm2-135m", provider="llamacpp", base_url="http://127.0.0.1:9/v1",
                       **kw)


# -- the data -------------------------------------------------------------------------------------

def test_every_provider_has_a_ladder_of_known_dialects_and_a_reasoning_method():
    data = shipped()
    for name in PROVIDERS:
        entry = data.provider(name)
        assert entry.ladder and all(rung in data.dialects for rung in entry.ladder)
        assert entry.reasoning in data.reasoning
        assert entry.timeouts.floor_s > 0
    assert data.provider("llamacpp").ladder[:2] == ("json_schema", "json_object_schema")
    assert data.provider("llamacpp").max_length == "describe"
    assert data.provider("llamacpp").local and data.provider("llamacpp").concurrency == 1
    assert data.provider("vllm").tokenizer == "vllm"
    assert "guided_json" in data.provider("vllm").ladder


@pytest.mark.parametrize("breakage,fragment", [
    ({"providers": {"openai": {"ladder": ["nope"]}}}, "unknown dialect 'nope'"),
    ({"dialects": {"x": {"shape": "telepathy", "parameter": "p"}}}, "is not one of"),
    ({"providers": {"llamacpp": None}}, ""),
])
def test_a_broken_dialect_file_is_one_line_naming_the_key(breakage, fragment):
    import copy
    import tomllib
    from importlib import resources

    data = tomllib.loads(resources.files("foldscope.core.data").joinpath(
        "dialects.toml").read_text("utf-8"))
    broken = copy.deepcopy(data)
    for table, entries in breakage.items():
        for key, value in entries.items():
            if value is None:
                broken[table].pop(key)
            else:
                broken[table][key] = {**broken[table].get(key, {}), **value}
    if not fragment:  # dropping a provider other than openai is allowed: it speaks OpenAI's
        assert dialects_from_data(broken).provider("llamacpp").provider == "openai"
        return
    with pytest.raises(ConfigError) as info:
        dialects_from_data(broken)
    assert fragment in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("arm_id", [a for a, arm in ARMS.items() if arm.representation == "schema"])
@pytest.mark.parametrize("dialect", list(shipped().dialects))
def test_render_sends_the_arms_schema_in_each_shape(arm_id, dialect):
    rf = get_arm(arm_id).response_format()
    d = shipped().dialect(dialect)
    params = render(d, rf, "keep")
    schema = schema_of(rf)
    if d.shape == "json_schema":
        assert params == {"response_format": rf}
    elif d.shape == "json_object_schema":
        assert params == {"response_format": {"type": "json_object", "schema": schema}}
    elif d.shape == "guided_json":
        assert params == {"guided_json": schema}
    elif d.shape == "grammar":
        assert params == {"json_schema": schema}
    elif d.shape == "json_object":
        assert params == {"response_format": {"type": "json_object"}}
    else:
        assert params == {}
    # describing maxLength never touches the arm's own schema, and leaves no bound behind
    described = render(d, rf, "describe")
    assert "maxLength" not in json.dumps(described)
    assert rf == get_arm(arm_id).response_format()


@given(st.dictionaries(st.text("abcdef", min_size=1, max_size=4),
                       st.one_of(st.integers(1, 20_000), st.none()), max_size=6))
def test_describing_max_length_keeps_every_bound_in_words(bounds):
    props = {name: ({"type": "string", "maxLength": n} if n else {"type": "string"})
             for name, n in bounds.items()}
    rf = {"type": "json_schema", "json_schema": {"name": "c", "strict": True, "schema": {
        "type": "object", "properties": props, "required": list(props)}}}
    out = render(shipped().dialect("json_object_schema"), rf, "describe")["response_format"]
    for name, n in bounds.items():
        prop = out["schema"]["properties"][name]
        assert "maxLength" not in prop
        if n:
            assert f"At most {n:,} characters." in prop["description"]
    assert out["schema"]["required"] == list(props)


def test_prompt_dialects_spell_the_schema_out_in_the_user_message():
    cfg = llamacpp(schema_dialect="prompt")
    client = ModelClient(cfg)
    body = client.build_body(ChatRequest([{"role": "system", "content": "s"},
                                          {"role": "user", "content": "fold this"}], 100,
                                         get_arm("q").response_format()))
    assert "response_format" not in body
    assert body["messages"][1]["content"].startswith("fold this")
    assert '"facts_and_values"' in body["messages"][1]["content"]


def test_reasoning_is_turned_off_per_provider_data():
    assert ModelClient(resolve_model("x", {"provider": "vllm"})).build_body(
        ChatRequest([], 1))["chat_template_kwargs"] == {"enable_thinking": False}
    assert "reasoning_effort" in ModelClient(resolve_model(
        "x", {"provider": "ollama", "reasoning_param": "ollama"})).build_body(ChatRequest([], 1))
    body = ModelClient(llamacpp()).build_body(ChatRequest([], 1))
    assert not {"reasoning", "chat_template_kwargs", "reasoning_effort"} & set(body)


def test_an_unknown_schema_dialect_is_refused_by_name():
    from foldscope.core.errors import ModelError

    with pytest.raises(ModelError) as info:
        resolve_model("x", {"provider": "llamacpp", "schema_dialect": "grammer"})
    assert "schema_dialect 'grammer'" in str(info.value)


# -- refusals, by what they are ---------------------------------------------------------------

async def test_a_500_holding_a_validation_error_is_a_refusal_naming_the_parameter():
    fake = FakeLlamaCpp()
    settled: list[str | None] = []

    class Gate:
        def attempt(self):
            import contextlib

            @contextlib.asynccontextmanager
            async def cm():
                yield settled.append
            return cm()

    client = ModelClient(llamacpp(schema_dialect="json_schema"),
                         transport=httpx.MockTransport(fake), gate=Gate())
    with pytest.raises(RequestRejected) as info:
        await client.chat(ChatRequest([{"role": "user", "content": "x"}], 16,
                                      get_arm("j").response_format()))
    assert info.value.parameter == "response_format.type" and info.value.attempts == 1
    assert "parameter response_format.type" in str(info.value)
    assert settled == ["rejected"]  # not a server fault: the limiter is not cut
    assert len(fake.bodies) == 1  # never retried
    await client.aclose()


@pytest.mark.parametrize("status,body,parameter", [
    (400, {"error": {"message": "bad", "param": "seed"}}, "seed"),
    (422, {"detail": [{"loc": ["body", "guided_json"], "msg": "Extra inputs are not permitted"}]},
     "guided_json"),
    (400, {"error": {"message": "Unsupported parameter: 'temperature' is not supported"}},
     "temperature"),
    (400, {"error": {"message": "no"}}, None),
])
async def test_a_4xx_names_the_parameter_when_the_body_does(status, body, parameter):
    client = ModelClient(llamacpp(), transport=httpx.MockTransport(
        lambda r: httpx.Response(status, json=body)))
    with pytest.raises(RequestRejected) as info:
        await client.chat(ChatRequest([{"role": "user", "content": "x"}], 16, temperature=0.0))
    assert info.value.parameter == parameter and info.value.attempts == 1
    await client.aclose()


async def test_a_plain_500_is_still_a_server_fault_and_retried():
    calls = []

    def handler(request):
        calls.append(request)
        return httpx.Response(500, json={"error": {"message": "CUDA out of memory"}})

    client = ModelClient(llamacpp(max_retries=2), transport=httpx.MockTransport(handler),
                         sleep=lambda d: asyncio.sleep(0))
    with pytest.raises(InfraError) as info:
        await client.chat(ChatRequest([{"role": "user", "content": "x"}], 16))
    assert info.value.kind == "server_error" and len(calls) == 3
    await client.aclose()


# -- slow servers ---------------------------------------------------------------------------------

def test_the_deadline_grows_with_the_request():
    cfg = llamacpp(timeout_s=10, timeout_per_prompt_token_s=0.5, timeout_per_output_token_s=2)
    client = ModelClient(cfg)
    small = client.deadline({"messages": [{"role": "user", "content": "x" * 40}],
                             "max_tokens": 10})
    large = client.deadline({"messages": [{"role": "user", "content": "x" * 4000}],
                             "max_tokens": 1000})
    assert small == pytest.approx(10 + 0.5 * 10 + 2 * 10)
    assert large == pytest.approx(10 + 0.5 * 1000 + 2 * 1000)
    # the provider's allowances when the model sets none: llama.cpp's are generous
    default = ModelClient(llamacpp()).deadline({"messages": [{"role": "user",
                                                              "content": "x" * 14_616}],
                                                "max_tokens": 4096})
    assert default > 516  # the fold the issue saw take 516 s fits


@given(per_prompt=st.sampled_from([0.0, -0.0, 0.002, 0.5]), per_output=st.sampled_from([0.0, 2.0]),
       floor=st.floats(0.1, 1e4), contents=st.lists(st.text(max_size=300), max_size=4),
       budget=st.one_of(st.integers(-5, 10**6), st.none(), st.booleans()))
def test_the_deadline_skips_the_prompt_estimate_only_where_it_cannot_count(
        per_prompt, per_output, floor, contents, budget):
    from foldscope.core.tokens import estimate_tokens

    cfg = llamacpp(timeout_s=floor, timeout_per_prompt_token_s=per_prompt,
                   timeout_per_output_token_s=per_output)
    body = {"messages": [{"role": "user", "content": c} for c in contents], "max_tokens": budget}
    # the rule as it was: every message's estimate, whatever the allowance per prompt token
    prompt = sum(estimate_tokens(c) for c in contents)
    asked = budget if isinstance(budget, int) and not isinstance(budget, bool) else 0
    assert ModelClient(cfg).deadline(body) == cfg.timeouts.deadline(prompt, asked)


async def test_a_timeout_on_a_server_that_takes_connections_is_slow_and_waits_longer():
    async def silent(reader, writer):  # accepts, reads, never answers: busy generating
        await reader.read(1)
        await asyncio.sleep(30)

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    retries: list[str] = []
    cfg = ModelConfig(id="m", provider="llamacpp", base_url=f"http://127.0.0.1:{port}/v1",
                      timeout_s=0.2, timeout_per_prompt_token_s=0, timeout_per_output_token_s=0,
                      max_retries=1, backoff_base_s=0)
    client = ModelClient(cfg, on_retry=lambda kind, delay: retries.append(kind))
    started = asyncio.get_running_loop().time()
    with pytest.raises(InfraError) as info:
        await client.chat(ChatRequest([{"role": "user", "content": "x"}], 1))
    took = asyncio.get_running_loop().time() - started
    assert info.value.kind == "slow" and retries == ["slow"]
    assert "slow or busy rather than gone" in str(info.value)
    assert took >= 0.2 + 0.4 - 0.05  # the retry waited twice as long
    await client.aclose()
    server.close()


async def test_a_timeout_on_a_server_that_is_gone_is_not_slow():
    with __import__("socket").socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    cfg = ModelConfig(id="m", provider="llamacpp", base_url=f"http://127.0.0.1:{port}/v1",
                      max_retries=0)
    client = ModelClient(cfg)
    with pytest.raises(InfraError) as info:
        await client.chat(ChatRequest([{"role": "user", "content": "x"}], 1))
    assert info.value.kind == "connect"
    await client.aclose()


def test_local_providers_default_to_one_call_in_flight():
    s = SweepSection(scenario="tiny", arms=["l"], concurrency=8)
    assert endpoint_concurrency(llamacpp(), s) == 1
    assert endpoint_concurrency(resolve_model("x", {"provider": "ollama"}), s) == 1
    assert endpoint_concurrency(resolve_model("x", {"provider": "openrouter", "pin": "p"}), s) == 8
    assert endpoint_concurrency(llamacpp(concurrency=3), s) == 3
    assert endpoint_concurrency(llamacpp(concurrency=30), s) == 8  # never above the sweep's

    class Advertised:
        slots = 4

    assert endpoint_concurrency(llamacpp(), s, Advertised()) == 4
    s2 = SweepSection(scenario="tiny", arms=["l"], concurrency=8, rate_limits={"llamacpp": 2})
    assert endpoint_concurrency(llamacpp(), s2) == 2


def test_context_warnings_name_the_arm_and_the_sizes():
    tiny = ScenarioInputs.of(load_scenario("tiny"))
    assert context_warnings(8192, [get_arm("l"), get_arm("g")], [tiny]) == []
    warned = context_warnings(4096, [get_arm("j"), get_arm("l")], [tiny])
    assert len(warned) == 1 and "arm j: output budget 4,096" in warned[0]
    small = context_warnings(2048, [get_arm("l")], [tiny])
    assert small and "arm l" in small[0] and "context of 2,048" in small[0]


@given(st.sampled_from(["stop", "length", "content_filter", "unknown"]),
       st.one_of(st.none(), st.integers(0, 5000)), st.integers(1, 5000))
def test_a_length_stop_below_the_budget_asked_is_a_server_cut(finish, written, requested):
    kind = finish_kind(finish, written, requested)
    if finish == "length" and written is not None and written < requested:
        assert kind == SERVER_CUT
    else:
        assert kind == finish


def test_stopped_early_follows_the_stored_finish_reason():
    assert Reach(14, 14, "length").stopped_early  # cut at its budget, every label reached
    assert Reach(14, 14, "server_cut").stopped_early
    assert not Reach(14, 3, "stop").stopped_early  # stopped by itself after a few lines
    assert Reach(14, 3, None).stopped_early  # older rows: by reach
    assert not Reach(14, 14, None).stopped_early


def test_unknown_cost_is_unknown_not_zero():
    assert cost_text(0.0, 3) == "unknown" and cost_text(1.5, 1) == "unknown"
    assert cost_text(0.0) == "$0.0000" and cost_text(0.12345) == "$0.1235"


# -- the probe's ladder -----------------------------------------------------------------------

def test_probe_arms_are_the_largest_schemas():
    ids = [a.id for a in probe_arms()]
    assert ids[0] in ("q", "k") and len(ids) == 2 and ids[1] in ("j", "p", "n")
    assert [a.id for a in probe_arms(["l", "g"])] == ["g"]
    assert probe_arms(["m", "o"]) == []


async def test_probe_walks_the_ladder_names_the_culprit_and_the_dialect():
    fake = FakeLlamaCpp()
    result = await probe_model(llamacpp(), transport=httpx.MockTransport(fake),
                               arm_ids=["j", "q", "m"])
    assert result.verdict == OK and result.dialect == "json_object_schema"
    assert result.culprit == "response_format.type"
    assert [(r["dialect"], r["outcome"]) for r in result.ladder][:2] == [
        ("json_schema", "rejected"), ("json_object_schema", "accepted")]
    assert set(result.arms) == {"j", "q"}
    assert not fake.dead  # the arms' 1,920 and 9,600 bounds were described, not compiled
    sent = [b["response_format"] for b in fake.bodies if b["response_format"]["type"] == "json_object"]
    assert sent and "maxLength" not in json.dumps(sent)


async def test_probe_that_kills_the_server_is_a_transport_error():
    fake = FakeLlamaCpp()
    cfg = llamacpp(schema_dialect="json_object_schema", max_retries=0)
    # a provider that keeps maxLength would have brought the server down: the probe says so
    from foldscope.core import dialects

    keep = dialects.shipped().provider("llamacpp").__class__(
        **{**dialects.shipped().provider("llamacpp").__dict__, "max_length": "keep"})
    original = dialects.shipped().providers["llamacpp"]
    dialects.shipped().providers["llamacpp"] = keep
    try:
        result = await probe_model(cfg, transport=httpx.MockTransport(fake), arm_ids=["j"])
    finally:
        dialects.shipped().providers["llamacpp"] = original
    assert result.verdict == TRANSPORT_ERROR and fake.dead


# -- a sweep at a (fake) llama.cpp server ---------------------------------------------------

def _llama_sweep(db, fake, arms=("l", "g"), **model):
    from conftest import run_sweep

    data = {"sweep": {"scenario": "tiny", "arms": list(arms), "repeats": 1, "concurrency": 8},
            "models": [{"id": "smollm2-135m", "provider": "llamacpp",
                        "base_url": "http://127.0.0.1:8080/v1", **model}]}
    return run_sweep(db, data, transport=httpx.MockTransport(fake))


def test_a_sweep_at_llamacpp_uses_and_records_the_probed_dialect(tmp_path):
    from foldscope.engine.report import sweep_report
    from foldscope.engine.store import Store

    fake = FakeLlamaCpp()
    db = tmp_path / "l.sqlite"
    sweep_id = _llama_sweep(db, fake, context_tokens=4096)
    with Store(db) as store:
        rows = store.rows(sweep_id)
        assert [r.status for r in rows] == ["done", "done"]
        pin = store.sweep(sweep_id).pins["smollm2-135m"]
        report = sweep_report(store, sweep_id)
    assert pin["dialect"] == "json_object_schema" and pin["dialect_source"] == "probe"
    assert pin["probe"]["culprit"] == "response_format.type"
    assert pin["concurrency"] == 1 and pin["context_tokens"] == 4096
    assert pin["tokens"]["tiny"]["source"] == "server" and pin["tokens"]["tiny"]["scale"] > 1
    assert pin["server"]["fingerprint"]  # the alias and the tokenizer's reading
    schema_calls = [b for b in fake.bodies if "capability probe" not in b["messages"][0]["content"]
                    and b.get("response_format")]
    assert schema_calls and all(b["response_format"]["type"] == "json_object"
                                for b in schema_calls)
    assert all(r.answer_finish == "stop" and not r.cost_known for r in rows)
    assert report["accounting"]["total"]["cost_usd"] is None
    assert all(c["cost_usd"] is None for c in report["cells"])
    assert not fake.dead


def test_output_budget_beyond_the_context_is_warned_and_server_cuts_are_recorded(tmp_path):
    from foldscope.engine.store import Store

    fake = FakeLlamaCpp(n_ctx=1500, n_predict=500, answer="x" * 6000)
    db = tmp_path / "c.sqlite"
    sweep_id = _llama_sweep(db, fake, arms=("l",), context_tokens=1500)
    with Store(db) as store:
        [row] = store.rows(sweep_id)
        warnings = store.sweep(sweep_id).pins["smollm2-135m"]["warnings"]
    assert any("arm l" in w and "context of 1,500" in w for w in warnings)
    assert row.status == "done", row.infra_error
    assert row.answer_finish == "server_cut"  # asked 1,024, the server stopped it at 500

    # a prompt the context cannot hold is a refusal naming `messages`, never retried
    fake = FakeLlamaCpp(n_ctx=400)
    db = tmp_path / "d.sqlite"
    sweep_id = _llama_sweep(db, fake, arms=("l",))
    with Store(db) as store:
        [row] = store.rows(sweep_id)
    assert row.status == "failed" and row.validity_reason == "request_rejected"
    assert "parameter messages" in row.infra_error and row.call_retries == 0


def test_the_cache_key_changes_with_what_the_server_reports():
    from foldscope.engine.runner import cache_key

    client = ModelClient(llamacpp())
    req = ChatRequest([{"role": "user", "content": "x"}], 8)
    before = cache_key(client, req, 0)
    client.server_fingerprint = "abc"
    assert cache_key(client, req, 0) != before


def test_retries_of_calls_a_stop_cut_short_are_counted_and_stored(tmp_path):
    from foldscope.engine.events import Retry
    from foldscope.engine.launch import prepare_sweep
    from foldscope.engine.runner import SweepRunner
    from foldscope.engine.store import Store

    data = {"sweep": {"scenario": "smoke", "arms": ["m"], "repeats": 1, "concurrency": 1},
            "models": [{"id": "sim/faithful", "faults": {"rate_5xx": 1.0},
                        "max_retries": 20, "backoff_base_s": 0.01, "backoff_cap_s": 0.01}]}
    db = tmp_path / "r.sqlite"
    sweep_id = prepare_sweep(db, data, "test", fresh=True).sweep_id
    runner = SweepRunner(db, sweep_id, latency_scale=0.0)
    seen = []

    def on_event(event):
        if isinstance(event, Retry):
            seen.append(event)
            if len(seen) == 3:
                runner.cancel("test stop")

    runner.on_event = on_event
    assert asyncio.run(runner.run()) == "stopped"
    with Store(db) as store:
        [row] = store.rows(sweep_id)
    assert runner.totals.call_retries == len(seen) >= 3
    assert row.call_retries == len(seen)  # stored although the call never ended


def test_new_never_reads_the_cache_unless_the_file_says_so(tmp_path, capsys):
    from foldscope.cli.main import main
    from foldscope.engine.store import Store

    sweep = tmp_path / "s.toml"
    sweep.write_text('[sweep]\nscenario = "smoke"\narms = ["m"]\n\n[[models]]\nid = "sim/faithful"\n')
    db = tmp_path / "n.sqlite"
    assert main(["run", str(sweep), "--headless", "--db", str(db), "--new"]) == 0
    with Store(db) as store:
        [entry] = store.sweeps()
        assert store.sweep(entry.id).config["sweep"]["cache"] is False
    sweep.write_text(sweep.read_text().replace('arms = ["m"]', 'arms = ["m"]\ncache = true'))
    assert main(["run", str(sweep), "--headless", "--db", str(db), "--new"]) == 0
    assert "replayed from the response cache" in capsys.readouterr().err


@pytest.mark.parametrize("message", ["VALIDATION_500", "VALIDATION_500_PYDANTIC"])
def test_the_validation_path_is_read_from_either_shape(message):
    import fake_llamacpp

    from foldscope.engine.client.model_client import _is_validation_error, _named_parameter

    text = getattr(fake_llamacpp, message)
    assert _is_validation_error(text)
    assert _named_parameter(text, {"response_format": {"type": "json_schema"}}) == \
        "response_format.type"


def test_parameters_a_provider_does_not_honour_are_warned_about():
    from foldscope.engine.runner import unhonoured_warnings

    assert unhonoured_warnings(ModelClient(llamacpp()), ["l", "g"]) == []
    seeded = ModelClient(resolve_model("x", {"provider": "ollama", "seed": 3,
                                             "reasoning_param": "vllm"}))
    [warning] = unhonoured_warnings(seeded, ["j"])
    assert "chat_template_kwargs" in warning and "ollama" in warning


def test_a_slow_fold_rate_reads_in_folds_a_minute():
    from foldscope.core.pace import format_rate

    assert format_rate(4 / 269) == "0.9 folds/min"
    assert format_rate(0.0) == "0.0 folds/s" and format_rate(None) == "0.0 folds/s"
    assert format_rate(12.34) == "12.3 folds/s" and format_rate(0.1) == "0.1 folds/s"


def test_a_server_that_takes_no_schema_gets_the_prompt_rung(tmp_path):
    from foldscope.engine.store import Store

    class Refusing(FakeLlamaCpp):
        def __call__(self, request):
            if request.url.path.endswith("/chat/completions"):
                body = json.loads(request.content)
                if body.get("response_format") or "json_schema" in body:
                    return httpx.Response(400, json={"error": {"message": "no schemas here",
                                                               "param": "response_format"}})
            return super().__call__(request)

    db = tmp_path / "w.sqlite"
    sweep_id = _llama_sweep(db, Refusing(), arms=("l", "g"))
    with Store(db) as store:
        pin = store.sweep(sweep_id).pins["smollm2-135m"]
        rows = {r.arm: r for r in store.rows(sweep_id)}
    # the ladder ends in `prompt` (no response_format at all), which this server takes
    assert pin["dialect"] == "prompt" and pin["probe"]["culprit"] == "response_format"
    assert rows["g"].status == "done" and rows["l"].status == "done"


def test_a_reply_cut_at_the_probes_budget_is_judged_as_far_as_it_went():
    from foldscope.engine.probe import _in_shape_so_far

    rf = get_arm("q").response_format()
    cut = '{ "progress": "1.0", "facts_and_values" : "a\nb", "decisions_and_constraints" : "run'
    assert _in_shape_so_far(cut, "length", rf)
    assert not _in_shape_so_far(cut, "stop", rf)  # a reply that ended there is just short
    assert not _in_shape_so_far('{"other": "x', "length", rf)  # undeclared property
    assert not _in_shape_so_far("Sure! Here is", "length", rf)


def test_rows_sent_beside_the_probe_start_over_in_the_dialect_it_chose(tmp_path):
    # At an endpoint with room for more calls than the probe makes, schema rows send their
    # first calls while the probe runs, in the ladder's first rung. llama.cpp refuses that one:
    # the rows wait for the probe and start over in the rung it chose, so what is stored is
    # what the same sweep stores when the rows wait for the probe (one slot: no room).
    import asyncio

    from foldscope.engine.store import Store

    class SlowProbe(FakeLlamaCpp):
        """Answers the probe's requests 0.3 s late: the rows' first calls go out before it
        has chosen (an instant fake lets the probe win the race, and nothing is sent beside it)."""

        def __call__(self, request):
            reply = super().__call__(request)
            if b"capability probe" not in request.content:
                return reply

            async def later():
                await asyncio.sleep(0.3)
                return reply
            return later()

    stored = {}
    for slots in (1, 4):
        fake = SlowProbe()
        db = tmp_path / f"s{slots}.sqlite"
        sweep_id = _llama_sweep(db, fake, context_tokens=4096, concurrency=slots)
        with Store(db) as store:
            rows = store.rows(sweep_id)
            assert [r.status for r in rows] == ["done", "done"]
            assert store.sweep(sweep_id).pins["smollm2-135m"]["dialect"] == "json_object_schema"
            stored[slots] = [(r.arm, r.recall, r.valid, r.validity_reason, r.folds_done,
                              [(f.carrier, f.parse_status) for f in store.folds(r.id)])
                             for r in rows]
        kinds = [b["response_format"]["type"] for b in fake.bodies
                 if "capability probe" not in b["messages"][0]["content"]
                 and b.get("response_format")]
        # With room, the first calls went out in json_schema (refused); every later one in the
        # chosen dialect. Without, none did.
        assert kinds.count("json_schema") == (0 if slots == 1 else kinds.count("json_schema"))
        assert kinds[-1] == "json_object" and "json_object" in kinds
        if slots == 4:
            assert 1 <= kinds.count("json_schema") <= 2
    assert stored[1] == stored[4]


def test_the_probe_runs_beside_a_large_limit_and_in_a_small_one(tmp_path):
    # At a limit of 200 and more (a hundred times the probe's calls), the probe's calls take no
    # slot of it: rows keep every one (as many rows as the limit would otherwise end a probe's
    # latency late). A small limit keeps its exact bound. The pin says which it was.
    from foldscope.engine.store import Store

    for concurrency, beside in ((8, False), (200, True)):
        fake = FakeLlamaCpp()
        db = tmp_path / f"c{concurrency}.sqlite"
        data = {"sweep": {"scenario": "tiny", "arms": ["l", "g"], "repeats": 1,
                          "concurrency": concurrency},
                "models": [{"id": "smollm2-135m", "provider": "llamacpp",
                            "base_url": "http://127.0.0.1:8080/v1", "context_tokens": 4096,
                            "concurrency": concurrency}]}
        from conftest import run_sweep

        sweep_id = run_sweep(db, data, transport=httpx.MockTransport(fake))
        with Store(db) as store:
            pin = store.sweep(sweep_id).pins["smollm2-135m"]
            assert [r.status for r in store.rows(sweep_id)] == ["done", "done"]
        assert pin["dialect"] == "json_object_schema" and pin["probe"]["beside_limit"] is beside

"""Replies from a hostile endpoint (issue 20): validated before anything uses, caches or stores
them; bounded in memory; Retry-After floored and capped; the simulated flag from the config."""

from __future__ import annotations

import gzip
import json
import sqlite3
import zlib

import httpx
import pytest
from fault_server import FaultServer, Raw, chat_body, ok, sweep_file
from hypothesis import given
from hypothesis import strategies as st

from foldscope.cli.main import main
from foldscope.core.nesting import NestingError, loads_json, loads_toml
from foldscope.engine.client.chat import ChatRequest
from foldscope.engine.client.errors import InfraError
from foldscope.engine.client.model_client import ModelClient
from foldscope.engine.client.reply_check import (
    RETRY_AFTER_MAX_S,
    body_limit,
    cached_reply_problem,
    cost_or_none,
    count_or_none,
    retry_wait_s,
)
from foldscope.engine.models import resolve_model

REQ = ChatRequest([{"role": "user", "content": "hi"}], 16)


def cfg(url: str, **over):
    return resolve_model("acme/m", {"provider": "vllm", "base_url": url, "max_retries": 1,
                                    "backoff_base_s": 0.0, "backoff_cap_s": 0.0, **over})


async def call(url: str, sleeps: list[float] | None = None, **over):
    async def sleep(d):
        if sleeps is not None:
            sleeps.append(d)
    async with ModelClient(cfg(url, **over), sleep=sleep) as client:
        return await client.chat(REQ)


# -- parse-time bounds -------------------------------------------------------------------------


@given(st.integers(min_value=2**63, max_value=10**40))
def test_integers_of_2_63_or_more_are_refused_at_parse_time(n):
    with pytest.raises(NestingError):
        loads_json(f'{{"usage": {{"prompt_tokens": {n}}}}}')
    with pytest.raises(NestingError):
        loads_json(f'{{"usage": {{"prompt_tokens": -{n}}}}}')


def test_huge_digit_strings_and_deep_nesting_are_refused_without_recursion_error():
    for text in ('{"a": ' + "9" * 4000 + "}", '{"a": 1.' + "5" * 4000 + "}",
                 "[" * 200_000 + "]" * 200_000, '{"a":' * 100_000 + "1" + "}" * 100_000):
        with pytest.raises(NestingError):
            loads_json(text)
    # brackets inside strings do not count
    assert loads_json(json.dumps({"s": "[" * 10_000})) == {"s": "[" * 10_000}


@pytest.mark.parametrize("text", ["a = " + "[" * 50_000 + "]" * 50_000,
                                  "a = " + "{b = " * 5_000 + "1" + "}" * 5_000,
                                  "[" + ".".join(["t"] * 20_000) + "]\nx = 1",
                                  ".".join(["k"] * 20_000) + " = 1"])
def test_toml_nested_deep_is_refused(text):
    with pytest.raises(NestingError):
        loads_toml(text)


def test_usage_figures_outside_their_range_are_unknown():
    for bad in (-1, -1e6, float("nan"), float("inf"), 1e300, True, "3", None):
        assert cost_or_none(bad) is None
    assert cost_or_none(0) == 0.0 and cost_or_none(0.25) == 0.25
    for bad in (-1, -10**12, 10**30, 1.5, True, "7"):
        assert count_or_none(bad) is None
    assert count_or_none(0) == 0 and count_or_none(123) == 123


# -- one call ---------------------------------------------------------------------------------


async def test_negative_nan_and_infinite_costs_count_as_unknown():
    for usage in ('{"prompt_tokens": 5, "completion_tokens": 2, "cost": -1e6}',
                  '{"prompt_tokens": 5, "completion_tokens": 2, "cost": NaN}',
                  '{"prompt_tokens": 5, "completion_tokens": 2, "cost": Infinity}',
                  '{"prompt_tokens": -1e12, "completion_tokens": -5, "cost": -0.5}'):
        with FaultServer([ok(usage=usage)]) as server:
            reply = await call(server.base_url)
        assert reply.cost_usd is None
        assert reply.prompt_tokens in (None, 5) and reply.completion_tokens in (None, 2)


@pytest.mark.parametrize("body", [
    chat_body(usage='{"prompt_tokens": ' + str(10**30) + "}"),
    chat_body(usage='{"prompt_tokens": ' + "7" * 4000 + "}"),
    chat_body(extra=', "deep": ' + "[" * 200_000 + "]" * 200_000),
])
async def test_a_reply_failing_validation_fails_its_call_retryably(body):
    with FaultServer([Raw(body, headers={"content-type": "application/json"})]) as server:
        with pytest.raises(InfraError) as info:
            await call(server.base_url)
    assert info.value.kind == "malformed" and "\n" not in str(info.value)
    assert len(server.requests) == 2  # retried once (max_retries 1), never crashed


@pytest.mark.parametrize("encoding,pack", [
    ("gzip", gzip.compress),
    ("deflate", zlib.compress),
    ("deflate", lambda b: zlib.compress(b)[2:-4]),  # raw deflate, as some servers send it
])
async def test_a_compressed_bomb_stops_at_the_decoded_bound(encoding, pack):
    content = "a" * 5_000_000  # 5 MB decoded, a few kB on the wire
    body = pack(chat_body(content))
    assert len(body) < 100_000
    with FaultServer([Raw(body, headers={"content-type": "application/json",
                                         "content-encoding": encoding})]) as server:
        with pytest.raises(InfraError) as info:
            await call(server.base_url, max_reply_bytes=1000)
        assert "passed" in str(info.value) and f"{body_limit(1000):,}" in str(info.value)
        # Under the bound the same encoding decodes and the reply is used.
        small = pack(chat_body("x" * 500))
        server.replies = [Raw(small, headers={"content-type": "application/json",
                                              "content-encoding": encoding})]
        reply = await call(server.base_url, max_reply_bytes=1000)
    assert reply.content == "x" * 500


async def test_a_zstd_bomb_stops_at_the_decoded_bound():
    zstandard = pytest.importorskip("zstandard")
    body = zstandard.ZstdCompressor().compress(chat_body("a" * 5_000_000))
    with FaultServer([Raw(body, headers={"content-type": "application/json",
                                         "content-encoding": "zstd"})]) as server:
        with pytest.raises(InfraError, match="passed"):
            await call(server.base_url, max_reply_bytes=1000)
        assert "zstd" in {k.lower(): v for k, v in server.headers[0].items()}["accept-encoding"]


async def test_a_brotli_bomb_stops_at_the_decoded_bound_and_a_small_reply_decodes():
    brotli = pytest.importorskip("brotli")
    body = brotli.compress(chat_body("a" * 50_000_000), quality=5)  # 50 MB in ~100 bytes
    assert len(body) < 10_000
    with FaultServer([Raw(body, headers={"content-type": "application/json",
                                         "content-encoding": "br"})]) as server:
        with pytest.raises(InfraError, match="passed"):
            await call(server.base_url, max_reply_bytes=1000)
        assert "br" in {k.lower(): v for k, v in server.headers[0].items()}["accept-encoding"]
        # A reply larger than one of the decoder's output pieces, under the bound, is whole.
        content = "".join(f"{i:07d}" for i in range(40_000))  # 280 kB, incompressible-ish
        server.replies = [Raw(brotli.compress(chat_body(content)),
                              headers={"content-type": "application/json",
                                       "content-encoding": "br"})]
        reply = await call(server.base_url, max_reply_bytes=400_000)
    assert reply.content == content


@pytest.mark.parametrize("content", ["", "x", "y" * 70_000])
def test_the_brotli_decoder_gives_back_every_byte_in_bounded_pieces(content):
    brotli = pytest.importorskip("brotli")
    from foldscope.engine.client.reply_check import _Brotli

    packed = brotli.compress(content.encode())
    decoder, out = _Brotli(), b""
    for i in range(0, len(packed), 7):  # fed in small pieces, as a stream arrives
        out += decoder.feed(packed[i:i + 7], 10**9)
    assert out == content.encode()


async def test_an_encoding_not_asked_for_is_refused_not_decoded_unbounded():
    with FaultServer([Raw(b"\x00" * 100, headers={"content-type": "application/json",
                                                   "content-encoding": "compress"})]) as server:
        with pytest.raises(InfraError, match="content-encoding 'compress'"):
            await call(server.base_url)


async def test_an_endless_body_is_cut_at_the_bound_long_before_the_deadline():
    def endless():
        yield b'{"choices": [{"message": {"content": "'
        while True:
            yield b"a" * 65536

    with FaultServer(lambda n, body: Raw(endless(), headers={"content-type": "application/json"})
                     ) as server:
        with pytest.raises(InfraError) as info:
            await call(server.base_url, max_reply_bytes=10_000, timeout_s=60)
    assert info.value.kind == "malformed" and "passed" in str(info.value)


async def test_a_real_endpoint_cannot_label_itself_simulated():
    reply = ok()
    reply.headers["x-foldscope-simulated"] = "1"
    spoof = Raw(chat_body(extra=', "system_fingerprint": "foldscope-sim"'), headers=reply.headers)
    with FaultServer([spoof]) as server:
        assert (await call(server.base_url)).simulated is False


# -- Retry-After ------------------------------------------------------------------------------


def test_retry_wait_is_floored_at_the_backoff_and_capped():
    assert retry_wait_s(0.0, 0.7) == 0.7
    assert retry_wait_s(None, 0.7) == 0.7
    assert retry_wait_s(5.0, 0.7) == 5.0
    assert retry_wait_s(99999.0, 0.7) == RETRY_AFTER_MAX_S


@pytest.mark.parametrize("value", ["0", "-5", "nan", "inf", "garbage", "1e999"])
async def test_retry_after_cannot_make_the_client_spin(value):
    busy = Raw(b'{"error": {"message": "slow"}}', status=429,
               headers={"content-type": "application/json", "retry-after": value})
    sleeps: list[float] = []
    with FaultServer([busy] * 3 + [ok()]) as server:
        await call(server.base_url, sleeps, backoff_base_s=1.0, backoff_cap_s=8.0)
    assert len(sleeps) == 3
    # at least the normal back-off (half of 1, 2, 4 s with equal jitter)
    assert all(s >= 0.5 * 2 ** i for i, s in enumerate(sleeps)), sleeps
    assert all(s <= RETRY_AFTER_MAX_S for s in sleeps)


async def test_a_retry_after_beyond_the_wait_allowance_is_named_in_the_error():
    busy = Raw(b'{"error": {"message": "slow"}}', status=429,
               headers={"content-type": "application/json", "retry-after": "99999"})
    with FaultServer([busy]) as server:
        with pytest.raises(InfraError) as info:
            await call(server.base_url, [], rate_limit_wait_s=5)
    msg = str(info.value)
    assert "asked to wait 99999s" in msg and "rate_limit_wait_s" in msg


# -- sweeps against a hostile endpoint ----------------------------------------------------------


def _report(db, capsys) -> dict:
    capsys.readouterr()
    assert main(["report", "--db", str(db), "--format", "json"]) == 0
    out = capsys.readouterr().out
    return json.loads(out[out.index("{"):])


def test_negative_cost_cannot_bypass_a_budget(tmp_path, capsys):
    usage = '{"prompt_tokens": 5, "completion_tokens": 2, "cost": -1e6}'
    with FaultServer([ok(usage=usage)]) as server:
        path = sweep_file(tmp_path / "s.toml", server.base_url, sweep="budget_usd = 3",
                          arms='["m", "o", "l"]', repeats=3)
        main(["run", path, "--db", str(tmp_path / "d.sqlite"), "--headless"])
        calls = len(server.requests)
    err = capsys.readouterr().err
    assert "unknown" in err and "budget" in err
    # Stopped conservatively: not every row's calls were made.
    assert calls < 9 * 3
    text = json.dumps(_report(tmp_path / "d.sqlite", capsys))
    assert "-999" not in text and "inf" not in text.replace("info", "")


def test_one_negative_cost_among_dollar_calls_cannot_bypass_a_budget(tmp_path, capsys):
    dollar = ok(usage='{"prompt_tokens": 5, "completion_tokens": 2, "cost": 1.0}')
    poison = ok(usage='{"prompt_tokens": 5, "completion_tokens": 2, "cost": -1e6}')
    with FaultServer(lambda n, body: poison if n == 1 else dollar) as server:
        path = sweep_file(tmp_path / "s.toml", server.base_url, sweep="budget_usd = 3",
                          arms='["m", "o", "l"]', repeats=3)
        main(["run", path, "--db", str(tmp_path / "d.sqlite"), "--headless"])
        calls = len(server.requests)
    # "budget reached", or "cannot be held" when the unknown-cost reply lands first
    err = capsys.readouterr().err
    assert "budget reached" in err or "cannot be held" in err
    # At most the calls already in flight (concurrency 8) run past the $3: not 36.
    assert calls <= 3 + 8
    report = _report(tmp_path / "d.sqlite", capsys)
    assert "-99" not in json.dumps(report)


def test_a_resumed_run_remembers_that_spend_was_partly_unknown(tmp_path, capsys):
    dollar = ok(usage='{"prompt_tokens": 5, "completion_tokens": 2, "cost": 1.0}')
    unknown = ok(usage='{"prompt_tokens": 5, "completion_tokens": 2}')
    db = tmp_path / "d.sqlite"
    with FaultServer(lambda n, body: unknown if n % 2 else dollar) as server:
        path = sweep_file(tmp_path / "s.toml", server.base_url,
                          sweep="budget_usd = 3\nconcurrency = 1", arms='["m", "o"]')
        main(["run", path, "--db", str(db), "--headless"])
        first = len(server.requests)
        assert "budget reached" in capsys.readouterr().err
        main(["run", path, "--db", str(db), "--headless"])
        # The unknown-cost calls still count (at the dearest call seen): no call is made.
        assert len(server.requests) == first
    err = capsys.readouterr().err
    assert "budget reached" in err and "unknown cost" in err


def test_negative_tokens_cannot_bypass_a_token_budget(tmp_path, capsys):
    usage = '{"prompt_tokens": -1000000000000, "completion_tokens": 2}'
    with FaultServer([ok(usage=usage)]) as server:
        path = sweep_file(tmp_path / "s.toml", server.base_url, sweep="budget_tokens = 5000\nconcurrency = 1",
                          arms='["m", "o", "l"]', repeats=3)
        main(["run", path, "--db", str(tmp_path / "d.sqlite"), "--headless"])
        # Negative counts are unknown, counted at the request's size: the first row spends it.
        assert len(server.requests) <= 2 * 4
    assert "token budget reached" in capsys.readouterr().err


@pytest.mark.parametrize("cost", ["NaN", "Infinity", "-Infinity"])
def test_nan_or_infinite_cost_never_crashes_a_sweep_nor_shows_inf(tmp_path, capsys, cost):
    usage = f'{{"prompt_tokens": 5, "completion_tokens": 2, "cost": {cost}}}'
    db = tmp_path / "d.sqlite"
    with FaultServer([ok(usage=usage)]) as server:
        assert main(["run", sweep_file(tmp_path / "s.toml", server.base_url), "--db", str(db),
                     "--headless"]) == 0
    err = capsys.readouterr().err
    assert "NOT NULL" not in err and "Traceback" not in err
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT status FROM rows").fetchall() == [("done",)]
    assert main(["report", "--db", str(db)]) == 0
    assert "$inf" not in capsys.readouterr().out


def test_a_reply_failing_validation_is_never_cached_and_a_poisoned_entry_is_dropped(tmp_path,
                                                                                   capsys):
    db = tmp_path / "d.sqlite"
    poison = Raw(chat_body(usage='{"prompt_tokens": ' + str(10**30) + "}"),
                 headers={"content-type": "application/json"})
    with FaultServer([poison]) as server:
        path = sweep_file(tmp_path / "s.toml", server.base_url)
        main(["run", path, "--db", str(db), "--headless"])
    err = capsys.readouterr().err
    assert "Traceback" not in err and "OverflowError" not in err
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM cache").fetchone()[0] == 0
        assert conn.execute("SELECT status, retryable FROM rows").fetchall() == [("failed", 1)]
    # A good run fills the cache; then its entries are poisoned behind its back.
    db2 = tmp_path / "e.sqlite"
    with FaultServer([ok()]) as server:
        path = sweep_file(tmp_path / "t.toml", server.base_url)
        assert main(["run", path, "--db", str(db2), "--headless"]) == 0
        first = len(server.requests)
        with sqlite3.connect(db2) as conn:
            entries = conn.execute("SELECT key, reply_json FROM cache").fetchall()
            assert entries
            for key, text in entries:
                conn.execute("UPDATE cache SET reply_json=? WHERE key=?",
                             [text.replace('"prompt_tokens": 5', '"prompt_tokens": ' + str(10**30)),
                              key])
        assert main(["run", path, "--db", str(db2), "--headless", "--new"]) == 0
        # every poisoned entry was dropped and its call made again
        assert len(server.requests) == 2 * first
    err = capsys.readouterr().err
    assert "Traceback" not in err and "OverflowError" not in err


def test_check_and_the_cache_survive_a_cache_entry_that_is_not_json(tmp_path):
    assert cached_reply_problem({"content": "x", "prompt_tokens": 10**30}) is not None
    assert cached_reply_problem({"content": "x", "cost_usd": float("nan")}) is not None
    assert cached_reply_problem({"content": 5}) is not None
    assert cached_reply_problem({"content": "x", "finish_reason": "stop",
                                 "prompt_tokens": 3}) is None


def test_probe_survives_a_reply_nested_200k_deep(tmp_path, capsys):
    deep = Raw(chat_body(extra=', "x": ' + "[" * 200_000 + "]" * 200_000),
               headers={"content-type": "application/json"})
    with FaultServer([deep]) as server:
        models = tmp_path / "m.toml"
        models.write_text(f'[[models]]\nid = "acme/m"\nprovider = "vllm"\n'
                          f'base_url = "{server.base_url}"\nmax_retries = 0\n')
        code = main(["probe", "acme/m", "--config", str(models)])
    captured = capsys.readouterr()
    assert "RecursionError" not in captured.err + captured.out
    assert "Traceback" not in captured.err
    assert code in (0, 1, 2)


def test_broken_http_is_not_reported_as_a_connect_error():
    async def run():
        def handler(request):
            raise httpx.RemoteProtocolError("illegal status line")
        async with ModelClient(cfg("http://127.0.0.1:9/v1"),
                               transport=httpx.MockTransport(handler)) as client:
            with pytest.raises(InfraError) as info:
                await client.chat(REQ)
        return info.value
    import asyncio
    err = asyncio.run(run())
    assert "RemoteProtocolError" in str(err)

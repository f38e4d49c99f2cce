"""The in-process transport hands the simulated endpoint the client's own body beside its bytes
(``engine.wire.EncodedBody``): the endpoint then skips decoding them, and answers exactly what
decoding them would have given."""

from __future__ import annotations

import copy
import enum
import hashlib
import json
import math

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core.arms import get_arm
from foldscope.core.fold import fold_call
from foldscope.engine.client.chat import ChatRequest
from foldscope.engine.client.model_client import ModelClient
from foldscope.engine.loader import load_scenario
from foldscope.engine.models import resolve_model
from foldscope.engine.sim.endpoint import SimEndpoint
from foldscope.engine.sim.faults import FaultConfig
from foldscope.engine.sim.transport import SimTransport
from foldscope.engine.wire import BODY_EXTENSION, EncodedBody, body_digest, encode_body
from foldscope.engine.wire.fastjson import dumps_json, utf8_json

PATH = "/v1/chat/completions"


class _Colour(enum.IntEnum):
    RED = 1


class _Str(str):
    pass


def _same(a, b) -> bool:
    """Equal with the very types and key order (NaN equal to NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return (len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
                and all(_same(a[k], b[k]) for k in a))
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)



def _odd(values: list) -> st.SearchStrategy:
    # drawn by index: hypothesis keeps a drawn str or int, not a subclass of one
    return st.integers(0, len(values) - 1).map(lambda i: values[i])


_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=6),
                    _odd([_Colour.RED, 2.5]))
_KEY = st.one_of(st.text(max_size=4), _odd([1, True, None, 0.5]))
_VALUE = st.recursive(_SCALAR, lambda kids: st.one_of(
    st.lists(kids, max_size=3), st.lists(kids, max_size=3).map(tuple),
    st.lists(st.tuples(_KEY, kids), max_size=3).map(dict)), max_leaves=10)


_LONG = st.text(st.sampled_from(list('ab "\\\n\x00é中😀\u2028Ё')), min_size=1, max_size=3).map(
    lambda unit: unit * (4100 // len(unit) + 1))
_STRINGS = st.one_of(st.text(max_size=6), _LONG)
_SCALAR_OR_LONG = st.one_of(_SCALAR, _LONG)
_PLAIN_OR_NOT = st.recursive(_SCALAR_OR_LONG, lambda kids: st.one_of(
    st.lists(kids, max_size=3), st.lists(kids, max_size=3).map(tuple),
    st.lists(st.tuples(st.one_of(_KEY, _STRINGS), kids), max_size=3).map(dict)), max_leaves=10)


@settings(max_examples=500)
@given(_PLAIN_OR_NOT, st.booleans())
def test_a_body_goes_beside_its_bytes_exactly_when_they_decode_back_to_it(value, canonical):
    kwargs = {"sort_keys": True, "separators": (",", ":")} if canonical else {}
    try:
        text = json.dumps(value, ensure_ascii=False, **kwargs)
    except (TypeError, ValueError):
        assert utf8_json(value, **kwargs) is None
        return
    parts = utf8_json(value, **kwargs)
    # the parts are the UTF-8 of the text json.dumps writes, whenever the value is plain
    wire = json.dumps(value, ensure_ascii=False)
    assert (parts is not None) == _same(json.loads(wire), value)
    if parts is not None:
        assert b"".join(parts) == text.encode("utf-8")
        encoded = encode_body(value)
        assert encoded.parsed is value
        assert encoded.content == wire.encode("utf-8")
    try:
        canon = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    except TypeError:  # keys of several types do not sort
        with pytest.raises(TypeError):
            body_digest(value)
        return
    assert body_digest(value) == hashlib.sha256(canon.encode()).hexdigest()


@pytest.mark.parametrize("value", [_Str("s"), {_Str("k"): 1}, [1, _Colour.RED], {"a": (1,)},
                                   {1: "a"}, [{"a": [{"b": _Str("x")}]}]])
def test_a_subclass_or_a_tuple_anywhere_is_not_plain(value):
    assert utf8_json(value) is None and encode_body(value).parsed is None
    assert not _same(json.loads(json.dumps(value)), value)
    assert encode_body(value).content == json.dumps(value, ensure_ascii=False).encode()


def test_a_value_json_cannot_encode_is_refused_as_before():
    looped: list = []
    looped.append(looped)
    for value in ({"a": "x\ud800y" * 3000}, {"a": "\udc80"}, {"n": 10 ** 5000}, looped):
        assert utf8_json(value) is None
        with pytest.raises(ValueError):  # UnicodeEncodeError is a ValueError too
            encode_body(value)  # type: ignore[arg-type]


# -- chat bodies ------------------------------------------------------------------------------

_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
_CONTENT = st.one_of(_TEXT, st.none(), st.integers(),
                     st.lists(st.one_of(st.fixed_dictionaries({"type": st.just("text"),
                                                               "text": _TEXT}),
                                        st.integers(), st.fixed_dictionaries({"text": st.none()})),
                              max_size=2))
_MESSAGE = st.one_of(st.fixed_dictionaries({"role": st.sampled_from(["system", "user",
                                                                     "assistant", "developer"]),
                                            "content": _CONTENT}),
                     st.integers(), st.fixed_dictionaries({"role": st.integers()}))
_PROP = st.one_of(st.fixed_dictionaries({"type": st.sampled_from(["string", "array", "integer",
                                                                  "boolean", "object"])},
                                        optional={"maxLength": st.one_of(st.integers(0, 900),
                                                                         st.text(max_size=2)),
                                                  "description": _TEXT}),
                  st.integers())
_FORMAT = st.one_of(
    st.none(), st.integers(),
    st.fixed_dictionaries({"type": st.just("json_object")}),
    st.fixed_dictionaries({"type": st.just("json_schema"), "json_schema": st.fixed_dictionaries(
        {"name": st.just("s"), "schema": st.fixed_dictionaries(
            {"type": st.just("object"),
             "properties": st.dictionaries(st.sampled_from(["summary", "facts", "b", "a", "n"]),
                                           _PROP, max_size=4)},
            optional={"required": st.lists(st.sampled_from(["summary", "facts", "a"]),
                                           max_size=2)})})}))
_MODEL = st.sampled_from(["sim/faithful", "sim/describer", "sim/gister", "sim/inventor",
                          "sim/garbler", "sim/faithful:faulty", "nobody/else", 7])


def _nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


_BODY = st.fixed_dictionaries(
    {"model": _MODEL, "messages": st.one_of(st.lists(_MESSAGE, max_size=3), st.text(max_size=3))},
    optional={"max_tokens": st.one_of(st.integers(-2, 3000), st.booleans(), st.floats(0, 9)),
              "temperature": st.one_of(st.floats(allow_nan=True), st.text(max_size=2)),
              "seed": st.one_of(st.integers(), st.floats(0, 2)),
              "stream": st.one_of(st.booleans(), st.integers(0, 1)),
              "response_format": _FORMAT,
              "reasoning": st.one_of(st.fixed_dictionaries({"enabled": st.booleans()}),
                                     st.integers()),
              "provider": st.one_of(st.fixed_dictionaries(
                  {"order": st.lists(st.sampled_from(["foldscope-sim", "other"]), max_size=2),
                   "allow_fallbacks": st.one_of(st.booleans(), st.integers())}), st.text()),
              "extra": st.sampled_from([_nested(3), _nested(70), {"k": [1, 2.5, None]}])})

_ENDPOINT = SimEndpoint({"sim/faithful:faulty": FaultConfig(
    rate_429=0.15, rate_5xx=0.15, rate_timeout=0.1, rate_malformed=0.2, rate_truncate=0.3,
    rate_nonconforming=0.3, latency_s=2.0)})


def _answers(raw: bytes, headers: dict[str, str], parsed: dict | None):
    resp = _ENDPOINT.respond("POST", PATH, headers, raw, parsed=parsed)
    return resp.status, resp.headers, resp.body, resp.delay_s, resp.stall, resp.stall_s


@settings(max_examples=400)
@given(_BODY, st.integers(0, 3), st.integers(0, 2))
def test_a_parsed_body_is_answered_as_its_bytes_are(body, attempt, row_attempt):
    encoded = encode_body(body)
    assert encoded.parsed is body  # every strategy value is plain JSON
    headers = {"x-retry-count": str(attempt), "x-foldscope-row-attempt": str(row_attempt)}
    before = copy.deepcopy(body)
    assert _answers(encoded.content, headers, body) == _answers(encoded.content, headers, None)
    assert _same(body, before)  # the client's body is read, never changed


@pytest.mark.parametrize("arm_id", ["j", "q", "m", "f", "o"])
def test_fold_bodies_are_answered_as_their_bytes_are(arm_id):
    scenario = load_scenario("tiny")
    arm = get_arm(arm_id)
    chunks = [c.text for c in scenario.chunks]
    carrier = ""
    for i, chunk in enumerate(chunks):
        spec = fold_call(arm, carrier, [chunk], i, len(chunks))
        for model in ("sim/faithful", "sim/describer", "sim/inventor", "sim/garbler"):
            client = ModelClient(resolve_model(model, {}))
            body = client.build_body(ChatRequest(spec.messages, spec.max_tokens,
                                                 spec.response_format))
            encoded = encode_body(body)
            direct = _answers(encoded.content, {}, None)
            assert _answers(encoded.content, {}, encoded.parsed) == direct
        carrier = json.loads(direct[2])["choices"][0]["message"]["content"]


# -- the transport --------------------------------------------------------------------------

def _request(content: bytes, sent: object) -> httpx.Request:
    return httpx.Request("POST", "http://sim.invalid" + PATH, content=content,
                         extensions={BODY_EXTENSION: sent})


_ONE = {"model": "sim/faithful", "messages": [{"role": "user", "content": "the port is 8080"}]}
_TWO = {"model": "sim/describer", "messages": [{"role": "user", "content": "a different text"}]}


async def _reply(transport: SimTransport, request: httpx.Request) -> tuple[int, bytes]:
    resp = await transport.handle_async_request(request)
    return resp.status_code, await resp.aread()


async def test_the_transport_takes_the_parsed_body_only_with_the_bytes_it_encodes():
    seen: list[dict | None] = []
    endpoint = SimEndpoint()
    real = endpoint.respond

    def respond(method, path, headers, body, **kw):
        seen.append(kw.get("parsed"))
        return real(method, path, headers, body, **kw)

    endpoint.respond = respond  # type: ignore[method-assign]
    transport = SimTransport(endpoint, latency_scale=0)
    one, two = encode_body(_ONE), encode_body(_TWO)
    plain = await _reply(transport, httpx.Request("POST", "http://sim.invalid" + PATH,
                                                  content=one.content))
    assert await _reply(transport, _request(one.content, one)) == plain
    # another body's encoding beside these bytes, or something else under the name: the bytes
    assert await _reply(transport, _request(one.content, two)) == plain
    assert await _reply(transport, _request(one.content, {"parsed": _TWO})) == plain
    # equal bytes that are another object still come with their body
    assert await _reply(transport, _request(bytes(bytearray(one.content)), one)) == plain
    assert seen == [None, _ONE, None, None, _ONE]


async def test_the_client_sends_its_body_beside_the_bytes():
    sent: list[object] = []

    class Recording(httpx.AsyncBaseTransport):
        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            sent.append((request.extensions.get(BODY_EXTENSION), await request.aread()))
            return httpx.Response(200, json={"choices": [{"message": {"content": "ok"},
                                                          "finish_reason": "stop"}]})

    client = ModelClient(resolve_model("sim/faithful", {}), transport=Recording())
    request = ChatRequest([{"role": "user", "content": "hello"}], 16)
    await client.chat(request)
    await client.aclose()
    (encoded, raw), = sent
    assert isinstance(encoded, EncodedBody) and encoded.content == raw
    assert encoded.parsed == client.build_body(request)
    assert raw == dumps_json(client.build_body(request)).encode()  # the bytes are as before


def test_a_body_that_does_not_decode_back_to_itself_goes_without_it():
    body = {"model": "sim/faithful", "messages": ({"role": "user", "content": "x"},)}
    encoded = encode_body(body)
    assert encoded.parsed is None
    assert json.loads(encoded.content) == {"model": "sim/faithful",
                                           "messages": [{"role": "user", "content": "x"}]}

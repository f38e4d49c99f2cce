"""The simulated endpoint's body checks: a body's bytes say when its strings need no scan for
lone surrogates."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

_JSON_TEXT = st.text(st.one_of(st.characters(), st.sampled_from(["\ud800", "\udfff", "\\", "u"])),
                     max_size=12)
_JSON_VALUE = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), _JSON_TEXT),
    lambda kids: st.one_of(st.lists(kids, max_size=4),
                           st.dictionaries(_JSON_TEXT, kids, max_size=4)), max_leaves=12)


@settings(max_examples=400)
@given(_JSON_VALUE, st.booleans())
def test_bytes_without_a_surrogate_escape_decode_to_no_lone_surrogate(value, ascii_only):
    from foldscope.engine.sim.body_check import (
        BodyProblem,
        _lone_surrogate,
        decode_body,
        may_hold_surrogate,
    )

    raw = json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
    body = decode_body(raw)
    if isinstance(body, BodyProblem) or may_hold_surrogate(raw):
        return
    assert _lone_surrogate(body, "") is None
    assert _lone_surrogate({"k": body}, "") is None


def test_an_escaped_surrogate_is_found_and_refused():
    from foldscope.engine.sim.body_check import check_chat_body, decode_body, may_hold_surrogate

    raw = json.dumps({"model": "sim/faithful", "messages": [
        {"role": "user", "content": "a\udc80b"}]}).encode()
    assert may_hold_surrogate(raw)
    problem = check_chat_body(decode_body(raw), surrogates=may_hold_surrogate(raw))
    assert problem is not None and problem.param == "messages[0].content"

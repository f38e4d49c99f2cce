"""Shortcuts on a fold's path that must answer exactly what the plain form answers: the heading
prefilter (``core.sections.match_heading``), a body's nesting depth (``engine.sim.body_check``)
and the course writes a fold commits (``engine.store.rows``)."""

from __future__ import annotations

import dataclasses
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core import sections
from foldscope.core.carrier import carried_sections
from foldscope.core.sections import SECTIONS, match_heading
from foldscope.engine.sim import body_check


def _plain_match_heading(line: str):
    m = sections._HEADING_RE.match(line)
    if not m:
        return None
    title = m.group("title").rstrip(":").strip().casefold()
    for section in SECTIONS:
        if title == section.heading.casefold() or title == section.key.replace("_", " "):
            return section
    return None


_HEADING_BITS = st.sampled_from(["#", "##", "###", " ", "  ", "\t", "\u2003", "\x0b", "\x1c",
                                 ":", "Progress", "facts and values", "FAILURES", "open items",
                                 "Decisions and constraints", "x", "\u00a0", "#######"])


@settings(max_examples=1500, deadline=None)
@given(st.lists(_HEADING_BITS, max_size=8).map("".join) | st.text(max_size=30))
def test_the_heading_prefilter_changes_no_answer(line):
    assert match_heading(line) == _plain_match_heading(line)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(_HEADING_BITS, max_size=6).map("".join) | st.text(max_size=20),
                max_size=12).map("\n".join))
def test_carried_sections_as_every_line_matched(text):
    seen = {s.key for s in (_plain_match_heading(line) for line in text.splitlines()) if s}
    assert carried_sections(text) == tuple(s for s in SECTIONS if s.key in seen)


def _plain_depth(value: Any) -> int:
    """The depth without the early stop: deepest dict/list level (0 for a scalar)."""
    if isinstance(value, dict):
        return 1 + max((_plain_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_plain_depth(v) for v in value), default=0)
    return 0


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=3),
                     lambda inner: st.lists(inner, max_size=4)
                     | st.dictionaries(st.text(max_size=2), inner, max_size=4), max_leaves=40)


def _nest(value: Any, levels: int, as_dict: bool) -> Any:
    for _ in range(levels):
        value = {"k": value, "s": "x"} if as_dict else ["x", value, 1]
    return value


@settings(max_examples=500, deadline=None)
@given(_JSON, st.integers(0, 80), st.booleans())
def test_depth_is_the_deepest_level_or_past_the_limit(value, extra, as_dict):
    value = _nest(value, extra, as_dict)
    plain = _plain_depth(value)
    got = body_check._depth(value)
    if plain > body_check.MAX_DEPTH:
        assert got == body_check.MAX_DEPTH + 1
    else:
        assert got == plain
    assert (body_check.decoded_as(value) is value) == (plain <= body_check.MAX_DEPTH)


def test_only_changed_courses_are_written_whatever_their_identity():
    from foldscope.core.forensics import FactHistory
    from foldscope.engine.store.rows import RowRepository

    class _Conn:
        def __init__(self) -> None:
            self.rows: list[tuple] = []

        def executemany(self, sql: str, rows: list[tuple]) -> None:
            assert sql.startswith("INSERT OR REPLACE INTO fact_histories")
            self.rows.extend(rows)

    old = [FactHistory(f"l{i}", f"v{i}", True, i, None, None, None, False, "not_yet")
           for i in range(4)]
    new = [old[0], dataclasses.replace(old[1]),  # same fields, another object: not written
           dataclasses.replace(old[2], final_state="present", planted_fold=0), old[3]]
    conn = _Conn()
    RowRepository._write_histories(None, conn, 7, new, old)  # type: ignore[arg-type]
    assert [r[:2] for r in conn.rows] == [(7, 2)]
    conn = _Conn()
    RowRepository._write_histories(None, conn, 7, new, ())  # type: ignore[arg-type]
    assert [r[:2] for r in conn.rows] == [(7, i) for i in range(4)]

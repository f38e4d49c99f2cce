"""Events read back from the event log as their own types (a discriminated union on ``kind``)."""

from __future__ import annotations

from foldscope.engine.events import (
    EVENT_TYPES,
    FoldCommitted,
    Retry,
    RowFailed,
    SweepStarted,
    event_from_json,
)
from foldscope.engine.launch import prepare_sweep
from foldscope.engine.store import Store


def _samples():
    return [SweepStarted(sweep="s", rows=4, pending=4, mode="blocked", units=4),
            Retry(fault="rate_limited", delay_s=1.5, limit=2, model="sim/faithful"),
            RowFailed(row=3, model="m", arm="j", error="timeout", retryable=True, will_retry=True),
            FoldCommitted(row=1, fold=0, chunks=(0, 1), carrier_chars=10, finish="stop",
                          parse="ok")]


def test_every_event_reads_back_as_itself():
    for event in _samples():
        assert event_from_json(event.as_json()) == event
    assert {t.kind for t in EVENT_TYPES} >= {"retry", "row_failed", "sweep_started"}


def test_an_unknown_kind_or_shape_reads_as_none():
    assert event_from_json({"event": "from_the_future", "t": 1.0}) is None
    assert event_from_json({"event": "retry", "t": 1.0}) is None  # fields missing
    assert event_from_json({}) is None


def test_the_store_hands_back_typed_events(tmp_path, monkeypatch):
    db = tmp_path / "events.sqlite"
    from conftest import definition

    prepared = prepare_sweep(db, definition(models=("sim/faithful",), arms=("j",)), "test")
    with Store(db) as store:
        store.add_events(prepared.sweep_id, _samples()[:3])
        stored = store.events(prepared.sweep_id)
    assert [type(e.event) for e in stored] == [SweepStarted, Retry, RowFailed]
    retry = stored[1].event
    assert isinstance(retry, Retry) and retry.fault == stored[1].fault == "rate_limited"

"""The live view's first poll reads every row as a ``TallyRow`` (what a tally reads, as stored)
instead of decoding each into a ``RowRecord`` (issue 24 item 7): the cells are the same."""

from __future__ import annotations

import dataclasses

from conftest import definition, run_sweep
from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core.row import RowRecord
from foldscope.core.tally import TALLY_FIELDS, FinalCarrier, RowClasses, Tallies, TallyRow
from foldscope.core.validity import REASONS
from foldscope.engine.live import LiveSweep
from foldscope.engine.store import Store


def _stored(row: RowRecord) -> TallyRow:
    """A row as the database holds it: booleans as 0/1 (NULL for an unset verdict)."""
    values = []
    for name in TALLY_FIELDS:
        value = getattr(row, name)
        values.append(int(value) if isinstance(value, bool) else value)
    return TallyRow(*values)


ROWS = st.builds(
    lambda i, cell, status, valid, reason, retryable, recall, cost, n, sim: RowRecord(
        id=i, position=i, scenario=cell[0], model=cell[1], arm=cell[2], repeat=i % 3,
        status=status, valid=valid, validity_reason=reason, retryable=retryable, recall=recall,
        call_retries=n, infra_retries=n // 2, cost_usd=cost, unpriced_calls=n % 2, simulated=sim,
        folds_done=n, parse_failures=n // 3, seq=i),
    st.integers(1, 30), st.sampled_from([("s", "m", "j"), ("s", "m", "q"), ("t", "n", "j")]),
    st.sampled_from(["planned", "running", "done", "failed", "odd"]),
    st.one_of(st.none(), st.booleans()), st.one_of(st.none(), st.sampled_from([*REASONS, "?"])),
    st.booleans(), st.one_of(st.none(), st.floats(0, 1)), st.floats(0, 2), st.integers(0, 7),
    st.booleans())
CLASSES = st.builds(lambda n, f, a, c: RowClasses(n, f, tuple(c), a), st.integers(0, 9),
                    st.integers(0, 3), st.integers(0, 3),
                    st.lists(st.integers(0, 4), min_size=len(RowClasses().counts),
                             max_size=len(RowClasses().counts)))
FINALS = st.one_of(st.none(), st.builds(FinalCarrier, st.integers(0, 5),
                                        st.one_of(st.none(), st.floats(0, 1))))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(ROWS, CLASSES, FINALS), max_size=40))
def test_a_tally_of_stored_rows_is_the_tally_of_their_records(updates):
    records, stored = Tallies(), Tallies()
    for row, classes, final in updates:  # the same row again is a change: out, then in
        records.update(row, classes, final)
        stored.update(_stored(row), classes, final)
        assert _stored(row).verdict == row.verdict
    assert records.cells() == stored.cells() and records.progress() == stored.progress()
    assert len(records) == len(stored) == len({r.id for r, _, _ in updates})


def test_the_first_poll_reads_what_the_rows_hold(db):
    data = definition(models=("sim/faithful", "sim/gister"), arms=("j", "q", "m"), repeats=2)
    sweep_id = run_sweep(db, data)
    with Store(db, readonly=True) as store:
        rows, classes, finals = store.changes(sweep_id, None)
        records = store.rows(sweep_id)
        assert [r.id for r in rows] == [r.id for r in records]
        for row, record in zip(rows, records):
            assert isinstance(row, TallyRow) and row.verdict == record.verdict
            assert all(getattr(row, f) == getattr(record, f) for f in TALLY_FIELDS)
    view = LiveSweep(db, sweep_id).poll()
    tallies = Tallies()
    for record in records:
        tallies.update(record, classes.get(record.id, RowClasses()), finals.get(record.id))
    assert view is not None and view.cells == tuple(tallies.cells())
    assert view.progress == tallies.progress() and view.changed_rows == len(records)


def test_tally_fields_are_record_fields():
    names = {f.name for f in dataclasses.fields(RowRecord)}
    assert set(TALLY_FIELDS) <= names

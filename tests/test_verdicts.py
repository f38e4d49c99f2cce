"""People's verdicts in the store: history and undo, the refusal rule on every path, the old
boolean flag migrated, and the report's ``flag_agreement`` and ``abstention_vs_fabrication``."""

from __future__ import annotations

import sqlite3

import pytest
from conftest import copy_database, definition, run_sweep

from foldscope.core.errors import FlagRefused
from foldscope.engine.report import sweep_report
from foldscope.engine.review import review_values
from foldscope.engine.store import _MIGRATIONS, SCHEMA_VERSION, Store
from foldscope.engine.userconfig import current_author


@pytest.fixture(scope="module")
def inventor_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("inv") / "inv.sqlite"
    sweep = run_sweep(db, definition(scenario="kestrel", models=("sim/inventor", "sim/faithful"),
                                     arms=("j",), repeats=1))
    return db, sweep


@pytest.fixture
def copy_db(inventor_db, tmp_path):
    src, sweep = inventor_db
    return copy_database(src, tmp_path / "copy.sqlite"), sweep


def _by_class(store, sweep, cls):
    return [c for c in store.sweep_checks(sweep) if c.classification == cls]


def test_verdicts_keep_history_undo_restores_the_one_before_and_flagged_follows(copy_db):
    db, sweep = copy_db
    with Store(db) as store:
        check = _by_class(store, sweep, "fabricated")[0]
        store.add_verdict(check.id, "fabricated", "stock port", author="ana")
        store.add_verdict(check.id, "not_fabricated", "  it is in\nthe logs ", author="ben")
        now = store.verdicts(sweep)[check.id]
        assert (now.verdict, now.reason, now.author) == ("not_fabricated", "it is in the logs",
                                                         "ben")
        assert not store.check(check.id).flagged
        assert store.check(check.id).classification == "fabricated"  # never overwritten
        assert store.undo_verdict(check.id)
        assert store.verdicts(sweep)[check.id].verdict == "fabricated"
        assert store.check(check.id).flagged
        assert [v.verdict for v in store.verdict_history(check.id)] == ["fabricated"]
        assert store.undo_verdict(check.id)
        assert check.id not in store.verdicts(sweep) and not store.check(check.id).flagged
        assert not store.undo_verdict(check.id)


def test_the_old_f_toggle_obeys_the_rule_and_withdraws(copy_db):
    db, sweep = copy_db
    with Store(db) as store:
        correct = _by_class(store, sweep, "correct")[0]
        with pytest.raises(FlagRefused, match="correct"):
            store.set_flag(correct.id, True)
        fab = _by_class(store, sweep, "fabricated")[0]
        store.set_flag(fab.id, True, author="ana")
        assert store.verdicts(sweep)[fab.id].author == "ana"
        store.set_flag(fab.id, False)
        assert fab.id not in store.verdicts(sweep)
        assert len(store.verdict_history(fab.id)) == 2


def test_abstentions_are_refused(tmp_path):
    sweep = run_sweep(tmp_path / "g.sqlite", definition(scenario="kestrel", models=("sim/gister",),
                                                        arms=("j",)))
    with Store(tmp_path / "g.sqlite") as store:
        abstained = [c for c in store.sweep_checks(sweep)
                     if c.classification == "honest_abstention"]
        assert abstained, "the gister abstains on facts its gist lost"
        for verdict in ("fabricated", "not_fabricated", "unsure"):
            with pytest.raises(FlagRefused, match="abstained"):
                store.add_verdict(abstained[0].id, verdict, author="ana")
        assert store.verdicts(sweep) == {}


def test_old_flags_become_fabricated_by_an_unknown_author(tmp_path):
    path = tmp_path / "v5.sqlite"
    conn = sqlite3.connect(path)
    for version in range(1, 6):
        conn.executescript(_MIGRATIONS[version])
    conn.execute("INSERT INTO meta VALUES ('schema_version', '5')")
    conn.execute("INSERT INTO sweeps (id, created_at, name, config_digest, config_json) "
                 "VALUES ('s', 0, 'n', 'd', '{}')")
    conn.execute("INSERT INTO rows (id, sweep_id, position, scenario, model, arm, repeat, "
                 "prompt_digest, declared_ceilings_json, output_budget, carry_cap) "
                 "VALUES (1, 's', 0, 'kestrel', 'm', 'j', 0, 'p', '{}', 1, 1)")
    conn.executemany(
        "INSERT INTO checks (row_id, label, expected, found, correct, abstained, unit_dropped, "
        "classification, in_carrier, carrier_state, flagged) "
        "VALUES (1, ?, '1', '2', 0, 0, 0, 'fabricated', 0, 'missing', ?)", [("a", 1), ("b", 0)])
    conn.commit()
    conn.close()
    with Store(path, readonly=True) as old:  # read through a migrated copy, the file untouched
        assert {v.verdict for v in old.verdicts("s").values()} == {"fabricated"}
    with Store(path) as store:
        assert store.schema_version == SCHEMA_VERSION
        (v,) = store.verdicts("s").values()
        assert (v.verdict, v.author, v.reason) == ("fabricated", "unknown", None)
        assert store.check(v.check_id).label == "a"


def test_report_carries_agreement_and_the_failing_row_table(copy_db):
    db, sweep = copy_db
    with Store(db) as store:
        fab = _by_class(store, sweep, "fabricated")
        store.add_verdict(fab[0].id, "fabricated", author="a")
        store.add_verdict(fab[1].id, "not_fabricated", author="a")
        store.add_verdict(fab[2].id, "unsure", author="a")
        report = sweep_report(store, sweep)
    agreement = report["flag_agreement"]
    assert (agreement["reviewed"], agreement["unsure"], agreement["n"]) == (3, 1, 2)
    assert agreement["observed"] == 0.5 and agreement["kappa"] == 0.0
    assert {(r["automatic"], r["human"], r["n"]) for r in agreement["table"]} == {
        ("fabricated", "fabricated", 1), ("fabricated", "not_fabricated", 1)}
    table = {r["model"]: r for r in report["abstention_vs_fabrication"]}
    inventor = table["sim/inventor"]
    assert inventor["failing_rows"] == inventor["fabricate_never_abstain"] == 1
    assert table["sim/faithful"]["failing_rows"] == 0
    assert set(inventor) >= {"scenario", "arm", "valid_rows", "abstain_somewhere", "neither",
                             "stopped_early", "items_reached", "items_asked"}


def test_review_values_trace_what_they_list(inventor_db):
    db, sweep = inventor_db
    with Store(db, readonly=True) as store:
        values = review_values(store, sweep)
    assert values and {v.answer_class for v in values} <= {"fabricated", "carried_corruption"}
    assert all(v.model == "sim/inventor" and v.final_fold == 5 for v in values)
    assert any(v.signatures for v in values)
    assert all(v.provenance is not None for v in values)


def test_author_from_settings_else_user(user_settings, monkeypatch):
    monkeypatch.setenv("USER", "rosa")
    assert current_author() == "rosa"
    user_settings.parent.mkdir(parents=True, exist_ok=True)
    user_settings.write_text('author = "Dr  Ana"\n')
    assert current_author() == "Dr Ana"
    user_settings.write_text("author = [")
    assert current_author() == "rosa"
    monkeypatch.delenv("USER")
    assert current_author() == "unknown"


def test_the_writer_applies_in_order_answers_each_write_and_never_undoes_what_was_not_stored(
        copy_db):
    from foldscope.engine.writes import SetFlag, SetVerdict, StoreWriter, UndoVerdict, WriteStatus

    db, sweep = copy_db
    with Store(db, readonly=True) as store:
        a, b = (c.id for c in _by_class(store, sweep, "fabricated")[:2])
        correct = _by_class(store, sweep, "correct")[0].id
    outcomes = []
    fail = {"on": False}

    def open_store(path):
        store = Store(path)
        real = store.add_verdict

        def add_verdict(*args, **kwargs):
            if fail["on"]:
                raise sqlite3.OperationalError("disk I/O error")
            return real(*args, **kwargs)

        store.add_verdict = add_verdict
        return store

    writer = StoreWriter(db, lambda o, _: outcomes.append(o), backoff_s=0.0, retries=2,
                         open_store=open_store)
    t1 = writer.submit(SetVerdict(a, "fabricated", None, "ana"))
    writer.submit(UndoVerdict(a, t1))
    writer.submit(SetVerdict(correct, "fabricated", None, "ana"))  # the rule refuses it
    writer.submit(SetFlag(b, True, "ana"))
    writer.stop()
    writer.run()
    assert [o.status for o in outcomes] == [WriteStatus.SAVED, WriteStatus.SAVED,
                                            WriteStatus.REFUSED, WriteStatus.SAVED]
    assert outcomes[0].stored.verdict == "fabricated" and outcomes[1].stored is None
    assert outcomes[3].stored.verdict == "fabricated" and outcomes[3].known
    # A write that fails after its retries comes back failed, and its undo is refused.
    outcomes.clear()
    fail["on"] = True
    writer = StoreWriter(db, lambda o, _: outcomes.append(o), backoff_s=0.0, retries=2,
                         open_store=open_store)
    t2 = writer.submit(SetVerdict(a, "unsure", None, "ana"))
    writer.submit(UndoVerdict(a, t2))
    writer.stop()
    writer.run()
    assert [(o.status, o.attempts) for o in outcomes] == [(WriteStatus.FAILED, 3),
                                                          (WriteStatus.REFUSED, 1)]
    assert "disk I/O error" in outcomes[0].message and outcomes[0].stored is None
    with Store(db, readonly=True) as store:
        assert a not in store.verdicts(sweep) and store.verdicts(sweep)[b].verdict == "fabricated"

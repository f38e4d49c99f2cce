"""Reply bodies: stored once (content-addressed, shared by folds, answers and the cache), cut at
max_reply_bytes with the cut recorded, and databases from before schema 7 still read."""

from __future__ import annotations

import json
import sqlite3

from conftest import definition, run_sweep

from foldscope.engine.store import _MIGRATIONS, Store, text_digest


def _bodies(store: Store, sweep_id: str) -> list[str]:
    """Every reply body a sweep's reader sees: fold replies and recall answers."""
    out = []
    for row in store.rows(sweep_id):
        out += [f.reply for f in store.folds(row.id)]
        answer = store.row(row.id).answer
        if answer is not None:
            out.append(answer)
    return out


def test_each_reply_body_is_stored_once(db):
    data = definition(models=("sim/faithful",), arms=("j", "m"), cache=True)
    first = run_sweep(db, data)
    second = run_sweep(db, data)  # replays every call from the cache
    with Store(db, readonly=True) as store:
        bodies = _bodies(store, first)
        assert bodies and all(bodies) and _bodies(store, second) == bodies
        blobs = dict(store.db.execute("SELECT digest, body FROM blobs").fetchall())
        # Once: one blob per distinct body, and no body in any other column.
        assert set(blobs) == {text_digest(b) for b in bodies}
        assert {r[0] for r in store.db.execute("SELECT reply FROM folds")} == {""}
        assert {r[0] for r in store.db.execute("SELECT answer FROM rows")} == {""}
        cached = [json.loads(r[0]) for r in store.db.execute("SELECT reply_json FROM cache")]
        assert cached and all("content" not in c and c["content_digest"] in blobs for c in cached)
        stored = store.db.execute("SELECT SUM(LENGTH(CAST(body AS BLOB))) FROM blobs").fetchone()[0]
        assert stored == sum(len(b.encode()) for b in set(bodies))


def test_replies_over_the_cap_are_cut_and_marked(db):
    model = {"id": "sim/faithful", "max_reply_bytes": 60}
    sweep_id = run_sweep(db, definition(models=(model,), arms=("m",)))
    with Store(db, readonly=True) as store:
        row = store.rows(sweep_id)[0]
        folds = store.folds(row.id)
        assert folds and all(f.reply_truncated and len(f.reply.encode()) <= 60 for f in folds)
        answered = store.row(row.id)
        assert answered.answer_truncated and len(answered.answer.encode()) <= 60
    # The default cap (1 MB) leaves these replies whole.
    whole = run_sweep(db, definition(models=("sim/faithful",), arms=("m",)))
    with Store(db, readonly=True) as store:
        row = store.rows(whole)[0]
        assert not any(f.reply_truncated for f in store.folds(row.id))
        assert not store.row(row.id).answer_truncated


def _version_6(path) -> None:
    conn = sqlite3.connect(path)
    for version in range(1, 7):
        conn.executescript(_MIGRATIONS[version])
    conn.execute("INSERT INTO meta VALUES ('schema_version', '6')")
    conn.execute("INSERT INTO sweeps (id, created_at, name, config_digest, config_json) "
                 "VALUES ('old', 0, 'old', 'd', '{}')")
    conn.execute("INSERT INTO rows (id, sweep_id, position, scenario, model, arm, repeat, status, "
                 "prompt_digest, declared_ceilings_json, output_budget, carry_cap, answer) "
                 "VALUES (1, 'old', 0, 'smoke', 'sim/faithful', 'j', 0, 'done', 'p', '{}', 1, 1, "
                 "'the answer')")
    conn.execute("INSERT INTO folds (row_id, fold_index, first_chunk, last_chunk, reply, carrier, "
                 "carrier_chars, carrier_tokens_est, clipped_chars, headings_carried, "
                 "parse_status, finish_reason, est_prompt_tokens, latency_s, created_at) "
                 "VALUES (1, 0, 0, 0, 'a fold reply', 'a carrier', 9, 2, 0, 0, 'ok', 'stop', 1, "
                 "0, 0)")
    conn.execute("INSERT INTO cache (key, model, reply_json, created_at) VALUES ('k', 'm', ?, 0)",
                 [json.dumps({"content": "a fold reply", "finish_reason": "stop"})])
    conn.commit()
    conn.close()


def test_a_version_6_database_reads_as_it_is_and_migrates_its_bodies(tmp_path):
    path = tmp_path / "v6.sqlite"
    _version_6(path)
    with Store(path, readonly=True) as reader:  # read through a migrated copy, the file untouched
        assert reader.folds(1)[0].reply == "a fold reply"
        assert not reader.folds(1)[0].reply_truncated
        assert reader.row(1).answer == "the answer"
    with Store(path) as store:  # migrated to 7: the same text, now stored once
        assert store.folds(1)[0].reply == "a fold reply" and store.row(1).answer == "the answer"
        assert store.cached_reply("k")["content"] == "a fold reply"
        assert store.db.execute("SELECT COUNT(*) FROM blobs").fetchone()[0] == 2
        assert store.db.execute("SELECT reply FROM folds").fetchone()[0] == ""

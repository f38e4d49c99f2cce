"""The database schema: its version, its migrations and the content address of bodies."""

from __future__ import annotations

import hashlib
import re
from typing import Any

SCHEMA_VERSION = 11
"""The schema this foldscope writes. Older databases are migrated (one opened read-only is read
through a migrated copy, ``connection.migrated_copy``); newer ones are refused."""

# How a check stored before schema 4 reads in today's answer classes (``core.answers``).
_LEGACY_CARRIER_STATE = "CASE WHEN in_carrier THEN 'present' ELSE 'missing' END"
_LEGACY_DETAIL = ("CASE WHEN classification = 'correct' OR NOT in_carrier THEN NULL "
                  "WHEN found IS NULL OR trim(found) = '' THEN 'nothing' "
                  "WHEN classification = 'abstained' THEN 'abstained' ELSE 'other_value' END")
_LEGACY_CLASS = ("CASE WHEN classification = 'correct' THEN 'correct' "
                 "WHEN in_carrier THEN 'read_failure' "
                 "WHEN classification = 'abstained' THEN 'honest_abstention' "
                 "ELSE 'fabricated' END")

_MIGRATIONS: dict[int, str] = {
    1: """
    CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS sweeps (
        id TEXT PRIMARY KEY,
        created_at REAL NOT NULL,
        name TEXT NOT NULL,
        config_digest TEXT NOT NULL,
        config_json TEXT NOT NULL,
        pins_json TEXT NOT NULL DEFAULT '{}',
        status TEXT NOT NULL DEFAULT 'planned',
        stop_reason TEXT,
        simulated INTEGER NOT NULL DEFAULT 0,
        updated_at REAL
    );
    CREATE INDEX IF NOT EXISTS sweeps_digest ON sweeps(config_digest);
    CREATE TABLE IF NOT EXISTS rows (
        id INTEGER PRIMARY KEY,
        sweep_id TEXT NOT NULL REFERENCES sweeps(id),
        position INTEGER NOT NULL,
        scenario TEXT NOT NULL,
        model TEXT NOT NULL,
        arm TEXT NOT NULL,
        repeat INTEGER NOT NULL,
        status TEXT NOT NULL DEFAULT 'planned',
        attempt INTEGER NOT NULL DEFAULT 0,
        infra_retries INTEGER NOT NULL DEFAULT 0,
        call_retries INTEGER NOT NULL DEFAULT 0,
        prompt_digest TEXT NOT NULL,
        declared_ceilings_json TEXT NOT NULL,
        output_budget INTEGER NOT NULL,
        carry_cap INTEGER NOT NULL,
        next_chunk INTEGER NOT NULL DEFAULT 0,
        folds_done INTEGER NOT NULL DEFAULT 0,
        catch_up INTEGER NOT NULL DEFAULT 0,
        parse_failures INTEGER NOT NULL DEFAULT 0,
        length_stops INTEGER NOT NULL DEFAULT 0,
        infra_error TEXT,
        answer TEXT,
        simulated INTEGER NOT NULL DEFAULT 0,
        recall REAL,
        correct INTEGER,
        graded INTEGER,
        valid INTEGER,
        validity_reason TEXT,
        retryable INTEGER NOT NULL DEFAULT 0,
        prompt_tokens INTEGER NOT NULL DEFAULT 0,
        completion_tokens INTEGER NOT NULL DEFAULT 0,
        est_prompt_tokens INTEGER NOT NULL DEFAULT 0,
        cost_usd REAL NOT NULL DEFAULT 0,
        wall_s REAL NOT NULL DEFAULT 0,
        started_at REAL,
        finished_at REAL,
        UNIQUE (sweep_id, scenario, model, arm, repeat)
    );
    CREATE INDEX IF NOT EXISTS rows_sweep ON rows(sweep_id, position);
    CREATE TABLE IF NOT EXISTS folds (
        id INTEGER PRIMARY KEY,
        row_id INTEGER NOT NULL REFERENCES rows(id),
        fold_index INTEGER NOT NULL,
        first_chunk INTEGER NOT NULL,
        last_chunk INTEGER NOT NULL,
        catch_up INTEGER NOT NULL DEFAULT 0,
        reply TEXT NOT NULL,
        carrier TEXT NOT NULL,
        carrier_chars INTEGER NOT NULL,
        carrier_tokens_est INTEGER NOT NULL,
        clipped_chars INTEGER NOT NULL,
        headings_carried INTEGER NOT NULL,
        fill_fraction REAL,
        parse_status TEXT NOT NULL,
        recovery TEXT NOT NULL DEFAULT '',
        finish_reason TEXT NOT NULL,
        prompt_tokens INTEGER,
        completion_tokens INTEGER,
        est_prompt_tokens INTEGER NOT NULL,
        latency_s REAL NOT NULL,
        cost_usd REAL,
        attempts INTEGER NOT NULL DEFAULT 1,
        simulated INTEGER NOT NULL DEFAULT 0,
        fact_status_json TEXT NOT NULL DEFAULT '{}',
        created_at REAL NOT NULL,
        UNIQUE (row_id, fold_index)
    );
    CREATE TABLE IF NOT EXISTS checks (
        id INTEGER PRIMARY KEY,
        row_id INTEGER NOT NULL REFERENCES rows(id),
        label TEXT NOT NULL,
        expected TEXT NOT NULL,
        found TEXT,
        correct INTEGER NOT NULL,
        abstained INTEGER NOT NULL,
        unit_dropped INTEGER NOT NULL,
        classification TEXT NOT NULL,
        in_carrier INTEGER NOT NULL,
        flagged INTEGER NOT NULL DEFAULT 0,
        UNIQUE (row_id, label)
    );
    """,
    # 2: the response cache, and which folds and rows were answered from it.
    2: """
    CREATE TABLE IF NOT EXISTS cache (
        key TEXT PRIMARY KEY,
        model TEXT NOT NULL,
        reply_json TEXT NOT NULL,
        created_at REAL NOT NULL
    );
    ALTER TABLE folds ADD COLUMN cached INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE folds ADD COLUMN content_class TEXT;
    ALTER TABLE rows ADD COLUMN cached_calls INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE sweeps ADD COLUMN runner_pid INTEGER;
    """,
    # 3: a change sequence on rows and folds, so readers fetch only what changed since their
    # last read (a write sets the row's or fold's seq above every seq before it).
    3: """
    ALTER TABLE rows ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE folds ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
    UPDATE rows SET seq = id;
    UPDATE folds SET seq = id;
    CREATE INDEX IF NOT EXISTS rows_seq ON rows(seq);
    CREATE INDEX IF NOT EXISTS rows_sweep_seq ON rows(sweep_id, seq);
    CREATE INDEX IF NOT EXISTS folds_seq ON folds(seq);
    CREATE INDEX IF NOT EXISTS folds_row ON folds(row_id, fold_index);
    """,
    # 4: answer classes judged by the final carrier (core.answers): each check records the
    # carrier's state of the fact and the read-failure sub-kind; classes written before are
    # renamed by what the check recorded of the carrier (whether it held the value). A mutated
    # carrier was not recorded then, so no old check becomes carried_corruption.
    4: f"""
    ALTER TABLE checks ADD COLUMN carrier_state TEXT;
    ALTER TABLE checks ADD COLUMN class_detail TEXT;
    UPDATE checks SET carrier_state = {_LEGACY_CARRIER_STATE}, class_detail = {_LEGACY_DETAIL},
        classification = {_LEGACY_CLASS};
    """,
    # 5: session audits (``foldscope audit --db``): one row per audited session, the audit
    # document as JSON (values already redacted when ``redacted`` is set; ``source`` then NULL).
    5: """
    CREATE TABLE IF NOT EXISTS audits (
        id INTEGER PRIMARY KEY,
        created_at REAL NOT NULL,
        source TEXT,
        session TEXT,
        format TEXT NOT NULL,
        redacted INTEGER NOT NULL,
        compactions INTEGER NOT NULL,
        lost_and_needed INTEGER NOT NULL,
        audit_json TEXT NOT NULL
    );
    """,
    # 6: a claim names its runner by pid and start token (engine.procinfo), so a pid the kernel
    # hands to another process after the runner died does not lock the sweep.
    6: """
    ALTER TABLE sweeps ADD COLUMN runner_started TEXT;
    """,
    # 7: every reply body is stored once, in a content-addressed table (sha256 of its UTF-8),
    # that a fold's reply, a row's answer and a cache entry refer to by digest; the bodies
    # already stored move there (the old columns keep '' so their NOT NULL and "answered"
    # meanings hold). Replies cut at max_reply_bytes are marked.
    7: """
    CREATE TABLE IF NOT EXISTS blobs (digest TEXT PRIMARY KEY, body TEXT NOT NULL) WITHOUT ROWID;
    ALTER TABLE folds ADD COLUMN reply_digest TEXT;
    ALTER TABLE folds ADD COLUMN reply_truncated INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE rows ADD COLUMN answer_digest TEXT;
    ALTER TABLE rows ADD COLUMN answer_truncated INTEGER NOT NULL DEFAULT 0;
    INSERT OR IGNORE INTO blobs SELECT foldscope_sha256(reply), reply FROM folds;
    UPDATE folds SET reply_digest = foldscope_sha256(reply), reply = '';
    INSERT OR IGNORE INTO blobs SELECT foldscope_sha256(answer), answer FROM rows
        WHERE answer IS NOT NULL;
    UPDATE rows SET answer_digest = foldscope_sha256(answer), answer = '' WHERE answer IS NOT NULL;
    INSERT OR IGNORE INTO blobs SELECT foldscope_sha256(json_extract(reply_json, '$.content')),
        json_extract(reply_json, '$.content') FROM cache
        WHERE json_type(reply_json, '$.content') = 'text';
    UPDATE cache SET reply_json = json_set(json_remove(reply_json, '$.content'),
        '$.content_digest', foldscope_sha256(json_extract(reply_json, '$.content')))
        WHERE json_type(reply_json, '$.content') = 'text';
    """,
    # 8: the fact timeline. Folds record each mutated fact's altered text and named edit (their
    # states now include not_yet), and each row × planted fact its course (fold planted, first
    # carried, lost, returned, final state), kept current as folds commit. Folds written before
    # are read with not_yet derived from their chunks; `foldscope reindex` recomputes them.
    8: """
    ALTER TABLE folds ADD COLUMN fact_mutations_json TEXT NOT NULL DEFAULT '{}';
    CREATE TABLE IF NOT EXISTS fact_histories (
        row_id INTEGER NOT NULL REFERENCES rows(id),
        position INTEGER NOT NULL,
        label TEXT NOT NULL,
        value TEXT NOT NULL,
        graded INTEGER NOT NULL,
        chunk INTEGER NOT NULL,
        planted_fold INTEGER,
        first_carried_fold INTEGER,
        lost_fold INTEGER,
        returned INTEGER NOT NULL,
        final_state TEXT NOT NULL,
        final_altered TEXT,
        final_rule TEXT,
        PRIMARY KEY (row_id, label)
    );
    """,
    # 9: people's verdicts on answer values (core.fabrication): a history per check, the latest
    # entry is its verdict ('cleared' withdraws one), beside the automatic class, never over
    # it. checks.flagged stays as the count the grid reads (latest verdict is 'fabricated').
    # Flags set before verdicts existed become 'fabricated' by an unknown author.
    9: """
    CREATE TABLE IF NOT EXISTS verdicts (
        id INTEGER PRIMARY KEY,
        check_id INTEGER NOT NULL REFERENCES checks(id) ON DELETE CASCADE,
        verdict TEXT NOT NULL,
        reason TEXT,
        author TEXT NOT NULL,
        created_at REAL NOT NULL
    );
    CREATE INDEX IF NOT EXISTS verdicts_check ON verdicts(check_id, id);
    INSERT INTO verdicts (check_id, verdict, reason, author, created_at)
        SELECT id, 'fabricated', NULL, 'unknown', CAST(strftime('%s', 'now') AS REAL)
        FROM checks WHERE flagged
    """,
    # 10: what a watcher in another process needs of a live run. The runner's event log (the
    # kinds ``engine.events.PERSISTED_KINDS`` lists, capped per sweep), the runner's own status
    # (its limiter per endpoint, written at most about once a second), and the control requests
    # (pause, resume, cancel) the runner polls between calls.
    10: """
    CREATE TABLE IF NOT EXISTS events (
        id INTEGER PRIMARY KEY,
        sweep_id TEXT NOT NULL,
        t REAL NOT NULL,
        kind TEXT NOT NULL,
        model TEXT,
        summary TEXT NOT NULL,
        data_json TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS events_sweep ON events(sweep_id, id);
    CREATE TABLE IF NOT EXISTS runner_status (
        sweep_id TEXT PRIMARY KEY,
        pid INTEGER NOT NULL,
        started_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        finished_at REAL,
        folds_at_start INTEGER NOT NULL,
        finished_at_start INTEGER NOT NULL,
        paused INTEGER NOT NULL DEFAULT 0,
        endpoints_json TEXT NOT NULL DEFAULT '[]'
    );
    CREATE TABLE IF NOT EXISTS sweep_control (
        sweep_id TEXT PRIMARY KEY,
        request TEXT NOT NULL,
        reason TEXT NOT NULL,
        requested_at REAL NOT NULL
    );
    """,
    # 11: the recall answer's finish reason (a cut answer "stopped early"; one that ended by
    # itself did not), and the calls whose cost the provider did not report (a row's cost is
    # then unknown, not $0).
    11: """
    ALTER TABLE rows ADD COLUMN answer_finish TEXT;
    ALTER TABLE rows ADD COLUMN unpriced_calls INTEGER NOT NULL DEFAULT 0;
    """,
}

_ADD_COLUMN = re.compile(r"\s*ALTER\s+TABLE\s+(?P<table>\w+)\s+ADD\s+COLUMN\s+(?P<column>\w+)",
                         re.IGNORECASE)
"""A migration statement that adds a column (skipped when the column is there already)."""


def parse_schema_version(value: Any, newest: int | None = SCHEMA_VERSION
                         ) -> tuple[int | None, str | None]:
    """A stated schema version as a number, or why it is not one (text, huge, negative, or
    above ``newest`` when one is given).

    Returns:
        ``(version, None)`` or ``(None, why)``.
    """
    text = (str(value).strip() if isinstance(value, str | int) and not isinstance(value, bool)
            else None)
    if text is None or not text.isdigit() or len(text) > 6:
        return None, f"schema_version {str(value)[:20]!r} is not a version number"
    version = int(text)
    if version < 1 or (newest is not None and version > newest):
        return None, (f"schema_version {version} is outside 1..{newest or '…'} "
                      "(newer than this foldscope, or not a foldscope version)")
    return version, None


def text_digest(text: str) -> str:
    """The content address of a stored body: the sha256 hex digest of its UTF-8."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _sha256_sql(text: str | None) -> str | None:
    # The migration's SQL function: NULL stays NULL.
    return None if text is None else text_digest(text)


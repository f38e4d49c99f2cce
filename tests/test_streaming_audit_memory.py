"""The streaming audit's long-lived records: what it keeps per lost value costs the garbage
collector nothing, and the records it hands out are the same types as ever."""

from __future__ import annotations

import gc
from pathlib import Path

from foldscope.core.audit import (
    CompactionAudit,
    IdentifierState,
    LostAndNeeded,
    Reappeared,
    SessionAuditor,
)
from foldscope.core.forensics import TimelineState
from foldscope.engine.audit_readers import stream_session
from foldscope.engine.audit_sample import write_sample_session


def test_values_waiting_to_be_used_again_are_not_followed_by_the_collector(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write_sample_session(path, 1.0, compactions=4)
    uses: list[tuple[int, LostAndNeeded]] = []
    landed: list[CompactionAudit] = []
    auditor = SessionAuditor(on_use=lambda i, n: uses.append((i, n)), on_compaction=landed.append)
    auditor.feed_all(stream_session(path).items)
    gc.collect()
    waiting = [s for s in auditor._open_state if s is not None]
    assert waiting, "the generated session leaves lost values waiting"
    assert not any(gc.is_tracked(s) for s in waiting)
    assert not any(gc.is_tracked(t) for t in auditor._pending.values())
    audits = auditor.audits()
    assert len(audits) == len(landed) == 4
    records = [i for a in audits for i in a.identifiers]
    assert records and all(type(i) is IdentifierState and type(i.state) is TimelineState
                           for i in records)
    lost = [n for a in audits for n in a.lost_and_needed]
    back = [r for a in audits for r in a.reappeared]
    assert lost and back and uses
    assert all(type(n) is LostAndNeeded and type(n.state) is TimelineState for n in lost)
    assert all(type(r) is Reappeared and type(r.state) is TimelineState for r in back)
    assert all(type(n.state) is TimelineState for _i, n in uses)
    assert {(i, n) for i, n in uses} <= {(a.index, n) for a in audits for n in a.lost_and_needed}

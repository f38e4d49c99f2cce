"""What `foldscope audit` tracks on real-shaped sessions (session 6): the rules that keep test
fixtures, list numbering, platform hosts, module paths, slices and templates out of the task's
values, and the channels of a person's shell command and of Codex's carried instructions.

Every text here is written for the test in the shape seen in real sessions (none is copied)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core.identifiers import find_identifiers, tracked_kinds


def _tracked(text: str) -> set[tuple[str, str]]:
    tracked = tracked_kinds() - {"number"}
    return {(i.kind, i.value) for i in find_identifiers(text) if i.kind in tracked}


_SEGMENT = st.from_regex(r"[a-z][a-z0-9_]{1,10}", fullmatch=True)

# --- kinds ------------------------------------------------------------------------------------

_NOISE = {
    "a line range of a GitHub link": "see the loader (L19-24) and its test (L120-L131)",
    "a list's numbering": "Fix #6 (2740011) first, then #3 — #2 is a duplicate of #5.",
    "a task list's own ids": "Task #4 created successfully: wire the parser\nTask #12 created",
    "git's own refs": "From the remote\n * branch  main -> FETCH_HEAD\n ORIG_HEAD kept",
    "a Go import": 'import (\n\t"ledgerly.dev/cli/cmd/ledger/store"\n\t"github.com/spf13/cobra"\n)',
    "go test output": "ok  \tledgerly.dev/cli/cmd/ledger\t3.114s\n?   \tledgerly.dev/cli/x\t[no test files]",
    "a slice": "jq '.[] | .body[0:80]' and .title[0:40]",
    "a minute past 59": "at 7:85 it was done",
    "a path template in angle brackets": "<transcript_dir>/<sessionID>/subagents/agent-<id>.jsonl",
}


@pytest.mark.parametrize("name", sorted(_NOISE))
def test_code_and_log_noise_seen_in_session_6_is_no_task_value(name: str) -> None:
    assert not _tracked(_NOISE[name]), name


def test_what_those_rules_leave_people_can_lose() -> None:
    found = _tracked(
        "PR #3 closes #4; see #172 and issue #1263, OPS-12 and ENT-96\n"
        "ls /srv/ledger/designs/*.pen\n"
        "https://github.com/acme/ledger/pull/112 at 09:45 UTC\n"
        "deploy to ledgerly.app; results in /data/runs/2026-07-06T10-29-36-153Z/index.jsonl")
    for want in [("ticket", "#3"), ("ticket", "#4"), ("ticket", "#172"), ("ticket", "#1263"),
                 ("ticket", "OPS-12"), ("ticket", "ENT-96"), ("path", "/srv/ledger/designs"),
                 ("url", "https://github.com/acme/ledger/pull/112"), ("time", "09:45 UTC"),
                 ("host", "ledgerly.app"),
                 ("path", "/data/runs/2026-07-06T10-29-36-153Z/index.jsonl")]:
        assert want in found, want


@settings(max_examples=60, deadline=None)
@given(st.lists(_SEGMENT, min_size=1, max_size=5), _SEGMENT,
       st.sampled_from(["*.pen", "**/*.ts", "app-*.log", "*", "**"]))
def test_a_glob_leaves_the_directory_in_front_of_it_a_path(dirs, name, tail):
    directory = "/" + "/".join(dirs)
    found = find_identifiers(f"ls {directory}/{tail} && cat {directory}/{name}.md")
    kinds = [(i.kind, i.value) for i in found]
    assert ("path", directory) in kinds
    assert ("path", f"{directory}/{name}.md") in kinds
    assert not any(i.kind in tracked_kinds() and "*" in i.value for i in found)


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 9), st.sampled_from(["fix", "duplicate of", "- ", "item", "Task", "task", "|", "see"]))
def test_a_one_digit_number_sign_numbers_a_list(n, before):
    assert not {f for f in _tracked(f"{before} #{n} now") if f[0] == "ticket"}


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 9), st.sampled_from(["PR", "pr", "issue", "Issue", "closes", "Fixes", "ticket", "bug"]))
def test_a_one_digit_pr_or_issue_named_as_one_is_a_ticket(n, word):
    assert ("ticket", f"#{n}") in _tracked(f"{word} #{n} is merged")


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 9999), st.integers(1, 9999), st.booleans())
def test_a_line_range_is_no_ticket(a, b, second_l):
    text = f"see L{a}-{'L' if second_l else ''}{b} of the file"
    assert not {f for f in _tracked(text) if f[0] == "ticket"}


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 29), st.integers(0, 99))
def test_a_time_has_real_minutes_and_a_slice_is_none(hour, minute):
    clock = f"{hour}:{minute:02d}"
    valid = hour <= 24 and minute <= 59
    assert (("time", clock) in _tracked(f"the job ran at {clock} today")) == valid
    assert not {f for f in _tracked(f"x = body[{clock}]") if f[0] == "time"}

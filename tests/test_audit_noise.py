"""What `foldscope audit` tracks on real-shaped sessions (session 6): the rules that keep test
fixtures, list numbering, platform hosts, module paths, slices and templates out of the task's
values, and the channels of a person's shell command and of Codex's carried instructions.

Every text here is written for the test in the shape seen in real sessions (none is copied)."""

from __future__ import annotations

import hashlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core.audit import Compaction, Entry, Session, audit_session
from foldscope.core.identifiers import find_identifiers, tracked_kinds
from foldscope.core.signatures import signature_hits
from foldscope.engine.audit_readers import read_claude_code, read_sessions


def _tracked(text: str) -> set[tuple[str, str]]:
    tracked = tracked_kinds() - {"number"}
    return {(i.kind, i.value) for i in find_identifiers(text) if i.kind in tracked}


def _audited(*entries: tuple[str, str]) -> set[tuple[str, str]]:
    """The identifiers the audit tracks for one compaction after these entries."""
    items: list[Entry | Compaction] = [Entry(n, ch, text) for n, (ch, text) in enumerate(entries, 1)]
    items.append(Compaction(len(items) + 1, "we worked on it"))
    [audit] = audit_session(Session(tuple(items), "jsonl"))
    return {(i.kind, i.value) for i in audit.identifiers}


_LABEL = st.from_regex(r"[a-z][a-z0-9]{1,10}", fullmatch=True)
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
    "a path after a ${DIR}": 'OUT="${run_root}/${name}/metadata.json"',
    "a zone offset": "created_at: 2026-01-27T16:32:05.141144+01:00 and 16:32:05+01:00",
    "a shebang": "#!/usr/bin/env python3\nprint(1)\n#! /bin/bash",
    "another program's --name": "workmux add --name research-on-run-complete --base main",
}


@pytest.mark.parametrize("name", sorted(_NOISE))
def test_code_and_log_noise_seen_in_session_6_is_no_task_value(name: str) -> None:
    assert not _tracked(_NOISE[name]), name


def test_what_those_rules_leave_people_can_lose() -> None:
    found = _tracked(
        "PR #3 closes #4; see #172 and issue #1263, OPS-12 and ENT-96\n"
        "ls /srv/ledger/designs/*.pen\n"
        "https://github.com/acme/ledger/pull/112 at 09:45 UTC\n"
        "deploy to ledgerly.app; results in /data/runs/2026-07-06T10-29-36-153Z/index.jsonl\n"
        "docker run -d --name ledger-db postgres:16; podman run --name=cache-1 redis:7")
    for want in [("ticket", "#3"), ("ticket", "#4"), ("ticket", "#172"), ("ticket", "#1263"),
                 ("ticket", "OPS-12"), ("ticket", "ENT-96"), ("path", "/srv/ledger/designs"),
                 ("url", "https://github.com/acme/ledger/pull/112"), ("time", "09:45 UTC"),
                 ("host", "ledgerly.app"),
                 ("path", "/data/runs/2026-07-06T10-29-36-153Z/index.jsonl"),
                 ("container", "ledger-db"), ("container", "cache-1")]:
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


# --- placeholders (core/data/signatures.toml: track = false) -----------------------------


@settings(max_examples=60, deadline=None)
@given(st.lists(_LABEL, min_size=1, max_size=3),
       st.sampled_from(["example.com", "example.org", "example.net", "test", "invalid", "example"]),
       _LABEL)
def test_values_under_a_reserved_domain_are_not_tracked(labels, reserved, user):
    host = ".".join([*labels, reserved])
    text = f"curl https://{host}/v1/items and mail {user}@{host}; ping {host}"
    assert not _audited(("assistant", text), ("tool_call", text))


@settings(max_examples=60, deadline=None)
@given(st.lists(_LABEL, min_size=1, max_size=3), st.sampled_from(["io", "dev", "app", "net"]), _LABEL)
def test_values_under_a_real_domain_still_are(labels, tld, user):
    host = ".".join([*labels, f"ledger{tld}", tld])
    got = _audited(("assistant", f"curl https://{host}/v1/items and mail {user}@{host}"))
    assert ("url", f"https://{host}/v1/items") in got and ("host", host) in got


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(
    st.sampled_from("0123456789abcdef").map(lambda c: c * 3),
    st.sampled_from(["abc", "123", "def", "456", "789", "1234", "bcde", "deadbeef", "c0ffee", "f00d"]),
), min_size=2, max_size=5).map("".join).filter(lambda h: 7 <= len(h) <= 40
                                                and any(c.isdigit() for c in h)
                                                and any(c.isalpha() for c in h)))
def test_a_hash_typed_by_hand_is_a_placeholder(value):
    assert "placeholder_hash" in signature_hits(value, "hash")
    assert not _audited(("assistant", f"commit {value} of the fixture"))


def test_real_hashes_are_seldom_taken_for_placeholders():
    hashes = [hashlib.sha1(str(n).encode()).hexdigest()[:length]
              for n in range(2000) for length in (7, 12, 40)]
    hashes = [h for h in hashes if any(c.isalpha() for c in h) and any(c.isdigit() for c in h)]
    taken = [h for h in hashes if "placeholder_hash" in signature_hits(h, "hash")]
    assert len(taken) <= len(hashes) // 200, taken[:10]


def test_a_platforms_host_is_nobodys_but_its_urls_are_the_tasks():
    text = ("From github.com:acme/ledger\ngit@github.com: Permission denied; see pkg.go.dev, pypi.org\n"
            "open https://github.com/acme/ledger/pull/112 and https://linear.app/acme/issue/LED-7")
    assert _audited(("user", text)) == {("url", "https://github.com/acme/ledger/pull/112"),
                                        ("url", "https://linear.app/acme/issue/LED-7")}


def test_a_placeholder_is_still_new_after_a_compaction():
    session = Session((
        Entry(1, "assistant", "the gateway is https://pay.ledgerly.io/v2"),
        Compaction(2, "worked on the gateway"),
        Entry(3, "assistant", "use https://api.example.com/v2 for the gateway"),
    ), "jsonl")
    [audit] = audit_session(session)
    assert {(n.value, n.signatures) for n in audit.new_after} >= {
        ("https://api.example.com/v2", ("example_domain",))}
    assert ("https://api.example.com/v2", "url") not in {(i.value, i.kind) for i in audit.identifiers}


# --- channels ---------------------------------------------------------------------------------


def _cc(kind: str, content, **extra) -> str:
    return json.dumps({"type": kind, "sessionId": "s-1", "cwd": "/home/dana/ledger", "uuid": "u",
                       "message": {"role": kind, "content": content}, **extra})


@settings(max_examples=40, deadline=None)
@given(st.lists(_SEGMENT, min_size=2, max_size=4), st.integers(1000, 65000))
def test_the_output_of_a_persons_shell_command_is_tool_output(dirs, port):
    path = "/" + "/".join(dirs)
    session = read_claude_code([
        _cc("user", f"<bash-input>ls {path}</bash-input>"),
        _cc("user", f"<bash-stdout>{path}/app.log\nlistening on port {port}</bash-stdout>"
                    "<bash-stderr></bash-stderr>"),
        _cc("user", f"<bash-stderr>warn: port {port}</bash-stderr>"),
    ])
    channels = [e.channel for e in session.items if isinstance(e, Entry)]
    assert channels == ["user", "tool_output", "tool_output"]
    got = _audited(*((e.channel, e.text) for e in session.items if isinstance(e, Entry)))
    assert ("path", path) in got  # the person typed it
    assert ("port", str(port)) not in got and ("path", f"{path}/app.log") not in got


def _codex(kind: str, payload: dict) -> str:
    return json.dumps({"timestamp": "2026-06-18T08:00:00.000Z", "type": kind, "payload": payload})


def _message(role: str, text: str) -> dict:
    kind = "output_text" if role == "assistant" else "input_text"
    return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}


def _rollout(tmp_path, history: list[dict], message: str = "") -> dict:
    agents = "# AGENTS.md instructions for /home/dana/ledger\n\n<INSTRUCTIONS>\nDocs live in docs/runbooks/\n"
    lines = [
        _codex("session_meta", {"id": "019e0000-0000-7000-8000-00000000000a", "cwd": "/home/dana/ledger"}),
        _codex("response_item", _message("developer", "<permissions instructions>\nskills in r5/ce-plan/SKILL.md")),
        _codex("response_item", _message("user", agents)),
        _codex("response_item", _message("user", "Ship the ledger export, PR #1412, on branch feat/ledger-export")),
        _codex("response_item", _message("assistant", "Reading src/export/csv.ts and port 18443")),
        _codex("compacted", {"message": message, "replacement_history": [
            _message("user", "Ship the ledger export, PR #1412, on branch feat/ledger-export"),
            _message("developer", "<permissions instructions>\nskills in r5/ce-plan/SKILL.md"),
            _message("user", agents), *history]}),
        _codex("response_item", _message("assistant", "Back to src/export/csv.ts")),
    ]
    path = tmp_path / "rollout.jsonl"
    path.write_text("\n".join(lines) + "\n")
    [session] = read_sessions(path)
    assert session.format == "codex"
    [audit] = audit_session(session)
    return {"compaction": session.compactions[0], "audit": audit}


def test_a_server_compaction_without_a_summary_in_the_log_is_opaque(tmp_path):
    got = _rollout(tmp_path, [])
    compaction, audit = got["compaction"], got["audit"]
    assert compaction.carrier == "opaque"
    states = {i.value: i.state for i in audit.identifiers}
    assert states["#1412"] == states["feat/ledger-export"] == "present"  # the person's turn, kept
    assert states["src/export/csv.ts"] == "unknown"  # not in what the log shows: maybe in the summary
    # The runtime's instructions are carried, and make none of their values the task's.
    assert "r5/ce-plan/SKILL.md" not in states and "docs/runbooks/" not in states
    assert [n.value for n in audit.lost_and_needed] == ["src/export/csv.ts"]


def test_a_compaction_with_its_summary_is_text(tmp_path):
    got = _rollout(tmp_path, [], message="Export work: csv writer in src/export/csv.ts")
    assert got["compaction"].carrier == "text"
    states = {i.value: i.state for i in got["audit"].identifiers}
    assert states["src/export/csv.ts"] == "present" and states["18443"] == "missing"


def test_an_encrypted_summary_is_opaque(tmp_path):
    got = _rollout(tmp_path, [{"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAAA-blob"}])
    assert got["compaction"].carrier == "opaque"
    assert {i.state for i in got["audit"].identifiers} <= {"present", "unknown"}


# --- session 7: the code's own names, task-list numbers, mentions, paths a summary implies ------

_WORD = st.sampled_from(["LEDGER", "MAX", "API", "KEY", "PORT", "URL", "S3", "RETRY", "CACHE", "TTL",
                         "BYTES", "V2", "LOCAL", "SHARE", "TOKEN", "HOST", "OAUTH", "DIR"])
_UPPER = st.lists(_WORD, min_size=2, max_size=4).map("_".join)

_DECLARED = [
    "    27→const {name} = 24 * 60 * 1000;",
    "export const {name}: number = 10;",
    "    private static final int {name} = 3;",
    "#define {name} 64",
    "{name}: dict[str, str] = {{",
    "import {{ {name}, truncateTail }} from './tools/truncate.js';",
    "import {{\n\tloadEntries,\n\t{name},\n}} from '../session-manager.js';",
    "from app.settings import {name}, other",
    "{name}=$(curl -s -X POST http://localhost:3000/users | jq -r .id)",
    "for {name} in a b c; do echo $x; done",
]
_USED = ["versions.slice(0, {name});", "if (text.startsWith({name})) {{", "echo \"id: ${name}\"",
         "return TABLE[{name}];", "keep {name} as it is"]
_READ = ["const v = process.env.{name} || 'x';", "token = os.environ['{name}']",
         "host: config.get('{name}', 'localhost'),", "export {name}=$(cat key.pem)",
         "v := os.Getenv(\"{name}\")"]


@settings(max_examples=80, deadline=None)
@given(_UPPER, st.sampled_from(_DECLARED), st.sampled_from(_USED), st.booleans())
def test_a_name_the_code_declares_is_no_environment_variable_anywhere(name, declared, used, first):
    entries = [("tool_output", declared.format(name=name)), ("assistant", used.format(name=name))]
    if first:
        entries.reverse()
    assert ("env_var", name) not in _audited(*entries, ("assistant", "set LEDGER_GATEWAY_URL"))
    assert ("env_var", "LEDGER_GATEWAY_URL") in _audited(*entries, ("assistant", "set LEDGER_GATEWAY_URL"))


@settings(max_examples=60, deadline=None)
@given(_UPPER, st.sampled_from(_DECLARED), st.sampled_from(_READ))
def test_a_declared_name_the_code_reads_from_the_environment_stays_one(name, declared, read):
    got = _audited(("tool_output", declared.format(name=name)), ("assistant", f"set {name} first"),
                   ("tool_output", read.format(name=name)))
    assert ("env_var", name) in got


_CODE_NOISE = {
    "an error code": "throw new CryptoError('bad format', 'DECRYPTION_FAILED');\n"
                     "On failure, throw with code 'KEY_REWRAP_FAILED'",
    "a Node error compared": 'if(i!=="MODULE_NOT_FOUND"&&i!=="ERR_PACKAGE_PATH_NOT_EXPORTED")throw a',
    "a placeholder": 'token = "YOUR_TOKEN_HERE"  # or YOUR_API_KEY',
    "a constant passed or indexed": "@Inject(IPFS_PROVIDER) x; return IMAGE_MIME_TYPES[ext];",
    "a task list": "#8 [pending] DOM-2: Create the use cases [blocked by #10]\n"
                   "#14 [in_progress] UI-3: Create AddProfileScreen [blocked by #11, #15]\n"
                   "Blocked by: #7\nBlocks: #19, #27",
    "a task list's numbers in a plan": "Your first assigned task is #17 (UI-6). After that, tasks "
                                       "#12 (UI-1), #13 (UI-2) become available; UI-5 (#16) waits",
    "a glob ending in a star": "ls -la ../ledger-cli* 2>/dev/null; rm out/run_*",
    "task numbers after their keys": "My remaining tasks (INT-2 #20, INT-3 #21) wait on DOM-3 (#9)",
    "task numbers before their keys": "My UI tasks (#12, #13, #14) wait; next: #17 UI-6, #12 UI-1 done; "
                                      "the task get showed it blocked by #11 and #15",
    "a pasted browser console": "The above error occurred in the <ForwardRef> component:\n"
                                "    at http://localhost:3000/chunk-z33mq3ks.js:35563:28\n"
                                "    at Router (http://localhost:3000/chunk-36jrqfj4.js:26381:13)\n"
                                "Visit https://reactjs.org/link/error-boundaries to learn more",
    "a comment naming git": "// Set up git branch watcher\nthis.footer.watchBranch(() => x)",
    "files mentioned by name": 'pi @prompt.md @image.png "What is in it?"',
    "two files joined by a slash": "Consolidate colocated AGENTS.md/CLAUDE.md pairs",
    "a compiler's module specifier": "error TS2307: Cannot find module "
                                     "'./user-message-selector.js' or its types; module \"../ui/x.js\"",
}


def test_a_sub_agents_id_is_the_runtimes_wherever_it_stands():
    got = _audited(("tool_output", "Async agent launched successfully.\nagentId: a291e03 (internal ID)"),
                   ("assistant", "agent a291e03 is done; commit e4b91c07 was pushed"))
    assert ("hash", "a291e03") not in got and ("hash", "e4b91c07") in got


@pytest.mark.parametrize("name", sorted(_CODE_NOISE))
def test_code_and_runtime_noise_seen_in_session_7_is_no_task_value(name: str) -> None:
    found = {f for f in _tracked(_CODE_NOISE[name]) if f[0] != "ticket" or f[1].startswith("#")}
    assert not found, (name, found)


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 9999), st.sampled_from(["PR", "pr", "issue", "closes", "fixes", "see", "and"]))
def test_a_pr_number_is_still_a_ticket_beside_task_list_rules(n, word):
    assert ("ticket", f"#{n}") in _tracked(f"{word} #{n} is merged") or (n < 10 and word in ("see", "and"))


@settings(max_examples=80, deadline=None)
@given(st.lists(_SEGMENT, min_size=1, max_size=4), _SEGMENT, st.sampled_from(["ts", "py", "md"]),
       st.sampled_from(["read @{p} in full", "curl -F \"file=@/{p}\" http://h", "look at @{p}, then"]))
def test_a_files_mention_is_its_path_without_the_at(dirs, name, ext, form):
    rel = "/".join([*dirs, f"{name}.{ext}"])
    text = form.format(p=rel)
    want = f"/{rel}" if "@/" in text else rel
    found = _tracked(text)
    assert ("path", want) in found
    assert not any(v.startswith("@") for k, v in found if k == "path")


def test_an_e_mail_address_or_an_import_gives_no_mention():
    found = _tracked("mail bob@ledgerly.dev/x; import y from '@ledger/core/src/y.ts'")
    assert not any(k == "path" for k, _v in found), found


def _paths_after(summary: str, *entries: tuple[str, str]) -> dict[str, str]:
    from foldscope.core.audit import Context
    items: list = [Context(1, cwd="/home/dana/ledger")]
    items += [Entry(n, ch, text) for n, (ch, text) in enumerate(entries, 2)]
    items.append(Compaction(len(items) + 1, summary))
    [audit] = audit_session(Session(tuple(items), "jsonl"))
    return {i.value: i.state for i in audit.identifiers if i.kind == "path"}


@settings(max_examples=60, deadline=None)
@given(st.lists(_SEGMENT, min_size=1, max_size=3), st.lists(_SEGMENT, min_size=1, max_size=3), _SEGMENT)
def test_a_file_the_summary_names_from_a_sub_directory_is_carried(outer, inner, name):
    full = "/home/dana/ledger/" + "/".join([*outer, *inner, f"{name}.ts"])
    tail = "/".join([*inner, f"{name}.ts"])
    if len(inner) < 1:
        return
    states = _paths_after(f"we built `{tail}`", ("tool_call", f"Write file_path: {full}"))
    assert states[full] == "present"


@settings(max_examples=60, deadline=None)
@given(st.lists(_SEGMENT, min_size=2, max_size=4), _SEGMENT)
def test_a_directory_the_summary_names_a_file_of_is_carried(dirs, name):
    directory = "/home/dana/ledger/" + "/".join(dirs)
    states = _paths_after(f"edited {directory}/{name}.py",
                          ("tool_call", f"Grep path: {directory}"),
                          ("tool_call", f"ls {directory}/../other"))
    assert states[directory] == "present"


def test_an_implied_directory_only_tool_output_showed_is_not_listed():
    states = _paths_after("edited src/app/ledger.py", ("tool_output", "/home/dana/ledger/src/app\nok"),
                          ("assistant", "next: /home/dana/ledger/docs/runbooks/"))
    assert "/home/dana/ledger/src/app" not in states
    assert states["/home/dana/ledger/docs/runbooks"] == "missing"


def test_a_one_segment_inner_directory_is_not_implied():
    states = _paths_after("edited app/src/data/ledger.py", ("assistant", "look in /data"))
    assert states["/data"] == "missing"


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["127.0.0.1", "127.0.1.1", "0.0.0.0"]), st.integers(1024, 65535))
def test_the_loopback_address_is_everyones_its_port_is_not(ip, port):
    got = _audited(("assistant", f"bind {ip} then curl http://{ip}:{port}/health"))
    assert ("ip", ip) not in got
    assert ("url", f"http://{ip}:{port}/health") in got and ("port", str(port)) in got
    assert ("ip", "10.20.30.40") in _audited(("assistant", "the box is 10.20.30.40"))


@settings(max_examples=60, deadline=None)
@given(_LABEL, st.integers(1000, 65535), st.lists(_SEGMENT, min_size=1, max_size=3),
       st.sampled_from(["js", "mjs", "tsx"]), st.integers(1, 99999), st.integers(1, 200))
def test_a_stack_frame_is_no_url_the_page_is(host, port, dirs, ext, line, col):
    page = f"http://{host}.local:{port}/" + "/".join(dirs)
    frame = f"http://{host}.local:{port}/{'/'.join(dirs)}.{ext}:{line}:{col}"
    got = _tracked(f"open {page} then:\n    at App ({frame})\n    at {frame}")
    assert ("url", page) in got
    assert not any(v.startswith(frame[:-1]) or v == frame for _k, v in got), got


@settings(max_examples=40, deadline=None)
@given(_SEGMENT, st.lists(_SEGMENT, min_size=1, max_size=3), _SEGMENT)
def test_a_file_the_summary_names_from_the_repository_root_is_carried_after_a_cd(sub, dirs, name):
    from foldscope.core.audit import Context
    inner = "/".join([*dirs, f"{name}.tsx"])
    items = (Context(1, cwd="/home/dana/ledger"), Context(2, cwd=f"/home/dana/ledger/{sub}"),
             Entry(3, "tool_call", f"Edit file_path: /home/dana/ledger/{sub}/{inner}"),
             Compaction(4, f"changed `{sub}/{inner}`"))
    [audit] = audit_session(Session(items, "jsonl"))
    assert {i.value: i.state for i in audit.identifiers}[f"/home/dana/ledger/{sub}/{inner}"] == "present"


@settings(max_examples=60, deadline=None)
@given(st.lists(_SEGMENT, min_size=1, max_size=3).map("-".join),
       st.sampled_from(["git checkout -b {b}", "cd app && git checkout -b {b}", "$ git switch -c {b}",
                        "run `git branch -m {b}`", "(git checkout {b})", "if ok; then git switch {b}; fi"]))
def test_a_branch_git_makes_at_a_command_is_tracked(branch, form):
    if branch in ("main", "master", "develop", "trunk", "origin"):
        return
    assert ("branch", branch) in _tracked(form.format(b=branch))


@settings(max_examples=60, deadline=None)
@given(st.integers(100, 99999), st.sampled_from(["Blocked by #{n} (yield spike)", "blocks #{n} and more",
                                                 "Part of #{n}. Blocked by #{n}."]))
def test_an_issue_named_in_prose_as_blocking_stays_a_ticket(n, form):
    assert ("ticket", f"#{n}") in _tracked(form.format(n=n))

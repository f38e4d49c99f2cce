"""Identifier kinds: the shipped rules, user rules, and overlap resolution."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core.errors import ConfigError
from foldscope.core.identifiers import (
    default_rules,
    find_identifiers,
    kind_of,
    main_kind,
    merge_rules,
    rules_from_data,
)


@pytest.mark.parametrize(("value", "kind"), [
    ("/srv/app/data.db", "path"),
    ("~/notes/todo.txt", "path"),
    ("https://example.org/a/b?c=1", "url"),
    ("mail.example.co.uk", "host"),
    ("ops@example.io", "email"),
    ("@jo.ann-pager", "handle"),
    ("123e4567-e89b-12d3-a456-426614174000", "uuid"),
    ("sha256:" + "ab" * 32, "digest"),
    ("9fceb02d0ae598e95dc970b74767f19372d61af8", "hash"),
    ("kid-99ZZ41", "key_id"),
    ("1999-12-31T23:59:59Z", "timestamp"),
    ("2001-02-03 04:05 UTC", "timestamp"),
    ("192.168.1.20", "ip"),
    ("2.0.13-beta.1", "version"),
    ("v10.2", "version"),
    ("HOME_DIR", "env_var"),
    ("$DEPLOY_KEY", "env_var"),
    ("${GATEWAY_URL}", "env_var"),
    ("INFRA-88", "ticket"),
    ("31337", "number"),
    ("07:15", "time"),
])
def test_kind_of_shipped_rules(value: str, kind: str) -> None:
    assert kind_of(value) == kind


@pytest.mark.parametrize("value", ["Отдел расчётов-4", "hello world", "install.lock"])
def test_kind_of_is_none_when_no_rule_covers_the_value(value: str) -> None:
    assert kind_of(value) is None


def test_main_kind_falls_back_to_the_longest_identifier() -> None:
    assert main_kind("19 shards") == "number"
    assert main_kind("prefix /a/b/c suffix 7") == "path"


def test_longest_match_wins_over_its_parts() -> None:
    found = find_identifiers("fetch https://cdn.example.net/x/y.js now")
    assert [(i.kind, i.value) for i in found] == [("url", "https://cdn.example.net/x/y.js")]


def test_context_group_reports_only_the_value() -> None:
    found = find_identifiers("it listens on port 8443; admin at box:9090")
    ports = [(i.value, i.start) for i in found if i.kind == "port"]
    text = "it listens on port 8443; admin at box:9090"
    assert [v for v, _ in ports] == ["8443", "9090"]
    assert all(text[s:s + len(v)] == v for v, s in ports)


@pytest.mark.parametrize(("text", "expected"), [
    ("the ledger is on port 62114.", [("port", "62114")]),
    ("export LEDGER_PORT=62114", [("env_var", "LEDGER_PORT"), ("port", "62114")]),
    ("listening on 127.0.0.1:62114 now", [("ip", "127.0.0.1"), ("port", "62114")]),
    ("use port `8080` please", [("port", "8080")]),
    ('{"port": 62114, "httpPort": 8080}', [("port", "62114"), ("port", "8080")]),
    ("the port number is 62114", [("port", "62114")]),
    ("a portal 8080 and support 1234", [("number", "8080"), ("number", "1234")]),
    ("OPS-4821 is UTF-8 text hashed with SHA-256", [("ticket", "OPS-4821")]),
    ("psql -h db -p 5433; mkdir -p /tmp/x", [("port", "5433"), ("path", "/tmp/x")]),
    ("an export 12345 and an airport 4711", [("number", "12345"), ("number", "4711")]),
    ("<summary>kept /srv/a.lock</summary>", [("path", "/srv/a.lock")]),
])
def test_rules_in_session_prose(text: str, expected: list[tuple[str, str]]) -> None:
    assert [(i.kind, i.value) for i in find_identifiers(text)] == expected


def test_kinds_filter_keeps_overlap_resolution() -> None:
    numbers = find_identifiers("cutoff 2026-07-14 01:26 UTC and 42", kinds=["number"])
    assert [i.value for i in numbers] == ["42"]


def test_user_rules_add_and_replace() -> None:
    extra = rules_from_data({"kind": [
        {"name": "ticket", "pattern": r"\bT#\d+\b"},
        {"name": "sku", "pattern": r"\bSKU-[A-Z]{3}\b", "description": "a stock-keeping unit"},
    ]}, source="mine.toml")
    rules = merge_rules(default_rules(), extra)
    assert kind_of("SKU-ABC", rules) == "sku"
    assert kind_of("T#12", rules) == "ticket"
    assert kind_of("OPS-12", rules) is None or kind_of("OPS-12", rules) != "ticket"
    assert len([r for r in rules if r.name == "ticket"]) == 1


@pytest.mark.parametrize(("data", "fragment"), [
    ({}, "no [[kind]]"),
    ({"kind": [{"name": "x", "pattern": "("}]}, "bad pattern"),
    ({"kind": [{"name": "x", "pattern": "a*"}]}, "empty string"),
    ({"kind": [{"name": "Bad Name", "pattern": "a"}]}, "'name'"),
    ({"kind": [{"name": "x", "pattern": "a"}, {"name": "x", "pattern": "b"}]}, "defined twice"),
    ({"kind": [{"name": "x", "pattern": "a", "colour": "red"}]}, "unknown field"),
    ({"kinds": []}, "unknown key"),
    ({"patterns": "x", "kind": [{"name": "x", "pattern": "a"}]}, "[patterns] must be a table"),
    ({"patterns": {"Bad": "a"}, "kind": [{"name": "x", "pattern": "a"}]}, "lower-case"),
    ({"patterns": {"p": "("}, "kind": [{"name": "x", "pattern": "a"}]}, "patterns.p: bad pattern"),
    ({"patterns": {"p": ""}, "kind": [{"name": "x", "pattern": "a"}]}, "non-empty"),
    ({"patterns": {"p": "(?&tld)"}, "kind": [{"name": "x", "pattern": "a"}]}, "cannot use another"),
    ({"kind": [{"name": "x", "pattern": "a(?&nope)"}]}, "(?&nope), which is not a shared pattern"),
    ({"kind": [{"name": "x", "pattern": "a", "anchor": "(?&nope)"}]}, "'anchor' uses (?&nope)"),
    ({"patterns": {"opt": "b?"}, "kind": [{"name": "x", "pattern": "(?&opt)"}]}, "empty string"),
])
def test_bad_rule_files_are_one_line_errors(data: dict, fragment: str) -> None:
    with pytest.raises(ConfigError) as err:
        rules_from_data(data, source="mine.toml")
    assert fragment in str(err.value) and "mine.toml" in str(err.value)
    assert "\n" not in str(err.value)


_texty = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=200)


@given(_texty)
def test_identifiers_are_disjoint_ordered_and_quote_the_text(text: str) -> None:
    found = find_identifiers(text)
    for a, b in zip(found, found[1:], strict=False):
        assert a.end <= b.start
    for ident in found:
        assert text[ident.start:ident.end] == ident.value and ident.value


@given(st.sampled_from(["/opt/a/b.lock", "v1.2.3", "@ops.team", "kid-ABCDEF12", "2026-01-02T03:04Z"]),
       st.sampled_from(["", "see ", "(", "value: `"]), st.sampled_from(["", ".", ")", "` today", ", next"]))
def test_a_value_in_prose_is_found_whole(value: str, left: str, right: str) -> None:
    found = find_identifiers(left + value + right)
    assert any(i.value == value and i.kind == kind_of(value) for i in found)


def _naive_non_overlapping(text: str) -> list[tuple[str, str, int]]:
    """The overlap rule spelled out the slow way: longest first, then rule order, then position."""
    candidates = []
    for order, rule in enumerate(default_rules()):
        for match in rule.pattern.finditer(text):
            took_part = "value" in rule.pattern.groupindex and match.group("value") is not None
            span = match.span("value") if took_part else match.span()
            if span[1] > span[0]:
                candidates.append((span[0] - span[1], order, span[0], rule.name))
    taken: list[tuple[int, int]] = []
    out = []
    for neg_len, _order, start, kind in sorted(candidates):
        end = start - neg_len
        if any(start < b and a < end for a, b in taken):
            continue
        taken.append((start, end))
        out.append((kind, text[start:end], start))
    return sorted(out, key=lambda item: item[2])


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab:/.-_@0123456789 port\nkidOPSv")), max_size=80))
def test_overlap_resolution_matches_the_naive_rule(text: str) -> None:
    assert [(i.kind, i.value, i.start) for i in find_identifiers(text)] == _naive_non_overlapping(text)


def test_shared_patterns_are_defined_once_and_used_by_name() -> None:
    import tomllib
    from importlib import resources

    shipped = tomllib.loads(resources.files("foldscope.core.data").joinpath(
        "identifier_kinds.toml").read_text("utf-8"))
    written = {k["name"]: k["pattern"] for k in shipped["kind"]}
    # The TLD list of hosts and of ports after a host, the IPv4 octet of addresses and of ports
    # after one: each written once, in [patterns].
    assert "(?&tld)" in written["host"] and "(?&tld)" in written["port"]
    assert written["ip"].count("(?&ipv4_octet)") == 2 == written["port"].count("(?&ipv4_octet)")
    assert all("|com|net|" not in p for p in written.values())
    rules = {r.name: r for r in default_rules()}
    assert f"(?:{shipped['patterns']['tld']})" in rules["host"].pattern.pattern
    assert kind_of("ledger.internal") == "host" and kind_of("10.1.2.3") == "ip"
    # A user file may use the shipped names and its own; a use reads as one group.
    mine = rules_from_data({"patterns": {"env": "dev|prod"}, "kind": [
        {"name": "svc", "pattern": r"\bsvc-(?&env)\.(?&tld)\b"},
        {"name": "stage", "pattern": r"\b(?&env)1\b"}]}, source="mine.toml")
    found = find_identifiers("call svc-prod.internal, then prod1 not dev", rules=mine)
    assert [(i.kind, i.value) for i in found] == [("svc", "svc-prod.internal"), ("stage", "prod1")]

# --- session shapes seen in real sessions (written here, not copied) ---------------------------

def _found(text: str) -> set[tuple[str, str]]:
    return {(i.kind, i.value) for i in find_identifiers(text) if i.kind != "number"}


def test_docs_files_colours_code_assigns_and_templates_are_not_task_values() -> None:
    noise = [
        "Edited docs/configuration/introduction.mdx and docs/segments/cli/claude.md",
        "  color: #111111;\n  background: #242526;",
        "<%= if @loading do %>\n  <.spinner :if={@loading} />\n<% end %>",
        "socket |> assign(:loading, true)\n@loading && render(x)",
        "`--data=${CONFIG.SEGMENT_DATA_FILE}`, // read at build time",
        "limit = settings.MAX_UPLOAD_SIZE",
        "starred by @1849 people",
        "if (pattern.test(line)) return; tasks.test(name)",
    ]
    kinds = {"branch", "ticket", "handle", "env_var", "host"}
    for text in noise:
        assert not {f for f in _found(text) if f[0] in kinds}, text


def test_branches_tickets_handles_and_env_vars_people_lose_are_still_found() -> None:
    assert ("branch", "feat/phase-12-mfa") in _found("on feat/phase-12-mfa now")
    assert ("branch", "release/v1.2.3") in _found("cut release/v1.2.3")
    assert ("branch", "docs-refresh") in _found("git checkout -b docs-refresh")
    assert ("ticket", "#12345") in _found("fixes #12345")
    assert ("handle", "@alice") in _found("ping @alice and @bob.")
    assert ("handle", "@ops-team") in _found("cc @ops-team, please")
    assert ("env_var", "${DB_URL}") in _found('url = "${DB_URL}"')
    assert ("env_var", "$API_TOKEN") in _found("echo $API_TOKEN.")
    assert ("env_var", "GATEWAY_BASE_URL") in _found("export GATEWAY_BASE_URL=http://gw:8080")


def test_a_dependency_range_is_the_package_managers_not_a_task_version() -> None:
    for text in ['"zod": "^3.23.8",', "requests>=2.31", "{:phoenix, \"~> 1.7.14\"}", "x==1.2.3"]:
        assert not {f for f in _found(text) if f[0] == "version"}, text
    assert ("version", "v4.18.2-rc3") in _found("release v4.18.2-rc3 shipped")
    assert ("port", "8080") in _found("PORT=8080")


def _tracked(text: str) -> set[tuple[str, str]]:
    from foldscope.core.identifiers import tracked_kinds

    tracked = tracked_kinds() - {"number"}
    return {(i.kind, i.value) for i in find_identifiers(text) if i.kind in tracked}


# Noise classes seen in real sessions (session 5), each written here in its shape: none of these
# texts holds a value of the task.
_CODE_AND_LOG_NOISE = {
    "a recorder's redaction": "read the full transcript at: /home/dana/.REDACTED.jsonl\nthen",
    "git's rename braces": " rename notes/{todo => done}/2031-04-05-rotate-keys.md (71%)",
    "a relative import": "import { Widget } from '../ui/widget';\nconst db = require('./lib/db');",
    "a Dart import": "import '../../models/order.dart';\n",
    "a declared constant": "export const RETRY_BUDGET_MS = 250;\n    12→  static final int MAX_PAGES = 9;",
    "a Python module constant": "PAGE_LIMIT: int = 40\nDEFAULT_REGIONS = (\"eu\", \"us\")\n",
    "an error code compared": "if (err.code === 'QUOTA_GONE') { ... }\n  | 'CHECKSUM_BAD'\n  case \"LOCK_HELD\":",
    "a file's stem": "Compare PHASE_TWO_PLAN.md with ROLLOUT_NOTES.txt",
    "a Rust path": "let t = std::time::UNIX_EPOCH + d;",
    "a script's one-word variables": "RESP=$(curl -s x); echo \"$RESP\" | jq .id; OUT=$VAULT",
    "a member named like a TLD": "browser = new Pane(alice.page);\nstart=cursor.page * cursor.page_size,",
    "an algorithm spelled in hex": "signs with ed25519 keys",
    "a background task's id": "Command running in background with ID: c0ffee1. Output is being written to: "
                               "/private/tmp/claude-501/-Users-dana-proj/tasks/c0ffee1.output\n"
                               "TaskOutput\ntask_id: c0ffee1\n",
    "a test runner's clock": "00:04 +12 -1: OrderList renders rows",
    "a decorator after Read's prefix": "     7→@freezed\n     8→class Order {}\n",
    "a decorator in grep output": "41:@asynccontextmanager\n",
    "a JSON @-key": '  "@orderCountLabel": {\n    "@type": "Message"',
    "SQL's FROM": "SELECT name\n  FROM pg_tables\n  WHERE x",
    "a route template": "GoRoute(path: '/orders/$orderId')",
    "a route before a full stop": "then it redirects to /orders. Done, then /cart...",
    "a glob": "Glob\npattern: **/useOrders.ts\nand src/**/*.dart, **/locales/**",
    "a search for code names": "Grep\npattern: ORDERS_API_URL|LOCAL_CACHE_DIR\n",
    "a URL template of a script": 'curl -X DELETE "http://svc.internal/items/$ID"',
}


@pytest.mark.parametrize("name", sorted(_CODE_AND_LOG_NOISE))
def test_code_and_log_noise_is_no_task_value(name: str) -> None:
    assert not _tracked(_CODE_AND_LOG_NOISE[name]), name


def test_what_the_noise_rules_leave_people_can_lose() -> None:
    found = _tracked(
        "host at 10.20.30.40. Then export ORDERS_DB_URL=postgres://db:5432/o\n"
        "const url = import.meta.env.VITE_ORDERS_URL || process.env.ORDERS_API_BASE;\n"
        "gw = configService.get<string>(\n  'LEDGER_GATEWAY_URL',\n)\n"
        "token = os.getenv(\"LEDGER_TOKEN\")\n"
        "{\"env\": {\"LEDGER_FLAG_X\": \"1\"}}\n"
        "FROM node:20-alpine AS build\n"
        "deploy to ledgerly.app, see (docs at ledgerly.dev) and commit 9f3c2ab1\n"
        "echo $LEDGER_TOKEN ${PORT}\n"
        "cat /srv/orders/README.md /srv/orders/$RUN_ID/log.txt")
    for want in [("ip", "10.20.30.40"), ("env_var", "ORDERS_DB_URL"), ("env_var", "VITE_ORDERS_URL"),
                 ("env_var", "ORDERS_API_BASE"), ("env_var", "LEDGER_GATEWAY_URL"),
                 ("env_var", "LEDGER_TOKEN"), ("env_var", "LEDGER_FLAG_X"), ("image", "node:20-alpine"),
                 ("host", "ledgerly.app"), ("host", "ledgerly.dev"), ("hash", "9f3c2ab1"),
                 ("env_var", "$LEDGER_TOKEN"), ("env_var", "${PORT}"), ("path", "/srv/orders/README.md")]:
        assert want in found, want
    assert ("version", "10.20.30.40") not in found

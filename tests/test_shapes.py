"""The shapes of URLs, e-mail addresses and paths (core.shapes): written once, used by the
identifier kinds file, the export scrubber and the simulator, and how their readings relate."""

from __future__ import annotations

import re
from importlib import resources

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core import shapes
from foldscope.core.errors import ConfigError
from foldscope.core.identifiers import default_rules, find_identifiers, rules_from_data
from foldscope.core.sanitize import EMAIL_SHAPE, LOCAL_PATH_SHAPE, URL_SHAPE, scrub_text
from foldscope.engine.sim.extract import absolute_paths, digest_segment

KINDS_FILE = resources.files("foldscope.core.data").joinpath("identifier_kinds.toml").read_text("utf-8")
RULES = {rule.name: rule for rule in default_rules()}

# Texts made of the pieces that decide where these shapes start and stop.
_PIECES = ["http://", "HTTPS://", "s3://", "x+y://", "a", "Z", "0", "9", "_", "-", ".", "@", ":",
           "/", "~", "%", "+", "<", ">", '"', "'", "`", "|", ",", ";", "!", "?", "(", ")", "[",
           "]", "{", "}", "\\", "$", "#", "=", " ", "\n", "ü", "例", "\x1b[1m", "\x1b[31m",
           "${", "#{", "host.example.com", "10.0.0.5", "user@", "a@b.co", ".org", "/home/alice/",
           "C:\\Users\\", "-12-", "a/", "b/"]
_texts = st.lists(st.sampled_from(_PIECES), max_size=24).map("".join)


def _spans(pattern: re.Pattern[str], text: str) -> list[tuple[int, int]]:
    return [m.span() for m in pattern.finditer(text)]


def _covered(inner: list[tuple[int, int]], outer: list[tuple[int, int]]) -> bool:
    return all(any(s <= a and b <= e for s, e in outer) for a, b in inner)


@pytest.mark.parametrize(("kind", "shape"), [("url", shapes.URL), ("email", shapes.EMAIL),
                                             ("path", shapes.PATH)])
def test_the_kinds_file_uses_each_shape_by_name_and_does_not_restate_it(kind, shape):
    assert f"(?:{shape})" in RULES[kind].pattern.pattern
    assert f"(?&{kind})" in KINDS_FILE
    assert shape not in KINDS_FILE
    assert shapes.URL_BODY not in KINDS_FILE


def test_the_scrubber_is_compiled_from_the_shapes():
    assert URL_SHAPE.pattern == shapes.URL_REACH
    assert URL_SHAPE.pattern.startswith(shapes.URL_OPENING)
    assert EMAIL_SHAPE.pattern == shapes.EMAIL_REACH
    assert LOCAL_PATH_SHAPE.pattern == shapes.LOCAL_PATH


def test_a_user_kinds_file_may_use_the_shapes_and_an_unknown_name_is_refused():
    rules = rules_from_data({"kind": [{"name": "mail_url", "pattern": r"mailto:(?&email)"},
                                      {"name": "doc_link", "pattern": r"see (?&url)"}]})
    found = find_identifiers("see https://docs.example.org/a, or mailto:ops@example.org.", rules)
    assert [(i.kind, i.value) for i in found] == [
        ("doc_link", "see https://docs.example.org/a"), ("mail_url", "mailto:ops@example.org")]
    with pytest.raises(ConfigError, match=r"uses \(\?&uri\), which is not a shared pattern"):
        rules_from_data({"kind": [{"name": "x", "pattern": r"(?&uri)"}]})


@settings(max_examples=400, deadline=None)
@given(_texts)
def test_what_a_reader_takes_for_a_url_the_scrubber_removes_with_the_rest_of_its_token(text):
    url = re.compile(shapes.URL)
    assert _covered(_spans(url, text), _spans(URL_SHAPE, text))
    # the kinds file's url is the shape with context around it: never more than the shape
    assert _covered(_spans(RULES["url"].pattern, text), _spans(url, text))


@settings(max_examples=400, deadline=None)
@given(_texts)
def test_an_email_address_ends_inside_what_the_scrubber_removes(text):
    reach = _spans(EMAIL_SHAPE, text)
    for start, end in _spans(re.compile(shapes.EMAIL), text):
        # scrubbed from its last '%' on (a local part may hold one; the scrubber's does not)
        at = text.rfind("%", start, end) + 1 or start
        assert _covered([(at, end)], reach), text


_OLD_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s\"'<>]+")
"""The scrubber's URL pattern before it was built from the shared shape (its e-mail and path
patterns are unchanged): the scrubber may only remove more than this, never less."""


@settings(max_examples=400, deadline=None)
@given(_texts)
def test_the_scrubber_removes_at_least_what_it_removed_before_the_shapes_were_shared(text):
    assert _covered(_spans(_OLD_URL, text), _spans(URL_SHAPE, text))


def test_a_url_after_a_colour_code_is_scrubbed_now():
    text = "\x1b[1mhttp://10.0.0.5:8080/ledger\x1b[0m"
    assert _spans(_OLD_URL, text) == []
    scrubbed = scrub_text(text)
    assert "10.0.0.5" not in scrubbed and "<endpoint sha256:" in scrubbed


@settings(max_examples=400, deadline=None)
@given(_texts)
def test_the_simulator_lists_the_absolute_paths_of_two_parts_or_more_the_shape_finds(text):
    for line in text.splitlines():
        assert absolute_paths(line) == [p for p in re.findall(shapes.PATH, line)
                                        if p.startswith("/") and p.count("/") >= 2]


@pytest.mark.parametrize(("line", "paths"), [
    ("tail -f /var/log/postgresql/postgresql.log", ["/var/log/postgresql/postgresql.log"]),
    ("health: https://ledger-api.staging.svc/healthz returns 200", []),
    ("assets at https://origin-7.cdn.kestrel-internal.net/assets.", []),
    ("lock file (/opt/kestrel/state/install.lock).", ["/opt/kestrel/state/install.lock"]),
    ("cd ~/src/app && ls ./build/out /tmp", []),
    ("wrote /srv/a/b, then /srv/c/d; done", ["/srv/a/b", "/srv/c/d"]),
])
def test_the_simulator_does_not_read_a_urls_path_as_a_path(line, paths):
    assert absolute_paths(line) == paths
    assert digest_segment(line).paths == paths

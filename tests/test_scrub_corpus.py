"""The export scrubber on a corpus of tricky strings: output pinned byte for byte, and its shapes
cover the URLs, e-mail addresses and local paths the identifier kinds file finds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core.identifiers import default_rules, find_identifiers
from foldscope.core.sanitize import public_url, sanitize_config, scrub_answer, scrub_text

CORPUS = json.loads((Path(__file__).parent / "fixtures" / "scrub_corpus.json").read_text("utf-8"))
"""Written by the scrubber as it was before its shapes were named (URLs with ports, queries and
unicode hosts, e-mail addresses, POSIX / home / Windows paths, key-shaped strings); any change in
what an export scrubs shows up here."""
SECRETS = ["s3cr3t-value", "sk-abcdefghijklmnopqrstuvwx"]


@pytest.mark.parametrize("case", CORPUS["corpus"], ids=range(len(CORPUS["corpus"])))
def test_the_scrubber_output_is_unchanged_on_the_corpus(case):
    text = case["text"]
    assert scrub_text(text) == case["scrub_text"]
    assert scrub_text(text + " s3cr3t-value", SECRETS) == case["scrub_text_secrets"]
    assert scrub_answer(text) == case["scrub_answer"]


def test_a_sanitised_config_is_unchanged():
    assert sanitize_config(CORPUS["config"], SECRETS) == CORPUS["config_out"]


def _private(kind: str, value: str) -> bool:
    """Identifiers an export must not carry: every URL and e-mail address, and paths that name a
    place on a machine (absolute or home-relative; a relative path names none)."""
    return kind in ("url", "email") or (kind == "path" and value.startswith(("/", "~/")))


def _leaks(text: str) -> list[tuple[str, str]]:
    scrubbed = scrub_text(text)
    return [(i.kind, i.value) for i in find_identifiers(text, default_rules())
            if _private(i.kind, i.value) and i.value in scrubbed
            and not (i.kind == "url" and public_url(i.value))]  # a public gateway is kept


@pytest.mark.parametrize("case", CORPUS["corpus"], ids=range(len(CORPUS["corpus"])))
def test_no_url_email_or_local_path_the_kinds_file_finds_survives_the_scrubber(case):
    assert _leaks(case["text"]) == []


_label = st.text("abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=8)
_host = st.lists(_label, min_size=1, max_size=3).map(".".join).map(lambda h: h + ".example.com")
_segment = st.text("abcdefghijklmnopqrstuvwxyz0123456789_.-ü", min_size=1, max_size=8).filter(
    lambda s: s.strip(".-"))
_url = st.builds(lambda scheme, host, port, path, query: f"{scheme}://{host}{port}/{path}{query}",
                 st.sampled_from(["http", "https", "postgres", "wss", "s3"]), _host,
                 st.sampled_from(["", ":8080", ":5432", ":65535"]),
                 st.lists(_segment, max_size=3).map("/".join),
                 st.sampled_from(["", "?a=1", "?a=1&b=ü", "#frag"]))
_email = st.builds(lambda user, host: f"{user}@{host}", _label, _host)
_path = st.builds(lambda root, parts: root + "/".join(parts),
                  st.sampled_from(["/", "~/", "/home/alice/", "/var/lib/"]),
                  st.lists(_segment, min_size=2, max_size=4))
_glue = st.sampled_from([" ", ", ", " (", ") ", ": ", " and ", "\n", " see "])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.one_of(_url, _email, _path), _glue), min_size=1, max_size=4))
def test_the_scrubber_covers_generated_urls_emails_and_paths(pieces):
    text = "".join(value + glue for value, glue in pieces)
    assert _leaks(text) == []

"""Sanitising configs and text for release: private endpoints, paths, e-mail, secret values."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from foldscope.core.evidence import fmt, same_figure
from foldscope.core.sanitize import digest, sanitize_config, sanitize_url, scrub_answer, scrub_text


def test_public_gateways_kept_private_endpoints_hashed():
    assert sanitize_url("https://openrouter.ai/api/v1") == "https://openrouter.ai/api/v1"
    assert sanitize_url("https://api.openai.com/v1?token=abc") == "https://api.openai.com/v1"
    for url in ("http://127.0.0.1:8000/v1", "http://10.0.0.7/v1", "https://gpu.lab.internal/v1",
                "https://user:pw@openrouter.ai/api/v1"):
        assert sanitize_url(url) == f"<endpoint {digest(url)}>"


def test_scrub_text_replaces_paths_emails_urls_and_secrets():
    text = ("failed at /home/bob/db/x.sqlite for bob@uni.edu via http://10.1.1.1:8000/v1 "
            "(key sk-abcdef123) C:\\Users\\bob\\study ~/runs/a")
    out = scrub_text(text, ["sk-abcdef123"])
    for needle in ("/home/bob", "bob@uni.edu", "10.1.1.1", "sk-abcdef123", "Users", "~/runs"):
        assert needle not in out
    assert "<secret>" in out and out.count("<path sha256:") == 3


def test_scrub_text_keeps_ids_and_names():
    for text in ("kestrel", "sim/faithful", "qwen/qwen3-235b@deepinfra", "j", "ledger port 62114"):
        assert scrub_text(text) == text


def test_scrub_answer_keeps_planted_paths_and_urls():
    answer = "install lock path: /opt/kestrel/state/install.lock\ncache: https://origin-7.x.net/a"
    assert scrub_answer(answer) == answer
    assert "<email" in scrub_answer("contact: a.b@example.org")


def test_sanitize_config_redacts_key_names_and_walks_structures():
    config = {"models": [{"id": "m", "base_url": "http://box:1/v1", "api_key_env": "SK_LIVE_1"}],
              "sweep": {"scenario": "/srv/private/s.toml", "arms": ["j"]},
              "/home/x/model": {"price": 1.5}}
    out = sanitize_config(config)
    assert out["models"][0]["api_key_env"] == "<redacted>"
    assert out["models"][0]["base_url"].startswith("<endpoint sha256:")
    assert out["sweep"]["scenario"].startswith("<path sha256:")
    assert out["sweep"]["arms"] == ["j"]
    assert not any(k.startswith("/home") for k in out)


@given(st.text(max_size=60), st.text(min_size=6, max_size=20))
def test_a_secret_never_survives_scrubbing(prefix, secret):
    assert secret not in scrub_text(prefix + secret + prefix, [secret]).replace("<secret>", "") \
        or secret in "<secret>"


def test_fmt_and_same_figure():
    assert fmt(None) == "" and fmt(float("nan")) == "" and fmt(3) == "3" and fmt(True) == "1"
    assert fmt(1 / 3) == "0.333333333333"
    assert same_figure("0.333333333333", fmt(1 / 3))
    assert same_figure("-2.08e-17", "0")
    assert not same_figure("0.5", "0.6") and not same_figure("", "0") and not same_figure("x", "0")

"""API keys, claims across pid namespaces, and how a sweep that cannot succeed ends (issue 20)."""

from __future__ import annotations

import json
import sqlite3
import time

import pytest
from conftest import definition, run_sweep
from fault_server import FaultServer, Raw, ok, sweep_file
from hypothesis import given
from hypothesis import strategies as st

from foldscope.cli.main import main
from foldscope.core.errors import ModelError, SweepClaimed
from foldscope.core.sanitize import KEY_SHAPED, scrub_answer
from foldscope.engine.keys import env_name_allowed, key_problem
from foldscope.engine.models import resolve_model
from foldscope.engine.procinfo import RunnerId, claim_alive, pid_visible, this_runner
from foldscope.engine.store import Store


def _one_line_error(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("foldscope: error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# -- api_key_env names ------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["OPENROUTER_API_KEY", "VLLM_TOKEN", "MY_KEY", "ACME_APIKEY",
                                  "HF_API_TOKEN"])
def test_key_like_variable_names_are_allowed(name):
    assert env_name_allowed(name)
    assert resolve_model("acme/m", {"provider": "vllm", "api_key_env": name}).api_key_env == name


@pytest.mark.parametrize("name", ["SECRET_NOT_A_KEY", "HOME", "PATH", "AWS_SECRET_ACCESS_KEY",
                                  "DATABASE_PASSWORD", "SSH_AUTH_SOCK", "GPG_KEY", "USER"])
def test_other_variables_cannot_be_sent_as_a_bearer_token(name):
    with pytest.raises(ModelError) as info:
        resolve_model("acme/m", {"provider": "vllm", "api_key_env": name})
    msg = str(info.value)
    assert "\n" not in msg and "allowed_api_key_envs" in msg and "config.toml" in msg


def test_the_person_can_allow_a_name_in_their_own_settings_only(tmp_path, user_settings,
                                                                 monkeypatch, capsys):
    monkeypatch.setenv("SECRET_NOT_A_KEY", "sk-should-never-be-sent-anywhere")
    with FaultServer([ok()]) as server:
        path = sweep_file(tmp_path / "s.toml", server.base_url,
                          model='api_key_env = "SECRET_NOT_A_KEY"',
                          sweep='allowed_api_key_envs = ["SECRET_NOT_A_KEY"]')
        # The sweep file cannot allow it (unknown key there), nor can a plain one name it.
        assert main(["run", path, "--db", str(tmp_path / "d.sqlite"), "--headless"]) == 2
        path = sweep_file(tmp_path / "s.toml", server.base_url,
                          model='api_key_env = "SECRET_NOT_A_KEY"')
        assert main(["run", path, "--db", str(tmp_path / "d.sqlite"), "--headless"]) == 2
        assert server.requests == []
        user_settings.parent.mkdir(parents=True, exist_ok=True)
        user_settings.write_text('allowed_api_key_envs = ["SECRET_NOT_A_KEY"]\n')
        assert main(["run", path, "--db", str(tmp_path / "d.sqlite"), "--headless"]) == 0
        assert server.requests
    err = capsys.readouterr().err
    assert "sk-should-never-be-sent-anywhere" not in err


# -- key values ---------------------------------------------------------------------------------


@given(st.text(min_size=1, max_size=40))
def test_key_problem_accepts_exactly_printable_ascii_without_spaces(key):
    ok_key = all(0x21 <= ord(c) <= 0x7E for c in key)
    assert (key_problem(key) is None) == ok_key
    if not ok_key:
        assert key not in key_problem(key) or key.isspace()


@pytest.mark.parametrize("value", ["sk-ключ-1234567890", "sk-abc123\n", " sk-abc123",
                                   "sk-abc\u200b123", "sk-a b"])
def test_a_key_no_header_can_carry_is_one_line_naming_the_variable(tmp_path, monkeypatch,
                                                                   capsys, value):
    monkeypatch.setenv("ACME_API_KEY", value)
    with FaultServer([ok()]) as server:
        path = sweep_file(tmp_path / "s.toml", server.base_url, model='api_key_env = "ACME_API_KEY"')
        assert main(["run", path, "--db", str(tmp_path / "d.sqlite"), "--headless"]) == 2
        assert server.requests == []
    line = _one_line_error(capsys.readouterr().err)
    assert "ACME_API_KEY" in line and value.strip() not in line
    assert "connect" not in line


def test_a_rejected_key_stops_the_sweep_at_once_and_leaves_its_rows_planned(tmp_path,
                                                                           monkeypatch, capsys):
    monkeypatch.setenv("ACME_API_KEY", "sk-wrong-key-000000000000")
    db = tmp_path / "d.sqlite"
    denied = Raw(b'{"error": {"message": "invalid api key"}}', status=401,
                 headers={"content-type": "application/json"})

    def answer(n, body):
        return denied if state["bad"] else ok()

    state = {"bad": True}
    with FaultServer(answer) as server:
        path = sweep_file(tmp_path / "s.toml", server.base_url, arms='["m", "o", "l"]',
                          repeats=2, model='api_key_env = "ACME_API_KEY"',
                          sweep="concurrency = 2")
        code = main(["run", path, "--db", str(db), "--headless"])
        err = capsys.readouterr().err
        assert code != 0
        line = _one_line_error(err)
        assert "key rejected for acme/m" in line
        assert "sk-wrong-key" not in err
        assert len(server.requests) <= 2  # at once: no call after the refusal is made
        with sqlite3.connect(db) as conn:
            statuses = {r[0] for r in conn.execute("SELECT status FROM rows")}
            sweep = conn.execute("SELECT status, stop_reason FROM sweeps").fetchone()
        assert statuses == {"planned"}
        assert sweep[0] == "stopped" and "key rejected for acme/m" in sweep[1]
        # Fixed key: a plain rerun runs every row.
        state["bad"] = False
        assert main(["run", path, "--db", str(db), "--headless"]) == 0
    with sqlite3.connect(db) as conn:
        assert {r[0] for r in conn.execute("SELECT status FROM rows")} == {"done"}


# -- exports scrub keys ----------------------------------------------------------------------


def test_key_shaped_text_is_scrubbed_from_answers_whatever_its_variable():
    for key in ("sk-proj-AbC123dEf456GhI789jKl0", "sk-or-v1-0123456789abcdef0123456789abcdef",
                "Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig"):
        assert key not in scrub_answer(f"the answer is {key} ok")
        assert KEY_SHAPED.search(key)
    # planted values are not key-shaped
    for value in ("kid-7F3A9C21", "v4.18.2-rc3", "3f1c9a52-7d4e-4b8a-9e21-c5d0b7a6f413",
                  "@marta.v-oncall", "https://origin-7.cdn.kestrel-internal.net/assets"):
        assert not KEY_SHAPED.search(value)


def test_an_endpoint_echoing_the_key_never_gets_it_into_an_export(tmp_path, monkeypatch,
                                                                  capsys):
    key = "sk-live-Zx81Qq0aa19fkD3kLmN0pQ7"
    monkeypatch.setenv("ACME_API_KEY", key)
    db = tmp_path / "d.sqlite"
    with FaultServer([ok(f"carrier with {key} and Bearer {key}")]) as server:
        path = sweep_file(tmp_path / "s.toml", server.base_url, model='api_key_env = "ACME_API_KEY"')
        assert main(["run", path, "--db", str(db), "--headless"]) == 0
    # Not even the database holds it (replies, answers, cache entries).
    for f in tmp_path.glob("d.sqlite*"):
        assert key.encode() not in f.read_bytes(), f.name
    for env_set in (True, False):  # exported with and without the key's variable set
        if not env_set:
            monkeypatch.delenv("ACME_API_KEY")
        out = tmp_path / f"pkg-{env_set}"
        assert main(["export", "--db", str(db), "--out", str(out)]) == 0
        for f in out.iterdir():
            assert key.encode() not in f.read_bytes(), f.name
        assert main(["verify", str(out)]) == 0


# -- claims across pid namespaces -----------------------------------------------------------------


def _foreign_claim(db, sweep_id, *, beat_age_s: float) -> RunnerId:
    """Record a claim as a runner in another pid namespace would: a pid that means nothing
    here, its namespace named, and its heartbeat ``beat_age_s`` old."""
    holder = RunnerId(7, "-:12345|pid:[1]")
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE sweeps SET status='running', runner_pid=?, runner_started=? "
                     "WHERE id=?", [holder.pid, holder.started, sweep_id])
        conn.execute("INSERT OR REPLACE INTO runner_status (sweep_id, pid, started_at, "
                     "updated_at, finished_at, folds_at_start, finished_at_start) "
                     "VALUES (?, ?, ?, ?, NULL, 0, 0)",
                     [sweep_id, holder.pid, time.time() - 60, time.time() - beat_age_s])
    return holder


def test_a_claim_from_another_pid_namespace_holds_while_its_heartbeat_is_fresh(db, capsys):
    sweep_id = run_sweep(db, definition(models=("sim/faithful",), arms=("m",)))
    holder = _foreign_claim(db, sweep_id, beat_age_s=1.0)
    assert not pid_visible(holder) and claim_alive(holder, time.time() - 1, time.time())
    with Store(db) as store:
        assert store.live_status(store.sweep(sweep_id)) == "running"
        with pytest.raises(SweepClaimed):
            store.claim(sweep_id, this_runner())
    assert main(["run", "--resume", sweep_id, "--db", str(db), "--headless"]) == 2
    assert "already being run" in _one_line_error(capsys.readouterr().err)
    # Its heartbeat gone stale, the claim is free again.
    _foreign_claim(db, sweep_id, beat_age_s=600.0)
    with Store(db) as store:
        assert store.live_status(store.sweep(sweep_id)) == "interrupted"
        store.claim(sweep_id, this_runner())


def test_a_runner_beats_while_a_call_is_in_flight(tmp_path):
    import threading

    release = threading.Event()
    seen: list[float] = []

    def answer(n, body):
        release.wait(60)  # hold the first call until the heartbeat has been seen to advance
        return ok()

    db = tmp_path / "d.sqlite"
    with FaultServer(answer) as server:
        path = sweep_file(tmp_path / "s.toml", server.base_url)
        done: list[int] = []
        worker = threading.Thread(target=lambda: done.append(
            main(["run", path, "--db", str(db), "--headless"])))
        worker.start()
        try:
            deadline = time.monotonic() + 60
            while len(set(seen)) < 3 and time.monotonic() < deadline:
                try:
                    with sqlite3.connect(db, timeout=5) as conn:
                        row = conn.execute("SELECT updated_at FROM runner_status").fetchone()
                except sqlite3.Error:
                    row = None
                if row:
                    seen.append(row[0])
                release.wait(0.2)  # poll interval (the event is not set yet)
        finally:
            release.set()
            worker.join(60)
    assert len(set(seen)) >= 3, "the heartbeat did not advance while a call was in flight"
    assert done == [0]


# -- sweeps that cannot succeed --------------------------------------------------------------------


def test_every_row_failing_exits_non_zero_with_a_failed_status(tmp_path, capsys):
    db = tmp_path / "d.sqlite"
    broken = Raw(b"not json at all", headers={"content-type": "application/json"})
    with FaultServer([broken]) as server:
        path = sweep_file(tmp_path / "s.toml", server.base_url, sweep="max_row_retries = 0",
                          arms='["m", "o"]')
        code = main(["run", path, "--db", str(db), "--headless"])
    err = capsys.readouterr().err
    assert code == 1
    assert "will retry" not in err  # max_row_retries = 0: nothing will
    with sqlite3.connect(db) as conn:
        status, reason = conn.execute("SELECT status, stop_reason FROM sweeps").fetchone()
    assert status == "failed" and "every row failed" in reason


def test_will_retry_is_said_only_when_the_row_will_be_retried(tmp_path, capsys):
    db = tmp_path / "d.sqlite"
    broken = Raw(b"not json at all", headers={"content-type": "application/json"})
    with FaultServer([broken, broken, ok()]) as server:
        path = sweep_file(tmp_path / "s.toml", server.base_url, sweep="max_row_retries = 1")
        main(["run", path, "--db", str(db), "--headless", "--json-events"])
    out = capsys.readouterr()
    failed = [json.loads(line) for line in out.out.splitlines()
              if line.startswith("{") and '"row_failed"' in line]
    assert failed and failed[0]["will_retry"] is True
    assert out.err.count("will retry") == sum(e["will_retry"] for e in failed)


def test_a_redirect_is_named_as_one(tmp_path, capsys):
    moved = Raw(b"", status=301, headers={"location": "http://127.0.0.1:1/elsewhere"})
    with FaultServer([moved]) as server:
        path = sweep_file(tmp_path / "s.toml", server.base_url)
        main(["run", path, "--db", str(tmp_path / "d.sqlite"), "--headless"])
    err = capsys.readouterr().err
    assert "redirect not followed" in err and "Expecting value" not in err


def test_a_runner_in_another_pid_namespace_keeps_its_sweep(tmp_path):
    """The real thing, where the machine allows it: a runner started by ``unshare --pid`` (a
    container's view: it is pid 1) is seen as running outside, and a second run refuses."""
    import shutil
    import subprocess
    import sys
    import threading

    if shutil.which("unshare") is None or subprocess.run(
            ["unshare", "--pid", "--fork", "--mount-proc", "true"],
            capture_output=True).returncode != 0:
        pytest.skip("no pid namespaces here")
    release = threading.Event()

    def answer(n, body):
        release.wait(60)  # the first call waits until the outside checks are done
        return ok()

    db = tmp_path / "d.sqlite"
    cli = [sys.executable, "-m", "foldscope.cli.main"]
    with FaultServer(answer) as server:
        path = sweep_file(tmp_path / "s.toml", server.base_url)
        child = subprocess.Popen(["unshare", "--pid", "--fork", "--mount-proc", *cli, "run", path,
                                  "--db", str(db), "--headless"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            beat = None
            for _ in range(300):
                try:
                    with sqlite3.connect(db, timeout=5) as conn:
                        beat = conn.execute("SELECT s.runner_pid, r.updated_at FROM sweeps s JOIN "
                                            "runner_status r ON r.sweep_id = s.id").fetchone()
                except sqlite3.Error:
                    beat = None
                if beat:
                    break
                release.wait(0.1)  # poll (the event is not set yet)
            assert beat is not None, "the runner never wrote its status"
            report = subprocess.run([*cli, "report", "--db", str(db), "--format", "json"],
                                    capture_output=True, text=True)
            assert json.loads(report.stdout[report.stdout.index("{"):])["status"] == "running"
            second = subprocess.run([*cli, "run", path, "--db", str(db), "--headless"],
                                    capture_output=True, text=True)
            assert second.returncode == 2 and "already being run" in second.stderr
        finally:
            release.set()
            out, err = child.communicate(timeout=120)
    assert child.returncode == 0, err
    assert len(server.requests) == 4  # 3 folds and the recall: no call twice, no UNIQUE crash

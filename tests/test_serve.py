"""The app starts as `textual serve "foldscope --db …"` starts it: under Textual's web driver,
with the environment textual-serve gives the command (``TEXTUAL_DRIVER``, ``COLUMNS``, ``ROWS``
...), speaking its packet protocol on stdout and quitting on its ``quit`` message.

textual-serve itself is not a dependency: this drives the app the way its ``AppService`` does
(the same environment, prelude line, packets and quit message), which is the part foldscope
controls; the browser half is textual-serve's own.
"""

import json
import os
import subprocess
import sys
import threading

from conftest import definition, run_sweep


def _packets(stream):
    """Yield (type, payload) packets after the prelude, as textual-serve's AppService reads them."""
    for _ in range(10):
        if stream.readline() == b"__GANGLION__\n":
            break
    else:
        raise AssertionError("the app did not announce itself to the web driver's host")
    while True:
        kind = stream.read(1)
        if not kind:
            return
        size = int.from_bytes(stream.read(4), "big")
        yield kind, stream.read(size)


def test_the_app_starts_under_the_web_driver_textual_serve_uses(tmp_path):
    db = tmp_path / "served.sqlite"
    sweep_id = run_sweep(db, definition(models=("sim/faithful",), arms=("j", "q")))
    env = dict(os.environ, TEXTUAL_DRIVER="textual.drivers.web_driver:WebDriver",
               TEXTUAL_FPS="60", TEXTUAL_COLOR_SYSTEM="truecolor", TERM_PROGRAM="textual",
               COLUMNS="120", ROWS="40")
    command = f'"{sys.executable}" -m foldscope.cli.main --db "{db}" --sweep {sweep_id}'
    proc = subprocess.Popen(command, shell=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
    seen = bytearray()
    metas = []
    try:
        reader = iter(_packets(proc.stdout))
        for kind, payload in reader:
            if kind == b"D":
                seen += payload
            elif kind == b"M":
                metas.append(json.loads(payload))
            if f"sweep {sweep_id}".encode() in seen and b"Pause/resume" in seen:
                break
        assert f"sweep {sweep_id}".encode() in seen, "the sweep screen never drew"
        quit_packet = json.dumps({"type": "quit"}).encode()
        proc.stdin.write(b"M" + len(quit_packet).to_bytes(4, "big") + quit_packet)
        proc.stdin.flush()
        done = threading.Event()

        def drain():
            for kind, payload in reader:
                if kind == b"M":
                    metas.append(json.loads(payload))
            done.set()

        threading.Thread(target=drain, daemon=True).start()
        assert proc.wait(timeout=60) == 0
        done.wait(timeout=10)
        assert {"type": "exit"} in metas
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()

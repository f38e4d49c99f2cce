"""Each command imports only what it uses: ``foldscope --help`` and ``report`` start without the
TUI, the HTTP client, scipy's statistics or numpy's weight (issue 24 item 3).

Checked by what a fresh interpreter holds in ``sys.modules`` after the command ran, not by time.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import definition, run_sweep

NEVER_AT_START = ("textual", "httpx", "rich", "pygments", "scipy", "numpy", "pydantic",
                  "sqlite_utils", "rapidfuzz", "asyncio")
"""What ``foldscope --help`` must not load: it only lists the commands."""

NOT_FOR_A_REPORT = ("textual", "httpx", "rich", "pygments", "scipy.stats", "asyncio",
                    "sqlite_utils", "click", "pluggy")
"""What ``foldscope report`` must not load (scipy.special gives the interval's quantile; the
store's handle is plain sqlite3)."""

NOT_FOR_GRADING = ("textual", "httpx", "rich", "pygments", "scipy", "numpy", "sqlite_utils",
                   "asyncio")


def _loaded_after(args: list[str]) -> tuple[int, set[str], str]:
    code = ("import json, sys\n"
            "from foldscope.cli.main import main\n"
            "try:\n"
            f"    code = main({args!r})\n"
            "except SystemExit as exc:\n"
            "    code = exc.code\n"
            "sys.stdout.flush()\n"
            "print('\\n@@' + json.dumps([code, sorted(sys.modules)]))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    head, _, tail = out.stdout.rpartition("\n@@")
    code, modules = json.loads(tail)
    return int(code or 0), set(modules), head


def _strays(loaded: set[str], banned: tuple[str, ...]) -> list[str]:
    return sorted(m for m in loaded for bad in banned if m == bad or m.startswith(bad + "."))


def test_help_lists_every_command_without_loading_them():
    code, loaded, out = _loaded_after(["--help"])
    assert code == 0
    for command in ("run", "report", "check", "export", "reindex", "audit", "stats", "grade",
                    "sim", "probe"):
        assert command in out
    assert not _strays(loaded, NEVER_AT_START)


@pytest.fixture(scope="module")
def sweep_db(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("cli-imports") / "sweep.sqlite"
    run_sweep(db, definition(arms=("j",), models=("sim/faithful",)))
    return db


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_report_needs_no_tui_client_or_scipy_stats(sweep_db, fmt):
    code, loaded, out = _loaded_after(["report", "--db", str(sweep_db), "--format", fmt])
    assert code == 0 and "sim/faithful" in out
    assert not _strays(loaded, NOT_FOR_A_REPORT)


def test_grade_needs_neither_the_store_nor_scipy(tmp_path):
    answer = tmp_path / "answer.txt"
    answer.write_text("ledger service port: 62114\n")
    code, loaded, out = _loaded_after(["grade", "--scenario", "kestrel", "--answer", str(answer),
                                       "--json"])
    assert code == 0 and json.loads(out)
    assert not _strays(loaded, NOT_FOR_GRADING)


_LEFT_AT_EXIT = r"""
import os, sys

class Cycle:
    def __del__(self):
        os.write(2, b"collected at exit\n")

if sys.argv[1] == "command":
    from foldscope.cli.main import main

    main(["arms"])
cycle = Cycle()
cycle.itself = cycle
del cycle  # garbage only the cyclic collector can free
"""


def test_a_command_s_exit_skips_the_last_collections():
    # The interpreter collects cyclic garbage once more at exit (1.7 % of a cold report's
    # instructions): after a foldscope command it does not; without one it does.
    import subprocess
    import sys

    def stderr(mode: str) -> str:
        return subprocess.run([sys.executable, "-c", _LEFT_AT_EXIT, mode], check=True,
                              capture_output=True, text=True).stderr

    assert stderr("plain") == "collected at exit\n"
    assert stderr("command") == ""

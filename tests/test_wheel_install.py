"""The wheel is self-contained: built, installed into a fresh venv and run outside the repository,
it finds its scenarios and themes and runs a one-row sweep.

No network: the wheel is built without build isolation, installed with ``--no-deps``, and the
fresh venv sees the test venv's installed dependencies through a ``.pth`` line (not its editable
foldscope, whose import hook only that venv's own ``.pth`` installs).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _run(args: list[str | Path], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    out = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, f"{args}: exit {out.returncode}\n{out.stdout}\n{out.stderr}"
    return out


def test_wheel_installs_and_runs_outside_the_repository(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "FOLDSCOPE_SCENARIOS", "FOLDSCOPE_THEMES")}
    # Build from a copy so the checkout gets no build/ folder; symlinks copied as links, as the
    # build backend sees them in a checkout.
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, src / name)
    for name in ("foldscope", "scenarios", "themes"):
        shutil.copytree(REPO / name, src / name, symlinks=True,
                        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    dist = tmp_path / "dist"
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
          "-q", "-w", dist, src], tmp_path, env)
    (wheel,) = dist.glob("foldscope-*.whl")

    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", venv], tmp_path, env)
    python = venv / "bin" / "python"
    _run([sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index",
          "-q", wheel], tmp_path, env)
    inner_site = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                           tmp_path, env).stdout.strip())
    (inner_site / "outer-deps.pth").write_text(sysconfig.get_path("purelib") + "\n")

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    where = _run([python, "-c", "import foldscope; print(foldscope.__file__)"], elsewhere, env)
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout

    foldscope = venv / "bin" / "foldscope"
    shown = _run([foldscope, "scenario", "show", "kestrel"], elsewhere, env).stdout
    assert "kestrel" in shown and "62114" in shown
    listed = _run([foldscope, "scenario", "list"], elsewhere, env).stdout
    assert {line.split()[0] for line in listed.splitlines()} == {"kestrel", "kestrel-single", "smoke", "tiny"}

    db = elsewhere / "smoke.sqlite"
    _run([foldscope, "run", "--scenario", "smoke", "--models", "sim/faithful", "--arms", "j",
          "--repeats", "1", "--headless", "--db", db], elsewhere, env)
    report = json.loads(_run([foldscope, "report", "--db", db, "--format", "json"], elsewhere,
                             env).stdout)
    assert report["status"] == "done" and report["scenario"] == "smoke"
    assert report["progress"]["done"] == 1 and report["progress"]["failed"] == 0
    themes = _run([python, "-c", "from foldscope.ui.theme import discover_themes; "
                   "t, e = discover_themes(); print(sorted(x.name for x in t), e)"], elsewhere, env)
    assert "foldscope-light" in themes.stdout and themes.stdout.strip().endswith("[]")

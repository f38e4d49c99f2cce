"""Architecture guard: foldscope.core imports no textual, httpx or sqlite; engine no textual."""

import json
import subprocess
import sys

FORBIDDEN_CORE = ("textual", "httpx", "sqlite3", "sqlite_utils", "rich")


def _modules_after(import_line: str) -> set[str]:
    code = f"import sys, json; {import_line}; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return set(json.loads(out.stdout))


def test_core_is_pure():
    import pkgutil

    import foldscope.core as core

    names = [f"foldscope.core.{m.name}" for m in pkgutil.iter_modules(core.__path__)]
    loaded = _modules_after("; ".join(f"import {n}" for n in names))
    leaked = {m for m in loaded for bad in FORBIDDEN_CORE if m == bad or m.startswith(bad + ".")}
    assert not leaked, f"foldscope.core pulled in {sorted(leaked)}"


def test_engine_never_imports_textual():
    import pkgutil

    import foldscope.engine as engine

    names = [f"foldscope.engine.{m.name}" for m in pkgutil.iter_modules(engine.__path__)]
    loaded = _modules_after("; ".join(f"import {n}" for n in names))
    assert not {m for m in loaded if m == "textual" or m.startswith("textual.")}


def _package_modules(package: str) -> list[str]:
    import importlib
    import pkgutil

    pkg = importlib.import_module(package)
    return [package] + [f"{package}.{m.name}" for m in pkgutil.iter_modules(pkg.__path__)]


def test_simulator_loads_only_core_and_the_wire_module():
    loaded = _modules_after("; ".join(f"import {n}" for n in _package_modules("foldscope.engine.sim")))
    allowed = ("foldscope.core", "foldscope.engine.sim", "foldscope.engine.wire")
    ours = {m for m in loaded if m.startswith("foldscope.") and m not in ("foldscope.engine",)}
    stray = {m for m in ours if not any(m == a or m.startswith(a + ".") for a in allowed)}
    assert not stray, f"the simulator pulled in {sorted(stray)}"


def test_real_client_loads_nothing_of_the_simulator():
    loaded = _modules_after("; ".join(f"import {n}" for n in _package_modules("foldscope.engine.client")))
    assert "foldscope.engine.client.model_client" in loaded
    stray = {m for m in loaded if m.startswith(("foldscope.engine.sim", "foldscope.engine.connect",
                                                "foldscope.engine.models"))}
    assert not stray, f"the client pulled in {sorted(stray)}"


def test_a_report_loads_neither_the_audit_nor_scipy_special():
    # `foldscope report` is a cold start: the store loads the audit module (its identifier
    # rules) only when an audit is read, and the statistics take scipy.special's compiled
    # functions without the package (core.distributions).
    loaded = _modules_after(
        "from foldscope.engine.report import sweep_report; from foldscope.engine.integrity "
        "import refuse_unsound; from foldscope.core.distributions import t_ppf; t_ppf(0.975, 16)")
    assert "foldscope.engine.store" in loaded and "numpy" in loaded  # the figures' functions came
    assert "foldscope.core.audit" not in loaded and "scipy.special" not in loaded

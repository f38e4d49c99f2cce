"""The normal and Student-t distribution functions the statistics use, loaded only when asked.

``scipy.stats`` costs over a second to import (it loads every distribution), while a command
such as ``foldscope report`` needs a handful of quantiles. These call the very special functions
``scipy.stats.norm`` and ``scipy.stats.t`` evaluate (``ndtri``, ``stdtr``, ``stdtrit``), imported
on first use, so every figure is bit for bit what ``scipy.stats`` gives, with its boundary rules
(``nan`` outside the domain, ``±inf`` at probability 0 and 1).
"""

from __future__ import annotations

import importlib
import importlib.util
import math
import os
import sys
import threading
from types import ModuleType

NAN = float("nan")


_SPECIAL_LOCK = threading.Lock()

_UFUNCS = "scipy.special._ufuncs"
"""The compiled module holding ``ndtri``, ``stdtr`` and ``stdtrit``: the very functions
``scipy.special`` exports (and ``scipy.stats.norm``/``t`` evaluate)."""


_LOADED: list[ModuleType] = []
"""The special functions' module once loaded (by the first caller; others wait for it)."""


def _special() -> ModuleType:
    if _LOADED:
        return _LOADED[0]
    with _SPECIAL_LOCK:  # the preload thread and a first figure may both ask: one loads
        if not _LOADED:
            alone = _ufuncs_alone()
            if alone is None:
                import scipy.special

                alone = scipy.special
            _LOADED.append(alone)
    return _LOADED[0]


def _ufuncs_alone() -> ModuleType | None:
    """``scipy.special``'s compiled ufuncs module, loaded without the package's own ``__init__``
    (None when that cannot be done, or ``scipy.special`` is in already).

    The package's ``__init__`` imports every special function's Python layer and the array-API
    dispatch machinery (numpy.testing among it): about 300 ms of CPU of which the compiled
    module is half. Its own imports are relative, so while it loads a bare stand-in holds the
    package's place in ``sys.modules``, then everything loaded under that name is taken out
    again: a later ``import scipy.special`` loads the package as if this never happened.
    """
    if "scipy.special" in sys.modules:
        return None
    try:
        spec = importlib.util.find_spec("scipy")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    before = set(sys.modules)
    stand_in = ModuleType("scipy.special")
    stand_in.__path__ = [os.path.join(p, "special") for p in spec.submodule_search_locations]
    stand_in.__package__ = "scipy.special"
    sys.modules["scipy.special"] = stand_in
    try:
        ufuncs = importlib.import_module(_UFUNCS)
        if not all(callable(getattr(ufuncs, name, None)) for name in ("ndtri", "stdtr", "stdtrit")):
            return None
        return ufuncs
    except Exception:  # noqa: BLE001 - another layout of scipy: its ordinary import serves
        return None
    finally:
        for name in set(sys.modules) - before:
            if name == "scipy.special" or name.startswith("scipy.special."):
                del sys.modules[name]
        scipy = sys.modules.get("scipy")  # (its __getattr__ would import the package: not used)
        if scipy is not None and vars(scipy).get("special") is stand_in:
            delattr(scipy, "special")


def preload() -> threading.Thread:
    """Import the special functions on a thread of their own, started now (a command that
    will need them reads its database meanwhile); the first figure waits for it if need be."""
    thread = threading.Thread(target=_special, name="foldscope-import-scipy", daemon=True)
    thread.start()
    return thread


def norm_ppf(q: float) -> float:
    """The standard normal quantile (``scipy.stats.norm.ppf``)."""
    if math.isnan(q) or not 0 <= q <= 1:
        return NAN
    if q == 0:
        return -math.inf
    if q == 1:
        return math.inf
    return float(_special().ndtri(q))


def t_ppf(q: float, df: float) -> float:
    """Student's t quantile with ``df`` degrees of freedom (``scipy.stats.t.ppf``)."""
    if math.isnan(q) or math.isnan(df) or not df > 0 or not 0 <= q <= 1:
        return NAN
    if q == 0:
        return -math.inf
    if q == 1:
        return math.inf
    return float(_special().stdtrit(df, q))


def t_cdf(x: float, df: float) -> float:
    """Student's t distribution function (``scipy.stats.t.cdf``)."""
    if math.isnan(x) or math.isnan(df) or not df > 0:
        return NAN
    if x == math.inf:
        return 1.0
    if x == -math.inf:
        return 0.0
    return float(_special().stdtr(df, x))


def t_sf(x: float, df: float) -> float:
    """Student's t survival function, 1 − cdf (``scipy.stats.t.sf``)."""
    if math.isnan(x) or math.isnan(df) or not df > 0:
        return NAN
    if x == math.inf:
        return 0.0
    if x == -math.inf:
        return 1.0
    return float(_special().stdtr(df, -x))

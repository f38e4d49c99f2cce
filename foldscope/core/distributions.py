"""The normal and Student-t distribution functions the statistics use, loaded only when asked.

``scipy.stats`` costs over a second to import (it loads every distribution), while a command
such as ``foldscope report`` needs a handful of quantiles. These call the very special functions
``scipy.stats.norm`` and ``scipy.stats.t`` evaluate (``ndtri``, ``stdtr``, ``stdtrit``), imported
on first use, so every figure is bit for bit what ``scipy.stats`` gives, with its boundary rules
(``nan`` outside the domain, ``±inf`` at probability 0 and 1).
"""

from __future__ import annotations

import math
import threading
from functools import cache
from types import ModuleType

NAN = float("nan")


@cache
def _special() -> ModuleType:
    import scipy.special

    special: ModuleType = scipy.special
    return special


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

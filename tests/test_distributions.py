"""core.distributions gives exactly what scipy.stats gives, boundaries included."""

import math

from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from foldscope.core import distributions as d

probabilities = st.one_of(st.floats(0, 1), st.sampled_from([0.0, 1.0, -0.5, 1.5, math.nan]))
dfs = st.one_of(st.integers(1, 10_000), st.floats(0.05, 1e6),
                st.sampled_from([0, -1, math.nan, 0.5]))
xs = st.one_of(st.floats(-1e6, 1e6), st.sampled_from([math.inf, -math.inf, math.nan, 0.0, -0.0]))


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


@settings(max_examples=300, deadline=None)
@given(probabilities, dfs, xs)
def test_bit_for_bit_scipy_stats(q: float, df: float, x: float) -> None:
    assert same(d.norm_ppf(q), float(stats.norm.ppf(q)))
    assert same(d.t_ppf(q, df), float(stats.t.ppf(q, df)))
    assert same(d.t_cdf(x, df), float(stats.t.cdf(x, df)))
    assert same(d.t_sf(x, df), float(stats.t.sf(x, df)))


_FRESH = r"""
import json, math, sys
from foldscope.core import distributions as d

points = [(q, df) for q in (0.0, 1e-300, 1e-12, 0.025, 0.5, 0.975, 0.999999, 1.0)
          for df in (0.5, 1, 2, 16, 593, 1018, 1e6)]
xs = [-1e6, -9.87985288926415, -1.0, 0.0, 1.2250780431792185, 37.5, math.inf]
mine = ([d.norm_ppf(q) for q, _ in points] + [d.t_ppf(q, df) for q, df in points]
        + [d.t_cdf(x, df) for x in xs for _, df in points[:7]]
        + [d.t_sf(x, df) for x in xs for _, df in points[:7]])
alone = d._special().__name__ == "scipy.special._ufuncs" and "scipy.special" not in sys.modules
from scipy import special, stats
theirs = ([float(stats.norm.ppf(q)) for q, _ in points]
          + [float(stats.t.ppf(q, df)) for q, df in points]
          + [float(stats.t.cdf(x, df)) for x in xs for _, df in points[:7]]
          + [float(stats.t.sf(x, df)) for x in xs for _, df in points[:7]])
print(json.dumps({"alone": alone, "same": [repr(a) == repr(b) for a, b in zip(mine, theirs)],
                  "package": float(special.gamma(5.0)), "n": len(mine)}))
"""


def test_the_ufuncs_loaded_alone_are_scipys_and_leave_its_import_whole() -> None:
    # In a fresh interpreter (here scipy.stats is in already, so the light load is not tried):
    # the special functions come from the compiled module without scipy.special's __init__,
    # give what scipy.stats gives bit for bit, and a later `import scipy.special` is whole.
    import json
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _FRESH], check=True, capture_output=True,
                         text=True)
    got = json.loads(out.stdout)
    assert got["alone"] is True
    assert got["n"] == len(got["same"]) and all(got["same"])
    assert got["package"] == 24.0

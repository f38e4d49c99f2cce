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

"""Properties of the pass@k family and the sign-flip test that must hold for any data."""
import itertools
import numpy as np
from hypothesis import given, settings, strategies as st
from whilelab.stats import pass_at_k, pass_pow_k, sign_flip_p, bootstrap_ci, wilson

tasks = st.integers(1, 12).flatmap(lambda n: st.lists(st.lists(st.sampled_from([0.0, 1.0]), min_size=n, max_size=n), min_size=1, max_size=20))

@settings(max_examples=200, deadline=None)
@given(tasks)
def test_pass_family_bounds_and_order(R):
    R = np.array(R); n = R.shape[1]
    at = [float(pass_at_k(R, k)) for k in range(1, n + 1)]
    pw = [float(pass_pow_k(R, k)) for k in range(1, n + 1)]
    assert all(0 <= x <= 1 for x in at + pw)
    assert all(a <= b + 1e-12 for a, b in zip(at, at[1:]))        # pass@k grows with k
    assert all(a + 1e-12 >= b for a, b in zip(pw, pw[1:]))        # pass^k shrinks with k
    assert abs(at[0] - pw[0]) < 1e-12 and abs(at[0] - R.mean()) < 1e-12

@settings(max_examples=60, deadline=None)
@given(tasks, st.integers(1, 4))
def test_pass_at_k_equals_brute_force_over_subsets(R, k):
    R = np.array(R); n = R.shape[1]
    if k > n: return
    brute = np.mean([np.mean([max(row[list(s)]) for s in itertools.combinations(range(n), k)]) for row in R])
    assert abs(float(pass_at_k(R, k)) - brute) < 1e-9

@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(-5, 5, allow_nan=False), min_size=1, max_size=40))
def test_sign_flip_p_is_a_probability_and_symmetric(d):
    p, _ = sign_flip_p(d, n_resamples=500)
    q, _ = sign_flip_p([-x for x in d], n_resamples=500)
    assert 0 < p <= 1 and abs(p - q) < 1e-12

@settings(max_examples=100, deadline=None)
@given(st.integers(0, 200).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_contains_the_estimate(kn):
    k, n = kn
    w = wilson(k, n)
    assert 0 <= w.low <= w.high <= 1 and (n == 0 or w.low - 1e-12 <= k / n <= w.high + 1e-12)

@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0, 1, allow_nan=False), min_size=2, max_size=50))
def test_bootstrap_interval_brackets_the_mean(x):
    for m in ("percentile", "bca"):
        ci = bootstrap_ci(x, n_resamples=400, method=m)
        assert abs(ci.estimate - sum(x) / len(x)) < 1e-9                       # the point is the sample mean
        assert ci.high > ci.low and 0 <= ci.low <= ci.estimate + 1e-9 and ci.estimate <= ci.high + 2e-9 <= 1 + 3e-9, (m, ci)  # never a point
        if np.ptp(x) > 1e-9: assert min(x) - 1e-9 <= ci.low and ci.high <= max(x) + 3e-9, (m, ci)   # the bootstrap stays in the data

@settings(max_examples=80, deadline=None)
@given(st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=60))
def test_score_interval_holds_the_mean_inside_the_bounds_and_is_never_a_point(x):
    from whilelab.stats import score_interval
    ci = score_interval(x)
    assert 0 <= ci.low <= ci.estimate + 1e-9 and ci.estimate - 1e-9 <= ci.high <= 1 and ci.high > ci.low, ci

@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-1, 1, allow_nan=False), min_size=2, max_size=14))
def test_a_paired_verdict_needs_both_tests(d):
    from whilelab.stats import paired_test
    r = paired_test(np.zeros(len(d)), np.array(d), n_resamples=500)
    assert r.p_value >= r.p_sign_flip and r.p_value >= r.p_bootstrap_t and r.interval.high > r.interval.low

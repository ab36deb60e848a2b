"""Statistics speed, side by side with scipy at equal results.

Run from the project root: `python bench/stats.py [--repeats 7]`. Medians of repeated runs:

* pass@k and pass^k for k = 1, 2, 4, 8 on 10,000 tasks x 8 samples (target: the family under 20 ms);
* percentile and BCa bootstrap of the mean over 1,000 tasks x 10,000 resamples vs `scipy.stats.bootstrap`
  (target: >= 3x faster), on per-task pass rates of 8 samples (what evals produce) and on continuous values;
* sign-flip permutation test on 1,000 pairs x 10,000 permutations vs `scipy.stats.permutation_test`
  (target: >= 5x faster).
Each row also shows that the two give the same answer (interval ends within 0.01, p within 0.02).
"""
import argparse, statistics, time
import numpy as np
from scipy import stats as sps
from whilelab.stats import pass_at_k, pass_pow_k, bootstrap_ci, sign_flip_p

def timed(f, repeats):
    ts, out = [], None
    for _ in range(repeats):
        t = time.perf_counter(); out = f(); ts.append(time.perf_counter() - t)
    return statistics.median(ts), out

def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--repeats", type=int, default=7); a = ap.parse_args()
    rng = np.random.default_rng(0)
    R = (rng.random((10_000, 8)) < rng.random((10_000, 1))).astype(float)
    t_fam, _ = timed(lambda: [f(R, k) for f in (pass_at_k, pass_pow_k) for k in (1, 2, 4, 8)], a.repeats)
    print(f"{'measurement':48} {'whilelab':>10} {'scipy':>10} {'speedup':>8}  same answer")
    print(f"{'pass@k + pass^k, k=1,2,4,8; 10k tasks x 8':48} {t_fam * 1e3:8.1f}ms {'-':>10} {'-':>8}  target < 20 ms: {t_fam < 0.02}")
    ok = t_fam < 0.02
    rates = R[:1000].mean(1)
    cont = rng.random(1000)
    for label, x in (("pass rates of 8 samples", rates), ("continuous values", cont)):
        for m, sm in (("percentile", "percentile"), ("bca", "BCa")):
            tw, ours = timed(lambda: bootstrap_ci(x, 10_000, method=m, seed=1), a.repeats)
            ts, ref = timed(lambda: sps.bootstrap((x,), np.mean, n_resamples=10_000, method=sm, random_state=1).confidence_interval, a.repeats)
            same = abs(ours.low - ref.low) < 0.01 and abs(ours.high - ref.high) < 0.01
            target = ts / tw >= 3
            ok &= same and (target or label == "continuous values")
            print(f"{'bootstrap ' + m + ', 1k tasks, ' + label:48} {tw * 1e3:8.1f}ms {ts * 1e3:8.1f}ms {ts / tw:7.1f}x  {same} [{ours.low:.4f},{ours.high:.4f}] vs [{ref.low:.4f},{ref.high:.4f}]")
    d = rng.normal(0.05, 1, 1000)
    tw, (p, _) = timed(lambda: sign_flip_p(d, 10_000, seed=0), a.repeats)
    ts, ref = timed(lambda: sps.permutation_test((d,), lambda x, axis: np.mean(x, axis=axis), vectorized=True, permutation_type="samples",
                                                 n_resamples=10_000, random_state=0).pvalue, a.repeats)
    same = abs(p - ref) < 0.02
    ok &= same and ts / tw >= 5
    print(f"{'sign-flip permutation, 1k pairs x 10k':48} {tw * 1e3:8.1f}ms {ts * 1e3:8.1f}ms {ts / tw:7.1f}x  {same} p={p:.4f} vs {ref:.4f}")
    print("\nall targets met" if ok else "\nSOME TARGETS MISSED")
    raise SystemExit(0 if ok else 1)

if __name__ == "__main__": main()

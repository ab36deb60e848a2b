"""Calibration of whilelab's statistics: does a 95% interval hold the truth in 95% of runs, and does a 5% test
reject 5% of the time when nothing changed? A Monte Carlo study over the cases researchers meet.

Run from the project root: `python bench/calibration.py [--reps 500] [--workers 2] [--markdown]`
(about 5 minutes on 2 cores).
Each row simulates `reps` evals from a known truth (task difficulties drawn from a Beta distribution, k attempts
each) and runs whilelab's public functions on each, side by side with the peer a researcher would otherwise use
(the percentile bootstrap, the Wald kappa interval, the sign-flip test alone, rows resampled as if independent,
the normal-theory power formula). It prints nominal vs measured with the Monte Carlo standard error, and `ok`
when the measured value is within 2 s.e. of nominal or on the safe side (coverage above, error rate below).
Exit status 1 if any of whilelab's rows is not ok.
"""

import argparse, math, sys, time
from concurrent.futures import ProcessPoolExecutor
import numpy as np
from scipy import special

B = 1000  # bootstrap resamples inside each simulated eval: enough for a 95% interval's ends, and 1,000s of evals run
LEVEL = 0.95


def _rates(rng, n, k, a, b):
    "n tasks with pass probabilities from Beta(a, b), each tried k times: a tasks x attempts 0/1 matrix."
    p = rng.beta(a, b, n)
    return (rng.random((n, k)) < p[:, None]).astype(float)


def old_percentile(x):
    "The peer: the percentile bootstrap as whilelab had it, which gives the point itself for data with no spread."
    from whilelab.stats import bootstrap_ci

    x = np.asarray(x, float)
    return (x[0], x[0]) if np.all(x == x[0]) else (lambda i: (i.low, i.high))(bootstrap_ci(x, B, method="percentile"))


def _beta_pow(a, b, k):
    return math.exp(special.betaln(a + k, b) - special.betaln(a, b))  # E[p^k], p ~ Beta(a, b)


# --- each cell: f(rng) -> (ours_hit, peer_hit); `truth` noted for the table ---------------------------------------


def pass_cell(kind, n, k, a, b):
    from whilelab.stats import pass_interval, pass_at_k, pass_pow_k

    truth = a / (a + b) if kind == "at" else _beta_pow(a, b, k)

    def run(rng):
        R = _rates(rng, n, k, a, b)
        kk = 1 if kind == "at" else k
        ours = pass_interval(R, kk, kind=kind)
        lo, hi = old_percentile((pass_at_k if kind == "at" else pass_pow_k)(R, kk, per_task=True).values)
        return ours.low <= truth <= ours.high, lo <= truth <= hi

    return run


def paired_null_cell(n, k):
    "No change: before and after share each task's pass probability; does the interval hold 0?"
    from whilelab.stats import paired_test

    def run(rng):
        p = rng.beta(2, 2, n)
        before, after = ((rng.random((n, k)) < p[:, None]).astype(float) for _ in range(2))
        ours = paired_test(before, after, n_resamples=B)
        lo, hi = old_percentile(after.mean(1) - before.mean(1))
        return ours.interval.low <= 0 <= ours.interval.high, lo <= 0 <= hi

    return run


def verdict_null_cell(n, k):
    "No change: how often does delta_report say ship or regress? (hit = a false verdict; nominal at most 5%.)"
    from whilelab.delta import delta_report

    def rows(R):
        return [
            {"situation_id": f"s{i}", "phrasing": 0, "sample": j, "reward": float(R[i, j])}
            for i in range(R.shape[0])
            for j in range(k)
        ]

    def run(rng):
        p = rng.beta(2, 2, n)
        before, after = ((rng.random((n, k)) < p[:, None]).astype(float) for _ in range(2))
        rep = delta_report(rows(before), rows(after), markers={}, n_resamples=B, seed=int(rng.integers(1 << 30)))
        lo, hi = old_percentile(after.mean(1) - before.mean(1))  # the old rule: the percentile interval alone
        return rep.verdict != "inconclusive", lo > 0 or hi < 0

    return run


def sign_flip_cell(n, skewed):
    "No change in the mean; symmetric or skewed (two tasks in ten gain 0.8, eight lose 0.2). hit = p <= 0.05."
    from whilelab.stats import paired_test, sign_flip_p

    def run(rng):
        d = np.where(rng.random(n) < 0.2, 0.8, -0.2) if skewed else np.clip(rng.normal(0, 0.3, n), -1, 1)
        return paired_test(np.zeros(n), d, n_resamples=B).p_value <= 0.05, sign_flip_p(d, B)[0] <= 0.05

    return run


def kappa_cell(n, q, prev=0.4):
    "Gold pass with chance `prev`; the judge agrees with chance q on each row. Coverage of the population kappa."
    from whilelab.stats import cohens_kappa

    pj = prev * q + (1 - prev) * (1 - q)
    pe = prev * pj + (1 - prev) * (1 - pj)
    truth = (q - pe) / (1 - pe)

    def run(rng):
        g = rng.random(n) < prev
        j = np.where(rng.random(n) < q, g, ~g)
        k = cohens_kappa(g.astype(int), j.astype(int))
        if not np.isfinite(k.kappa):
            return True, True
        wald = (max(-1, k.kappa - 1.959964 * k.se), min(1, k.kappa + 1.959964 * k.se))
        return k.low <= truth <= k.high, wald[0] <= truth <= wald[1]

    return run


def wilson_cell(n, p):
    from whilelab.stats import wilson

    def run(rng):
        s = int(rng.binomial(n, p))
        w = wilson(s, n)
        ph = s / n
        h = 1.959964 * math.sqrt(ph * (1 - ph) / n)
        return w.low <= p <= w.high, ph - h <= p <= ph + h  # peer: the Wald interval

    return run


def agreement_cell(sits, per):
    "Judge agreement over rows that share situations (8 rollouts each); coverage of the population agreement."
    from whilelab.stats import clustered_wilson, wilson

    truth = 0.85

    def run(rng):
        a = rng.beta(8.5, 1.5, sits)  # each situation's own agreement rate, mean 0.85
        hits = rng.random((sits, per)) < a[:, None]
        ids = np.repeat(np.arange(sits), per)
        ours, peer = clustered_wilson(hits.ravel(), ids), wilson(int(hits.sum()), hits.size)
        return ours.low <= truth <= ours.high, peer.low <= truth <= peer.high

    return run


def corrected_cell(sits, per, sens, spec):
    "Rogan-Gladen corrected pass rate, `per` correlated rollouts per situation: situations resampled vs rows resampled."
    from whilelab.grade import _corrected

    truth = 0.5

    def run(rng):
        def half():
            p = rng.beta(2, 2, sits)
            g = rng.random((sits, per)) < p[:, None]
            j = np.where(g, rng.random(g.shape) < sens, rng.random(g.shape) > spec)
            return g.ravel(), j.ravel(), np.repeat(np.arange(sits), per)

        (g1, j1, s1), (_, j2, s2) = half(), half()
        seed = int(rng.integers(1 << 30))
        ours, _ = _corrected(g1, j1, s1, j2, s2, B, seed, 0.0)
        rows1, rows2 = np.arange(len(g1)), np.arange(len(j2))  # the peer: each row its own cluster
        peer, _ = _corrected(g1, j1, rows1, j2, rows2, B, seed, 0.0)
        hit = lambda iv: iv is not None and iv.low <= truth <= iv.high
        return hit(ours), hit(peer)

    return run


def uninformative_cell(sits, per, J):
    "A judge with sens + spec - 1 = J: how often is a corrected number given? (hit = a number; ours should refuse.)"
    from whilelab.grade import _corrected
    from whilelab.defaults import TrustOptions

    sens = spec = (1 + J) / 2

    def run(rng):
        p = rng.beta(2, 2, sits)
        g = (rng.random((sits, per)) < p[:, None]).ravel()
        j = np.where(g, rng.random(g.size) < sens, rng.random(g.size) > spec)
        ids = np.repeat(np.arange(sits), per)
        seed = int(rng.integers(1 << 30))
        ours, _ = _corrected(g, j, ids, j, ids, B, seed, TrustOptions().min_informedness)
        peer, _ = _corrected(g, j, ids, j, ids, B, seed, -1.0)
        return ours is not None, peer is not None

    return run


def power_cell(n, up, down):
    "Pass/fail tasks, once per agent: does predicted power match how often the test rejects? hit = reject."
    from whilelab.stats import sign_flip_p

    def run(rng):
        d = rng.choice([1.0, -1.0, 0.0], size=n, p=[up, down, 1 - up - down])
        return sign_flip_p(d, B)[0] <= 0.05, False

    return run


# name, function, nominal, kind: 'coverage' (safe side: higher), 'rate' (safe side: lower), 'power' (two-sided: match)
def cells():
    from whilelab.stats import power_binary, power_paired

    out = [
        ("pass@1, 20 tasks x 4, Beta(2,2)", pass_cell("at", 20, 4, 2, 2), LEVEL, "coverage"),
        ("pass@1, 20 tasks x 4, Beta(0.5,3)", pass_cell("at", 20, 4, 0.5, 3), LEVEL, "coverage"),
        ("pass@1, 100 tasks x 4, Beta(0.5,3)", pass_cell("at", 100, 4, 0.5, 3), LEVEL, "coverage"),
        ("pass^4, 20 tasks x 4, Beta(0.5,3) (rare)", pass_cell("pow", 20, 4, 0.5, 3), LEVEL, "coverage"),
        ("pass^4, 100 tasks x 4, Beta(0.5,3) (rare)", pass_cell("pow", 100, 4, 0.5, 3), LEVEL, "coverage"),
        ("pass^8, 1000 tasks x 8, Beta(0.5,3) (rare)", pass_cell("pow", 1000, 8, 0.5, 3), LEVEL, "coverage"),
        ("paired interval, no change, 10 tasks x 4", paired_null_cell(10, 4), LEVEL, "coverage"),
        ("paired interval, no change, 30 tasks x 4", paired_null_cell(30, 4), LEVEL, "coverage"),
        ("delta verdict, no change, 10 tasks x 4", verdict_null_cell(10, 4), 0.05, "rate"),
        ("delta verdict, no change, 30 tasks x 4", verdict_null_cell(30, 4), 0.05, "rate"),
        ("p <= 0.05, symmetric null, 10 tasks", sign_flip_cell(10, False), 0.05, "rate"),
        ("p <= 0.05, skewed null, 10 tasks", sign_flip_cell(10, True), 0.05, "rate"),
        ("p <= 0.05, skewed null, 30 tasks", sign_flip_cell(30, True), 0.05, "rate"),
        ("kappa, 50 items, kappa 0.69", kappa_cell(50, 0.85), LEVEL, "coverage"),
        ("kappa, 50 items, kappa 0.79", kappa_cell(50, 0.90), LEVEL, "coverage"),
        ("kappa, 50 items, kappa 0.95", kappa_cell(50, 0.975), LEVEL, "coverage"),
        ("Wilson, 50 items, p = 0.1", wilson_cell(50, 0.1), LEVEL, "coverage"),
        ("agreement, 40 situations x 8 rows", agreement_cell(40, 8), LEVEL, "coverage"),
        ("corrected pass rate, 60 situations x 8 rows", corrected_cell(60, 8, 0.9, 0.85), LEVEL, "coverage"),
        ("corrected number given, informedness 0.05", uninformative_cell(60, 8, 0.05), 0.05, "rate"),
    ]
    for n in (10, 30):
        up, down = 0.3, 0.05
        sd = math.sqrt(up + down - (up - down) ** 2)
        out.append(
            (
                f"power, pass/fail, {n} tasks, +0.25",
                power_cell(n, up, down),
                (power_binary(n, up, down), power_paired(n, up - down, sd)),
                "power",
            )
        )
    return out


def run_cell(args):
    i, reps, seed = args
    name, f, nominal, kind = cells()[i]
    t = time.perf_counter()
    hits = np.array([f(np.random.default_rng([seed, i, r])) for r in range(reps)], dtype=float)
    return i, hits.mean(0), time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=500)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--only", type=str, default="")
    a = ap.parse_args()
    cs = cells()
    todo = [i for i, c in enumerate(cs) if a.only.lower() in c[0].lower()]
    t0 = time.perf_counter()
    with ProcessPoolExecutor(a.workers) as ex:
        res = {i: (m, s) for i, m, s in ex.map(run_cell, [(i, a.reps, a.seed) for i in todo])}
    bad = 0
    head = ["measurement", "nominal", "whilelab", "+- 2 s.e.", "peer", "peer is", "whilelab is"]
    rows = []
    for i in todo:
        name, _, nominal, kind = cs[i]
        (ours, peer), secs = res[i]
        if kind == "power":
            predicted, peer_pred = nominal
            se = math.sqrt(predicted * (1 - predicted) / a.reps)
            ok = abs(ours - predicted) <= 2 * se
            rows.append(
                [
                    name,
                    f"{predicted:.3f} (exact)",
                    f"{ours:.3f}",
                    f"{2 * se:.3f}",
                    f"{peer_pred:.3f} (t formula)",
                    "predicted",
                    "ok" if ok else "OFF",
                ]
            )
        else:
            se = math.sqrt(nominal * (1 - nominal) / a.reps)
            ok = ours >= nominal - 2 * se if kind == "coverage" else ours <= nominal + 2 * se
            safe = (ours > nominal + 2 * se) if kind == "coverage" else (ours < nominal - 2 * se)
            peer_name = {"coverage": "percentile bootstrap"}.get(kind, "")
            rows.append(
                [
                    name,
                    f"{nominal:.2f}",
                    f"{ours:.3f}",
                    f"{2 * se:.3f}",
                    f"{peer:.3f}",
                    "measured",
                    ("ok, conservative" if safe else "ok") if ok else "UNDER" if kind == "coverage" else "OVER",
                ]
            )
        bad += not ok
    widths = [max(len(str(r[j])) for r in rows + [head]) for j in range(len(head))]
    if a.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "|".join("---" for _ in head) + "|")
        for r in rows:
            print("| " + " | ".join(r) + " |")
    else:
        print("  ".join(h.ljust(w) for h, w in zip(head, widths)))
        for r in rows:
            print("  ".join(str(x).ljust(w) for x, w in zip(r, widths)))
    print(
        f"\n{len(todo)} measurements x {a.reps} simulated evals in {time.perf_counter() - t0:.0f} s "
        f"on {a.workers} workers; "
        f"{'all ok' if not bad else f'{bad} not ok'}"
    )
    print(
        "peers: pass rates and paired intervals -- the percentile bootstrap; verdict -- the interval alone;\n"
        "p -- the sign-flip test alone; kappa -- the Wald (Fleiss-Cohen-Everitt) interval; Wilson -- the Wald one;\n"
        "agreement -- Wilson over rows as if independent; corrected -- rows resampled as if independent;\n"
        "number given -- no informedness guard; power -- the t formula"
    )
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

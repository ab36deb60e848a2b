"""Covering-array size and speed: whilelab vs allpairspy vs best known (Colbourn's tables).

Run from the project root: `python bench/cover.py [--peer-timeout 60]`. Prints one row per
configuration and generator: rows, best-known reference, ratio, seconds (median of repeats), and
whether every pair was verified present. Exits non-zero if a whilelab array misses a pair.

Best-known reference: for a uniform v^k, the N of Colbourn's table row with the same t and v and the
smallest listed k' >= k (see ../shared/data/README.md). For mixed levels the table has no entry; the
reference is the largest of (a) the product of the two largest level counts, a true lower bound, and
(b) the best-known size of each uniform block v^m formed by the m axes with at least v values (a
mixed array contains such a block). PICT's default sizes are quoted from the issue, not run here.
"""
import argparse, csv, math, multiprocessing as mp, statistics, sys, time
from pathlib import Path
import numpy as np
from whilelab.cover import covering_array, _missing
from whilelab.core import shared_data

CONFIGS = [("3^4", [3]*4, 12), ("3^13", [3]*13, 19), ("5^10", [5]*10, 45), ("6^20", [6]*20, 81),
           ("10^20", [10]*20, 213), ("2^100", [2]*100, 16), ("4^15 3^17 2^29", [4]*15 + [3]*17 + [2]*29, 38),
           ("[8,6,8,5,6,4]", [8, 6, 8, 5, 6, 4], 66), ("[12,10,8,8,6,6,5,4]", [12, 10, 8, 8, 6, 6, 5, 4], 123)]

def load_bounds():
    p = shared_data("covering_array_bounds.csv", Path(__file__).parent)
    if p is None: sys.exit("bench/cover.py needs ../shared/data/covering_array_bounds.csv beside the project")
    return [(int(r["t"]), int(r["v"]), int(r["k"]), int(float(r["N"]))) for r in csv.DictReader(open(p))]

def best_known(bounds, levels, t=2):
    def can(v, k):
        if k < t or v == 1: return v ** min(k, t)
        c = [N for (tt, vv, kk, N) in bounds if tt == t and vv == v and kk >= k]
        return min(c, key=lambda N: N) if c else None
    if len(set(levels)) == 1: return can(levels[0], len(levels))
    ref = math.prod(sorted(levels)[-t:])
    for v in set(levels):
        m = sum(x >= v for x in levels)
        if m >= t and can(v, m): ref = max(ref, can(v, m))
    return ref

def run_allpairs(levels, q):
    from allpairspy import AllPairs
    t = time.perf_counter()
    rows = [list(r) for r in AllPairs([list(range(v)) for v in levels])]
    q.put((rows, time.perf_counter() - t))

def allpairs(levels, timeout):
    q = mp.Queue(); p = mp.Process(target=run_allpairs, args=(levels, q)); p.start()
    try: rows, dt = q.get(timeout=timeout)
    except Exception: p.kill(); return None, None
    p.join(); return np.array(rows), dt

def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--peer-timeout", type=float, default=60)
    ap.add_argument("--repeats", type=int, default=3); args = ap.parse_args()
    bounds = load_bounds(); ratios, bad = [], 0
    print(f"{'config':22} {'generator':11} {'rows':>5} {'best':>5} {'ratio':>6} {'PICT':>5} {'seconds':>8}  verified")
    for name, levels, pict in CONFIGS:
        ref = best_known(bounds, levels)
        times, plan = [], None
        for _ in range(args.repeats):
            t = time.perf_counter(); plan = covering_array(levels, seed=0); times.append(time.perf_counter() - t)
        A = np.column_stack([plan[f"a{i}"].values.astype(int) for i in range(len(levels))])
        ok = not _missing(A, levels, 2); bad += not ok
        ratios.append(len(A) / ref)
        print(f"{name:22} {'whilelab':11} {len(A):5} {ref:5} {len(A)/ref:6.3f} {pict:5} {statistics.median(times):8.3f}  {ok} ({plan.attrs['method']}{', > PICT' if len(A) > pict else ''})")
        P, dt = allpairs(levels, args.peer_timeout)
        if P is None: print(f"{'':22} {'allpairspy':11} {'-':>5} {ref:5} {'-':>6} {pict:5} {'>'+str(args.peer_timeout):>8}  timed out")
        else: print(f"{'':22} {'allpairspy':11} {len(P):5} {ref:5} {len(P)/ref:6.3f} {pict:5} {dt:8.3f}  {not _missing(P, levels, 2)}")
    g = math.exp(statistics.mean(map(math.log, ratios)))
    print(f"\nwhilelab geometric mean rows/best-known over {len(ratios)} configurations: {g:.3f} (target <= 1.10)")
    sys.exit(1 if bad else 0)

if __name__ == "__main__": main()

"""One re-plan of the search, rebuilt against extended (issue 46, item 1): CPU seconds of each, on the same owed pairs.

Run from the project root: `python bench/replan_cost.py`. The built-in example's axes; `seen` random valid cells
stand for what a search has delivered so far, so the pairs they miss are owed; every 7th owed pair is given up (a
constraint). "rebuild" is what the search did before: a whole covering array with the seen cells as seed rows
(`covering_array`, IPOG and the repair search); "extend" is what it does now: `extend_cover` on the owed pairs only.
Medians of 3; each checked to hold every owed pair it does not report lost.
"""
import random, statistics, sys, time
from whilelab.core import shopfront
from whilelab.axes import agent_axes
from whilelab.cover import covering_array, extend_cover, coverage, missing_pairs

REPEATS = 3

def main():
    axes = agent_axes(shopfront()); plan = covering_array(axes, seed=0); names = list(axes.levels)
    valid = lambda c: not any(all(c.get(k) == v for k, v in con.items()) for con in axes.constraints)
    print(f"{'seen cells':>10} {'owed':>5} {'given up':>8} {'rebuild s':>10} {'cells':>6} {'extend s':>9} "
          f"{'cells':>6} "
          f"{'rebuild/extend':>14}")
    ok = True
    for n_seen in (30, 60, 120):
        rng, seen = random.Random(n_seen), []
        while len(seen) < n_seen:
            c = {n: str(rng.choice(list(axes.levels[n]))) for n in names}
            if valid(c): seen.append(c)
        todo = sorted(missing_pairs(coverage(seen, plan)))
        given = todo[::7]; owed = [p for p in todo if p not in given]
        cons = [{a: va, b: vb} for a, va, b, vb in given]
        t_old, t_new = [], []
        for r in range(REPEATS):
            t = time.process_time(); res = covering_array(axes, 2, r, constraints=cons, seed_rows=seen)
            t_old.append(time.process_time() - t)
            t = time.process_time(); new, lost = extend_cover(axes, owed, r, cons)
            t_new.append(time.process_time() - t)
            held = lambda p: any(c[p[0]] == p[1] and c[p[2]] == p[3] for c in new)
            ok &= all(p in lost or held(p) for p in owed)
        old, ext = statistics.median(t_old), statistics.median(t_new)
        print(f"{n_seen:10} {len(owed):5} {len(given):8} {old:10.3f} {res.sizes['cell'] - len(seen):6} {ext:9.4f} "
              f"{len(new):6} {old / ext:13.0f}x")
    print("every owed pair held or lost: " + ("yes" if ok else "NO"))
    sys.exit(0 if ok else 1)

if __name__ == "__main__": main()

"""Grading a long run's rows again: in memory (`grade(view, spec, judge)`, the peer) against streamed to a file
(`grade(view, spec, judge, out=path)`, issue 46.2), peak memory and time.

Run from the project root: `python bench/grade_stream.py [--rollouts 10000 50000] [--repeats 3]`. For each size, one
offline search on the built-in example (n=2 phrasings x k=4 samples, the budget ends it) writes a run folder; then
each measurement is a fresh Python process that opens that folder's rows as a `RowView` and grades them with a judge
that reads every row (a plain function, so `grade` cannot take labels from the rules and asks it row by row). Its peak
RSS (ru_maxrss) less its RSS just before grading is what grading cost. Target: streamed, that cost does not grow with
the rows; in memory it grows with them.
"""
import argparse, json, statistics, subprocess, sys, tempfile
from pathlib import Path

MAKE = r"""
import sys, warnings
from pathlib import Path
from whilelab.simulate import simulate
from whilelab.defaults import SimOptions, SearchOptions
search = SearchOptions(budget=int(sys.argv[1]), patience=10**9, min_new_per_1k=0, explore_price=1e9)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    simulate(options=SimOptions(n_phrasings=2, k_samples=4, search=search), progress=False, out=Path(sys.argv[2]))
"""

GRADE = r"""
import json, resource, sys, time
from pathlib import Path
from whilelab.core import shopfront
from whilelab.grade import grade
from whilelab.rollout import RowView, iter_rows
run, mode = Path(sys.argv[1]), sys.argv[2]
offsets, at = [], 0
with open(run / "rows.jsonl", "rb") as f:
    for line in f: offsets.append(at); at += len(line)
view = RowView(run / "rows.jsonl", offsets)
def by_turns(row): return "pass" if len(row["messages"]) % 2 == 0 else "fail"
rss = lambda: int(next(l for l in open("/proc/self/status") if l.startswith("VmRSS")).split()[1]) / 1024
before, t = rss(), time.perf_counter()
graded = grade(view, shopfront(), by_turns, out=run / f"graded-{time.time_ns()}.jsonl" if mode == "streamed" else None)
dt = time.perf_counter() - t
print(json.dumps({"rows": len(graded), "seconds": dt, "judged": graded.judged,
                  "cost_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - before}))
"""

def child(code: str, *args) -> dict:
    out = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True)
    if out.returncode: sys.exit(f"failed:\n{out.stderr[-3000:]}")
    lines = out.stdout.strip().splitlines()
    return json.loads(lines[-1]) if lines else {}

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rollouts", type=int, nargs="+", default=[10_000, 50_000])
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    table = {}
    with tempfile.TemporaryDirectory() as d:
        for n in a.rollouts:
            run = Path(d) / f"run-{n}"
            child(MAKE, n, run)
            for mode in ("in memory", "streamed"):
                runs = [child(GRADE, run, mode.split()[0] if mode == "streamed" else "memory") for _ in range(a.repeats)]
                table[n, mode] = {"rows": runs[0]["rows"], "judged": runs[0]["judged"],
                                  "seconds": statistics.median(r["seconds"] for r in runs),
                                  "cost_mb": statistics.median(r["cost_mb"] for r in runs)}
                print(f"  measured {n} {mode}: {table[n, mode]}", file=sys.stderr, flush=True)
    print(f"| rollouts | grade | rows graded | judged | seconds (median) | rows/s | memory grading cost, MB |")
    print("|---|---|---|---|---|---|---|")
    for (n, mode), m in table.items():
        print(f"| {n} | {mode} | {m['rows']} | {m['judged']} | {m['seconds']:.2f} | {m['rows'] / m['seconds']:.0f} | "
              f"{m['cost_mb']:.0f} |")
    small, big = min(a.rollouts), max(a.rollouts)
    grow = table[big, "streamed"]["cost_mb"] - table[small, "streamed"]["cost_mb"]
    held = table[big, "in memory"]["cost_mb"] - table[small, "in memory"]["cost_mb"]
    ok = grow < 0.1 * max(held, 1)
    print(f"\nfrom {small} to {big} rollouts, grading's memory grew {grow:.0f} MB streamed, {held:.0f} MB in memory "
          f"(target: streamed < a tenth of in memory): {'met' if ok else 'MISSED'}")
    sys.exit(0 if ok else 1)

if __name__ == "__main__": main()

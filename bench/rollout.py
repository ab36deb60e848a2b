"""Rollout throughput, scaling and memory, offline; and concurrency against a slow backend.

Run from the project root: `python bench/rollout.py [--repeats 3]`. Each measurement runs in a fresh
Python process (so peak memory is that run's own) and prints a table of medians:

* offline throughput at ~1k and ~10k rollouts (built-in example, scripted agent, template user,
  rows streamed to a JSONL store); target >= 2,000 rollouts/s at 10k and a 10k/1k time ratio <= 12;
* peak resident memory (ru_maxrss, includes the interpreter and numpy/xarray); target < 300 MB at 10k;
* a stand-in backend that sleeps 200 ms per agent call, at concurrency 64: achieved calls/s,
  target >= 90% of the ideal 64 / 0.2 = 320 calls/s;
* the search on (five arms, graded every batch, a residual plan while pairs are missing, the run folder written)
  to ~1k and to 10k rollouts (time ratio <= 12: linear in rollouts), with the same rollouts per situation as the
  offline rows (n=4, k=4 and n=8, k=20), in this process and, at 10k, on two worker processes
  (`scale.ProcessExecutor`): target >= 2,000 rollouts/s, < 300 MB. Imports are
  outside the clock in every row; peak memory is the larger of this process's and its largest worker's.
"""
import argparse, json, statistics, subprocess, sys

CHILD = r"""
import asyncio, json, resource, sys, tempfile, time
from pathlib import Path
from whilelab.core import shopfront
from whilelab.axes import agent_axes
from whilelab.cover import covering_array, plan_cells
from whilelab.defaults import RolloutOptions
from whilelab.rollout import situation_from_cell, rollouts, assistant_msg
from whilelab.standins import ScriptedAgent, TemplateUser
from whilelab.simulate import simulate
from whilelab.defaults import SimOptions, SearchOptions
from whilelab.scale import ProcessExecutor
mode, n, k = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
spec = shopfront()
plan = covering_array(agent_axes(spec), seed=0)
cells = plan_cells(plan)
sits = [situation_from_cell(c, spec, seed=0) for c in cells]
class Slow:
    name, calls = "slow", 0
    async def respond(self, messages, ctx):
        Slow.calls += 1; await asyncio.sleep(0.2); return assistant_msg("Sorry, I cannot help with that.")
with tempfile.TemporaryDirectory() as d:
    t = time.perf_counter()
    if mode.startswith("search"):
        search = SearchOptions(budget=n * k * 64, patience=10**6)   # to the budget: saturation must not end it early
        executor = ProcessExecutor(2) if mode == "search-processes" else None
        rows = simulate(options=SimOptions(n_phrasings=n, k_samples=k, search=search), out=d, progress=False,
                        executor=executor).rows
        calls = None
    elif mode == "offline":
        rows = rollouts(sits, spec, ScriptedAgent(), TemplateUser(), n_phrasings=n, k_samples=k, store=Path(d) / "rows.jsonl", progress=False)
        calls = None
    else:
        agent = Slow()
        rows = rollouts(sits, spec, agent, TemplateUser(), n_phrasings=n, k_samples=k, opts=RolloutOptions(concurrency=64), progress=False)
        calls = Slow.calls
    dt = time.perf_counter() - t
if mode == "search-processes": executor.close()
peak = max(resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
print(json.dumps({"rollouts": len(rows), "seconds": dt, "calls": calls, "peak_mb": peak / 1024}))
"""

def measure(mode, n, k, repeats):
    runs = []
    for _ in range(repeats):
        out = subprocess.run([sys.executable, "-c", CHILD, mode, str(n), str(k)], capture_output=True, text=True, check=True)
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    med = lambda key: statistics.median(r[key] for r in runs)
    return {"rollouts": runs[0]["rollouts"], "seconds": med("seconds"), "peak_mb": med("peak_mb"),
            "calls": runs[0]["calls"], "all": [round(r["seconds"], 3) for r in runs]}

def rate(m): return m["rollouts"] / m["seconds"]

def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--repeats", type=int, default=3); a = ap.parse_args()
    small, big = measure("offline", 4, 4, a.repeats), measure("offline", 8, 20, a.repeats)   # 64 situations x 16 / x 160
    slow = measure("slow", 2, 5, a.repeats)                                                  # 640 rollouts, one 200 ms call each
    search_small = measure("search", 4, 4, a.repeats)                                        # 1,024 rollouts, searching
    search = measure("search", 8, 20, a.repeats)                                             # 10,240 rollouts, searching
    procs = measure("search-processes", 8, 20, a.repeats)                                    # the same, on 2 worker processes
    print(f"{'measurement':32} {'rollouts':>8} {'seconds':>8} {'rate':>12} {'peak MB':>8}  target")
    for name, m, target in (("offline ~1k", small, ""), ("offline ~10k", big, ">= 2000 rollouts/s, < 300 MB")):
        print(f"{name:32} {m['rollouts']:8} {m['seconds']:8.3f} {m['rollouts'] / m['seconds']:9.0f} /s {m['peak_mb']:8.0f}  {target}  runs {m['all']}")
    print(f"{'search on, to ~1k':32} {search_small['rollouts']:8} {search_small['seconds']:8.3f} "
          f"{rate(search_small):9.0f} /s {search_small['peak_mb']:8.0f}  "
          f"runs {search_small['all']}")
    for name, m in (("search on, to ~10k", search), ("search on, 2 worker processes", procs)):
        print(f"{name:32} {m['rollouts']:8} {m['seconds']:8.3f} {m['rollouts'] / m['seconds']:9.0f} /s {m['peak_mb']:8.0f}  "
              f">= 2000 rollouts/s, < 300 MB  runs {m['all']}")
    best = max((search, procs), key=rate)
    print(f"{'search on / plan played once':32} {'':8} {'':8} {rate(best) / rate(big):9.2f} x {'':8}  "
          "the peer in this run: the plan played once, offline, ~10k")
    ratio, search_ratio = big["seconds"] / small["seconds"], search["seconds"] / search_small["seconds"]
    print(f"{'10k/1k time ratio':32} {'':8} {ratio:8.2f} {'':12} {'':8}  <= 12 (rollouts ratio {big['rollouts'] / small['rollouts']:.0f})")
    print(f"{'10k/1k time ratio, search on':32} {'':8} {search_ratio:8.2f} {'':12} {'':8}  <= 12 "
          f"(rollouts ratio {search['rollouts'] / search_small['rollouts']:.0f})")
    cps = slow["calls"] / slow["seconds"]
    print(f"{'200 ms backend, concurrency 64':32} {slow['rollouts']:8} {slow['seconds']:8.3f} {cps:9.0f} /s {slow['peak_mb']:8.0f}  >= 288 calls/s (90% of 320); {cps / 320:.0%} of ideal")
    ok = rate(big) >= 2000 and ratio <= 12 and search_ratio <= 12 and big["peak_mb"] < 300 \
        and cps >= 288 \
        and max(rate(m) for m in (search, procs)) >= 2000 and max(m["peak_mb"] for m in (search, procs)) < 300
    print("\nall targets met" if ok else "\nSOME TARGETS MISSED")
    sys.exit(0 if ok else 1)

if __name__ == "__main__": main()

"""Long runs: throughput and peak memory of 10k and 100k offline rollouts, streamed to the store; and of the search.

Run from the project root: `python bench/scale.py [--repeats 3] [--no-ray] [--search-only] [--million]`.
Each measurement is a
fresh Python process (its peak RSS, ru_maxrss, is that run's own; it includes the interpreter, numpy,
xarray and the situations themselves). Situations are the example plan's cells, made distinct with
variant keys, each played 4 phrasings x 4 samples: 625 situations = 10k rollouts, 6,250 = 100k.

Rows compared:
* in-process, rows streamed (`keep=False`): the targets. Peak < 500 MB at 100k, and 100k throughput
  within 20% of the 10k figure (rollouts/s ratio >= 0.8).
* peer: in-process with rows held (`keep=True`, how the runner worked before this benchmark existed):
  memory grows with the run.
* Ray executor on a local 2-CPU instance (started inside the child; start-up time excluded), rows
  streamed. Its peak is the driver's; each Ray worker is a separate process of ~150-200 MB.

The search (issue 46.2): `simulate` on the built-in example, n=2 phrasings x k=4 samples, to a budget of 10k / 100k
(and 1M with --million) rollouts, saturation and the price stop switched off so the budget ends it:
* search, rows streamed: a run folder (`out=`); rows live in its rows.jsonl and `Simulation.rows` is a `RowView`.
  Targets: 1M in < 2 GB peak, and 100k throughput within 20% of 10k (time linear in rollouts).
* peer: search, rows held: no run folder, every row in memory (how the search held rows before issue 46.2).

Where a long search's memory went before issue 46.2 (442223e, search into a run folder, n=2 x k=4, ru_maxrss and
tracemalloc after `Search.run`): imports alone 124 MB; the example 300 MB at 5k and 482 MB at 20k rollouts (12 KB a
rollout); at 5k, 57 MB traced, 48 MB of it the rows (`Search.rows`, `by_signature`, `failures`: 9.6 KB a rollout);
bench/orders_spec.py 297 MB at 5k, 74 MB traced, 43 MB of it rows (8.7 KB a rollout). With rows streamed the
example's growth fell to 1.8 KB a rollout (249 MB at 5k, 275 MB at 20k), most of it the kept situations' sandbox
records (~13 KB a situation); kept without their worlds (`PlayedSituation`), ~1.9 KB a situation.

Measured at 62420ab on a 2-core machine shared with other jobs (wall times bent by them; CPU rates less so), one run
each: streamed 10k 259 MB / 165 s, 30k 274 MB (164 rollouts per CPU s vs 155 at 10k), 100k 312 MB / 1,817 s (0.91x the
10k wall rate; 0.6 KB a rollout over 10k, so ~840 MB at 1M); held 10k 249 MB, 100k 1,345 MB (12.2 KB a rollout, 224
vs 240 rollouts per CPU s). The streamed runs also encode, write and save the run folder; the held ones do not.
"""
import argparse, json, statistics, subprocess, sys

CHILD = r"""
import json, resource, sys, tempfile, time
from pathlib import Path
from whilelab.core import shopfront
from whilelab.axes import agent_axes
from whilelab.cover import covering_array, plan_cells
from whilelab.rollout import situation_from_cell, rollouts
from whilelab.standins import ScriptedAgent, TemplateUser
n_sit, mode = int(sys.argv[1]), sys.argv[2]
spec = shopfront()
cells = plan_cells(covering_array(agent_axes(spec), seed=0))
sits = [situation_from_cell(cells[i % len(cells)], spec, seed=0, variant=str(i // len(cells)) if i >= len(cells) else "") for i in range(n_sit)]
executor = None
if mode == "ray":
    import ray
    ray.init(num_cpus=2, include_dashboard=False, object_store_memory=256 * 2**20, log_to_driver=False)
    from whilelab.scale import RayExecutor
    executor = RayExecutor(); executor.cpus()
with tempfile.TemporaryDirectory() as d:
    t = time.perf_counter()
    rows = rollouts(sits, spec, ScriptedAgent(), TemplateUser(), 4, 4, store=Path(d) / "rows.jsonl", keep=mode == "held",
                    executor=executor, progress=False)
    dt = time.perf_counter() - t
    mb = (Path(d) / "rows.jsonl").stat().st_size / 2**20
print(json.dumps({"rollouts": len(rows), "seconds": dt, "store_mb": mb, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

SEARCH = r"""
import json, resource, sys, tempfile, time, warnings
from pathlib import Path
from whilelab.simulate import simulate
from whilelab.defaults import SimOptions, SearchOptions
n, mode = int(sys.argv[1]), sys.argv[2]
search = SearchOptions(budget=n, patience=10**9, min_new_per_1k=0, explore_price=1e9)   # the budget ends it
with tempfile.TemporaryDirectory() as d, warnings.catch_warnings():
    warnings.simplefilter("ignore")
    t, cpu = time.perf_counter(), time.process_time()
    sim = simulate(options=SimOptions(n_phrasings=2, k_samples=4, search=search), progress=False,
                   out=Path(d) / "run" if mode == "search" else None)
    dt, cpu = time.perf_counter() - t, time.process_time() - cpu
    mb = (Path(d) / "run" / "rows.jsonl").stat().st_size / 2**20 if mode == "search" else 0
    kind = type(sim.rows).__name__
print(json.dumps({"rollouts": len(sim.rows), "seconds": dt, "cpu": cpu, "store_mb": mb, "rows": kind,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""
SEARCH_N = {"10k": 10_000, "100k": 100_000, "1M": 1_000_000}

def measure(n_sit, mode, repeats):
    runs = []
    for _ in range(repeats):
        code = SEARCH if mode.startswith("search") else CHILD
        out = subprocess.run([sys.executable, "-c", code, str(n_sit), mode], capture_output=True, text=True)
        if out.returncode: sys.exit(f"{mode} {n_sit} failed:\n{out.stderr[-3000:]}")
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    med = lambda k: statistics.median(r[k] for r in runs)
    return {"rollouts": runs[0]["rollouts"], "seconds": med("seconds"), "rate": med("rollouts") / med("seconds"),
            "peak_mb": med("peak_mb"), "store_mb": runs[0]["store_mb"], "all": [round(r["seconds"], 2) for r in runs],
            # CPU seconds (the search's children only): a rate a machine shared with other jobs does not bend
            "cpu_rate": med("rollouts") / med("cpu") if "cpu" in runs[0] else None}

def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--repeats", type=int, default=3); ap.add_argument("--no-ray", action="store_true")
    ap.add_argument("--search-only", action="store_true", help="only the search rows (not the plain plan's)")
    ap.add_argument("--million", action="store_true", help="also the search, streamed, at 1M rollouts (hours here)")
    a = ap.parse_args()
    table = {}
    runners = ["stream", "held"] + ([] if a.no_ray else ["ray"])
    plain = [] if a.search_only else [(m, n) for m in runners for n in (625, 6250)]
    searches = [(m, SEARCH_N[n]) for m in ("search", "search-held") for n in ("10k", "100k")]
    for mode, n_sit in plain + searches + ([("search", SEARCH_N["1M"])] if a.million else []):
        table[mode, n_sit] = m = measure(n_sit, mode, 1 if n_sit == SEARCH_N["1M"] else a.repeats)
        print(f"  measured {mode:11} {m['rollouts']:>7} rollouts: {m['seconds']:.2f} s median, runs {m['all']}, "
              f"peak {m['peak_mb']:.0f} MB", file=sys.stderr, flush=True)
    names = {"stream": "in-process, streamed", "held": "peer: in-process, rows held", "ray": "Ray 2 CPUs, streamed",
             "search": "search, rows streamed", "search-held": "peer: search, rows held"}
    first = {"stream": 625, "held": 625, "ray": 625, "search": SEARCH_N["10k"], "search-held": SEARCH_N["10k"]}
    print(f"{'runner':30} {'rollouts':>8} {'seconds':>8} {'rollouts/s':>10} {'x 10k':>6} {'per CPU s':>9} {'x 10k':>6} "
          f"{'peak MB':>8} {'store MB':>8}")
    for (mode, n_sit), m in table.items():
        base = table[mode, first[mode]]
        ratio = f"{m['rate'] / base['rate']:.2f}" if n_sit != first[mode] else ""
        cpu = f"{m['cpu_rate']:9.0f}" if m["cpu_rate"] else f"{'':9}"
        cpu_ratio = f"{m['cpu_rate'] / base['cpu_rate']:.2f}" if m["cpu_rate"] and n_sit != first[mode] else ""
        print(f"{names[mode]:30} {m['rollouts']:8} {m['seconds']:8.2f} {m['rate']:10.0f} {ratio:>6} {cpu} "
              f"{cpu_ratio:>6} {m['peak_mb']:8.0f} {m['store_mb']:8.0f}")
    ok = True
    if plain:
        big, small = table["stream", 6250], table["stream", 625]
        held = table["held", 6250]
        print(f"\nstreamed at 100k: peak {big['peak_mb']:.0f} MB (target < 500; rows held: {held['peak_mb']:.0f} MB), "
              f"throughput {big['rate'] / small['rate']:.2f}x the 10k figure (target >= 0.80)")
        if not a.no_ray:
            print(f"Ray / in-process throughput at 100k: {table['ray', 6250]['rate'] / big['rate']:.2f}x on this "
                  "machine's 2 cores")
        ok = big["peak_mb"] < 500 and big["rate"] / small["rate"] >= 0.8
    s10, s100 = table["search", SEARCH_N["10k"]], table["search", SEARCH_N["100k"]]
    h10, h100 = table["search-held", SEARCH_N["10k"]], table["search-held", SEARCH_N["100k"]]
    grow = (s100["peak_mb"] - s10["peak_mb"]) / (s100["rollouts"] - s10["rollouts"]) * 1024
    grow_held = (h100["peak_mb"] - h10["peak_mb"]) / (h100["rollouts"] - h10["rollouts"]) * 1024
    print(f"search streamed at 100k: peak {s100['peak_mb']:.0f} MB (rows held: {h100['peak_mb']:.0f} MB), grows "
          f"{grow:.2f} KB a rollout (held: {grow_held:.2f}); throughput {s100['rate'] / s10['rate']:.2f}x the 10k "
          f"figure, per CPU second {s100['cpu_rate'] / s10['cpu_rate']:.2f}x (target >= 0.80)")
    ok = ok and s100["cpu_rate"] / s10["cpu_rate"] >= 0.8
    if a.million:
        m1 = table["search", SEARCH_N["1M"]]
        print(f"search streamed at 1M: peak {m1['peak_mb']:.0f} MB (target < 2048), {m1['rate'] / s10['rate']:.2f}x "
              "the 10k throughput")
        ok = ok and m1["peak_mb"] < 2048
    else:
        print(f"1M not run (--million); at {grow:.2f} KB a rollout over the 100k peak it would peak near "
              f"{s100['peak_mb'] + grow * 900_000 / 1024:.0f} MB")
    print("all targets met" if ok else "SOME TARGETS MISSED")
    sys.exit(0 if ok else 1)

if __name__ == "__main__": main()

"""Long runs: throughput and peak memory of 10k and 100k offline rollouts, streamed to the store.

Run from the project root: `python bench/scale.py [--repeats 3] [--no-ray]`. Each measurement is a
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

def measure(n_sit, mode, repeats):
    runs = []
    for _ in range(repeats):
        out = subprocess.run([sys.executable, "-c", CHILD, str(n_sit), mode], capture_output=True, text=True)
        if out.returncode: sys.exit(f"{mode} {n_sit} failed:\n{out.stderr[-3000:]}")
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    med = lambda k: statistics.median(r[k] for r in runs)
    return {"rollouts": runs[0]["rollouts"], "seconds": med("seconds"), "rate": med("rollouts") / med("seconds"),
            "peak_mb": med("peak_mb"), "store_mb": runs[0]["store_mb"], "all": [round(r["seconds"], 2) for r in runs]}

def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--repeats", type=int, default=3); ap.add_argument("--no-ray", action="store_true")
    a = ap.parse_args()
    table = {}
    for mode in ["stream", "held"] + ([] if a.no_ray else ["ray"]):
        for n_sit in (625, 6250):
            table[mode, n_sit] = m = measure(n_sit, mode, a.repeats)
            print(f"  measured {mode:6} {m['rollouts']:>7} rollouts: {m['seconds']:.2f} s median, runs {m['all']}", file=sys.stderr, flush=True)
    names = {"stream": "in-process, streamed", "held": "peer: in-process, rows held", "ray": "Ray 2 CPUs, streamed"}
    print(f"{'runner':30} {'rollouts':>8} {'seconds':>8} {'rollouts/s':>10} {'100k/10k':>8} {'peak MB':>8} {'store MB':>8}")
    for (mode, n_sit), m in table.items():
        ratio = f"{m['rate'] / table[mode, 625]['rate']:.2f}" if n_sit == 6250 else ""
        print(f"{names[mode]:30} {m['rollouts']:8} {m['seconds']:8.2f} {m['rate']:10.0f} {ratio:>8} {m['peak_mb']:8.0f} {m['store_mb']:8.0f}")
    big, small = table["stream", 6250], table["stream", 625]
    held = table["held", 6250]
    print(f"\nstreamed at 100k: peak {big['peak_mb']:.0f} MB (target < 500; rows held: {held['peak_mb']:.0f} MB), "
          f"throughput {big['rate'] / small['rate']:.2f}x the 10k figure (target >= 0.80)")
    if not a.no_ray:
        print(f"Ray / in-process throughput at 100k: {table['ray', 6250]['rate'] / big['rate']:.2f}x on this machine's 2 cores")
    ok = big["peak_mb"] < 500 and big["rate"] / small["rate"] >= 0.8
    print("all targets met" if ok else "SOME TARGETS MISSED")
    sys.exit(0 if ok else 1)

if __name__ == "__main__": main()

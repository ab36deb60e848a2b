"""The search's CPU per rollout against the plan played once, this branch against 3cae96e, in one run (issue 46).

Run from the project root: `python bench/search_speed.py [--rounds 3] [--base /tmp/w3cae]` after
`git worktree add /tmp/w3cae 3cae96e`. Rounds are interleaved (in each round every version plays every workload),
each measurement a fresh child process run from an empty folder with PYTHONPATH at that version's code, and its CPU
seconds (`time.process_time`, imports outside the clock, jsonschema's too) are the simulate call's own. Workloads,
all offline, k=4:

* search to ~10k rollouts (n=2 phrasings, budget 10,000; patience high and the price stop off, so the budget ends it);
* the plan played once at ~10k rollouts (no search; n chosen so cells x n x 4 is just under 10k);

on the built-in example (shopfront), on bench/orders_spec.py (five order tools written as typed Python functions
without bodies, identity only by email; no chapter uses it), and on that spec with an agent that never calls
`cancel_order` (its pairs stay undelivered, so the search re-plans batch after batch: the case issue 46 measured).
Prints medians, search/plan-once per rollout (target <= 2.0) and this/3cae96e per workload; exits 1 on a miss.
"""
import argparse, json, statistics, subprocess, sys, tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUDGET = 10_000          # rollouts the search plays: the "search to 10k"
PLAN_N = {"example": 39, "orders": 52, "orders-shy": 52}   # 64 cells x 39 x 4 = 9,984; 48 cells x 52 x 4 = 9,984
TARGET = 2.0             # search / plan-once CPU per rollout (issue 46)

CHILD = r"""
import json, sys, time, warnings
sys.path.insert(0, sys.argv[4])
import orders_spec
from whilelab.simulate import simulate
from whilelab.defaults import SimOptions, SearchOptions
# imported here, outside the clock as every import is: a world with nested schemas imports it on its first call,
# ~1 s once per process (its format checks build a grammar on import), not a cost of any rollout
import jsonschema
try: from whilelab.standins import ScriptedAgent
except ImportError: from whilelab.models import ScriptedAgent      # 3cae96e's name for the module
mode, work, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
class Shy:
    "The scripted agent, except that it never calls `cancel_order`: it says it cannot instead."
    name, family = "shy-scripted", "whilelab-offline"
    def __init__(self): self.inner = ScriptedAgent()
    async def respond(self, messages, ctx):
        m = await self.inner.respond(messages, ctx)
        names = [c.get("name") or c.get("function", {}).get("name") for c in m.get("tool_calls") or []]
        return {"role": "assistant", "content": "I cannot do that here."} if "cancel_order" in names else m
kw = {} if work == "example" else {"tools": orders_spec.TOOLS, "policy": orders_spec.POLICY}
agent = Shy() if work == "orders-shy" else None
import dataclasses
# the budget ends the search: no saturation, no price stop (3cae96e's SearchOptions has no price stop to switch off)
off = {"patience": 10**6, "min_new_per_1k": 0.0, "explore_price": 1e9}
has = {f.name for f in dataclasses.fields(SearchOptions)}
search = (SearchOptions(budget=int(sys.argv[5]), **{k: v for k, v in off.items() if k in has})
          if mode == "search" else None)
opts = SimOptions(n_phrasings=n, k_samples=4, search=search)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")      # a shy agent's search says it fell short: expected here
    t = time.process_time()
    sim = simulate(agent, options=opts, progress=False, **kw)
    cpu = time.process_time() - t
print(json.dumps({"rollouts": len(sim.rows), "cpu": cpu, "delivered": float(sim.coverage.attrs["fraction"])}))
"""

def child(code: Path, mode: str, work: str) -> dict:
    n = PLAN_N[work] if mode == "plan" else 2
    with tempfile.TemporaryDirectory() as d:       # cwd empty: `python -c` must not import this folder's whilelab
        out = subprocess.run([sys.executable, "-c", CHILD, mode, work, str(n), str(ROOT / "bench"), str(BUDGET)],
                             capture_output=True, text=True, cwd=d,
                             env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(code), "WHILELAB_CACHE": "off",
                                  "MPLBACKEND": "Agg", "HOME": d})
    if out.returncode: sys.exit(f"{code} {mode} {work} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--base", default="/tmp/w3cae", help="a checkout of 3cae96e (git worktree add /tmp/w3cae 3cae96e)")
    a = ap.parse_args()
    if not (Path(a.base) / "whilelab").is_dir():
        sys.exit(f"no checkout at {a.base}. Fix: git worktree add {a.base} 3cae96e")
    versions, works = {"this": ROOT, "3cae96e": Path(a.base)}, ("example", "orders", "orders-shy")
    runs = {}
    for r in range(a.rounds):
        for v, code in versions.items():
            for w in works:
                for mode in ("search", "plan"):
                    m = child(code, mode, w)
                    runs.setdefault((v, w, mode), []).append(m)
                    print(f"  round {r + 1} {v:8} {w:10} {mode:6} {m['rollouts']:6} rollouts {m['cpu']:7.2f} s CPU "
                          f"delivered {m['delivered']:.3f}", file=sys.stderr, flush=True)
    per = lambda v, w, mode: statistics.median(m["cpu"] / m["rollouts"] for m in runs[v, w, mode]) * 1e3
    cpu = lambda v, w, mode: statistics.median(m["cpu"] for m in runs[v, w, mode])
    print(f"\nmedians of {a.rounds} interleaved rounds, CPU of the simulate call in a child process, k=4")
    print(f"| workload | version | search rollouts | search CPU s | search ms/rollout | plan-once rollouts | "
          f"plan-once CPU s | plan-once ms/rollout | search / plan-once | delivered (search) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    ok = True
    for w in works:
        for v in versions:
            s, p = runs[v, w, "search"][0], runs[v, w, "plan"][0]
            ratio = per(v, w, "search") / per(v, w, "plan")
            ok &= v != "this" or ratio <= TARGET
            print(f"| {w} | {v} | {s['rollouts']} | {cpu(v, w, 'search'):.2f} | {per(v, w, 'search'):.3f} | "
                  f"{p['rollouts']} | {cpu(v, w, 'plan'):.2f} | {per(v, w, 'plan'):.3f} | {ratio:.2f} | "
                  f"{statistics.median(m['delivered'] for m in runs[v, w, 'search']):.3f} |")
    print("\n| workload | search this/3cae96e | plan-once this/3cae96e |\n|---|---|---|")
    for w in works:
        print(f"| {w} | {per('this', w, 'search') / per('3cae96e', w, 'search'):.2f} | "
              f"{per('this', w, 'plan') / per('3cae96e', w, 'plan'):.2f} |")
    slower = [w for w in works if per("this", w, "plan") > per("3cae96e", w, "plan")]
    print(f"\nsearch / plan-once <= {TARGET} on every workload: {'met' if ok else 'MISSED'}; plan once no slower "
          f"than 3cae96e: {'met' if not slower else 'MISSED on ' + ', '.join(slower)}")
    sys.exit(0 if ok and not slower else 1)

if __name__ == "__main__": main()

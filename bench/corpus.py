"""The corpus of unseen worlds: every change to the world, the person, the agent or the search runs it.

Fourteen worlds nobody in the chapters uses, each played by `simulate` with the default search and the offline stand-ins,
in a fresh process: own worlds written for the bench (a lending desk and a lab sample store over SQLite, a permits
office as a dict, a water utility over five SQLite tables), a five-order-tool spec of typed functions without bodies,
worlds drawn from seeds (three schema-only specs, two SQLite worlds with references and refusals), the tau-bench retail
and airline domains from ../shared/data, a real read-only MCP server (`mcp-server-time`) and a real MCP server that
writes (`mcp-server-git` on a repository of its own). For each it prints:

* delivered: pairs delivered / pairs deliverable (the summary's `delivered_pairs`: what the plan and the world allow);
* price: rollouts, in the order they landed, until every pair delivered by the end was delivered, / (cells x k);
  stop: all the search's rollouts / those to full delivery;
* signatures: distinct behaviour signatures of the rows; late: those first seen after full delivery (what the stop buys);
* exists / ineligible / missing: the world axis as played (`world_as_played`): planned calls the world itself answered
  as the cell says, of those it answered; impossible: (tool, world) pairs trying found no record for;
* own: of the situations whose person names a record, those whose record is of the person's own account (references
  followed to the account), counted apart from manipulative ones;
* ok-rate: calls of the cell's tool in `exists` cells with condition `ok` that answered ok;
* CPU ms per rollout: the child process's CPU time of `simulate` / rollouts (imports and world building outside).

`--check` compares with the checked-in baseline (`bench/corpus_baseline.json`, at the same --k and --seeds) and exits 1
when a figure drops beyond its tolerance; `--write` writes the figures of the worlds it ran into the baseline (the
others' stay). CI runs `--quick --check` (k=2, seed 0).

    python bench/corpus.py [--only a,b] [--seeds 1] [--k 4] [--quick] [--workers 2] [--check | --write]
"""
import argparse, json, os, statistics, subprocess, sys, tempfile, time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WORLDS = ("library", "permits", "labstore", "water", "orders5", "gen-schema-0", "gen-schema-1", "gen-schema-2",
          "gen-sqlite-0", "gen-sqlite-1", "retail", "airline", "mcp-time", "mcp-git")
TOLERANCE = {"delivered": 0.0, "exists": 0.02, "ineligible": 0.02, "missing": 0.02, "own": 0.02, "ok_rate": 0.02,
             "price": 0.10, "stop": 0.50}       # fractions and ratios: a drop (a rise, for price and stop) beyond these fails
HIGHER_IS_WORSE = {"price", "stop"}


def build(name: str, tmp: str, calls_in: str = "threads") -> dict:
    "simulate's keyword arguments for world `name` (tools, policy, world); a world of functions calls them `calls_in`."
    sys.path.insert(0, str(ROOT))
    from bench.worlds import library, permits, labstore, water, orders5, generated, gitrepo
    from whilelab.defaults import WorldOptions
    own = dict(options=WorldOptions(calls_in=calls_in))
    if name in ("library", "labstore", "water"):
        mod = {"library": library, "labstore": labstore, "water": water}[name]
        return dict(world=mod.world(Path(tmp) / f"{name}.db", **own), policy=mod.POLICY)
    if name == "permits": return dict(world=permits.world(**own), policy=permits.POLICY)
    if name == "orders5": return dict(tools=orders5.FUNCTIONS, policy=orders5.POLICY)
    if name.startswith("gen-schema-"): return generated.schema_spec(int(name.rsplit("-", 1)[1]))
    if name.startswith("gen-sqlite-"):
        world, policy = generated.sqlite_world(int(name.rsplit("-", 1)[1]), **own)
        return dict(world=world, policy=policy)
    if name in ("retail", "airline"):
        from whilelab.core import shared_data
        d = json.loads(shared_data("tau_bench_domains.json", __file__).read_text())[name]
        return dict(tools=d["tools"], policy=d["policy"])
    from whilelab.worlds import MCPWorld
    if name == "mcp-time":
        return dict(world=MCPWorld(sys.executable, ["-m", "mcp_server_time", "--local-timezone", "Europe/Oslo"]),
                    policy="- Tell the person the time in the zone they ask for.\n- Convert times only between "
                           "zones the person names.\n- If the tool fails, say so.")
    repo = gitrepo.make_repo(Path(tmp) / "choir")
    # its path, branches and files are facts no schema can guess: a user passes them, as the CLI's --fact does
    return dict(world=MCPWorld(sys.executable, gitrepo.server_args(repo), writes=True, facts=gitrepo.facts(repo)),
                policy=gitrepo.POLICY)


def measure(name: str, seed: int, k: int, budget: int | None, calls_in: str = "threads") -> dict:
    "One world's figures (run in a fresh process by `main`)."
    import warnings
    warnings.simplefilter("ignore")
    from whilelab.defaults import SimOptions, SearchOptions
    from whilelab.simulate import simulate
    from whilelab.rollout import delivered_cell
    from whilelab.search import pairs_of
    with tempfile.TemporaryDirectory() as tmp:    # the run's rows live in its folder: read them before it goes
        kw = build(name, tmp, calls_in)
        search = SearchOptions() if budget is None else SearchOptions(budget=budget)
        opts = SimOptions(seed=seed, k_samples=k, n_phrasings=1, search=search)
        t0 = time.process_time()
        sim = simulate(options=opts, out=Path(tmp) / "run", progress=False, **kw)
        cpu = time.process_time() - t0
        landed = [json.loads(x) for x in (Path(tmp) / "run" / "rows.jsonl").read_text().splitlines() if x.strip()]
        owns = _own_records(sim)
        cov, s = sim.coverage, sim.summary()
        owed = set().union(*(pairs_of(cov, delivered_cell(r)) for r in landed)) if landed else set()
        seen, at = set(), None
        for i, r in enumerate(landed, 1):
            seen |= pairs_of(cov, delivered_cell(r))
            if owed <= seen: at = i; break
        early = {r["signature"] for r in landed[:at]} if at else set()
        late = len({r["signature"] for r in landed} - early) if at else None   # what the rollouts after delivery found
        cells = int(sim.plan.sizes["cell"])
        frac = lambda t: (lambda a, b: a / b if b else None)(*map(int, t.split("/")))
        played = s.get("world_as_played") or {}
        okr = [c["status"] == "ok" for r in sim.rows if r["cell"].get("world") == "exists"
               and r["cell"].get("condition", "ok") == "ok" for c in r["calls"] if c["tool"] == r["cell"].get("tool")]
        figures = {"world": name, "seed": seed, "cells": cells, "rollouts": len(landed),
                   "delivered": frac(s["delivered_pairs"]), "delivered_pairs": s["delivered_pairs"],
                   "price": at / (cells * k) if at else None, "stop": len(landed) / at if at else None,
                   "signatures": len({r["signature"] for r in landed}), "late_signatures": late,
                   **{w: frac(played[w]) if w in played else None for w in ("exists", "ineligible", "missing")},
                   **{f"{w}_n": played.get(w, "0/0") for w in ("exists", "ineligible", "missing")},
                   "impossible": sum(1 for u in sim.undeliverable if u.get("impossible")),
                   "own": owns, "ok_rate": sum(okr) / len(okr) if okr else None,
                   "cpu_ms": 1000 * cpu / max(1, len(landed)), "stopped": sim.stopped}
        if "world" in kw and hasattr(kw["world"], "close"): kw["world"].close()
    return figures


def _own_records(sim) -> float | None:
    "Of the situations (not manipulative) whose person names a record, the share naming one of their own account's."
    good = n = 0
    for st in sim.situations:
        box, sch = st.world, st.world.schema
        e = sch.staked(st.goal["tool"]) if hasattr(sch, "staked") else sch.entity_at_stake(st.goal["tool"])
        if not e or not sch.owner or e == sch.owner or st.cell.get("stance") == "manipulative": continue
        rid, oid = st.know.get(sch.id_name(e)), st.know.get(sch.id_name(sch.owner))
        if rid is None or oid is None or rid not in box.records.get(e, {}): continue
        mine = box.owner_of(e, rid) if hasattr(box, "owner_of") else box.records[e][rid].get(sch.id_name(sch.owner))
        if mine is None: continue
        n += 1; good += mine == oid
    return good / n if n else None


def _child(args) -> dict:
    name, seed, k, budget, timeout, calls_in = args
    code = (f"import sys, json; sys.path.insert(0, {str(ROOT)!r}); sys.path.insert(0, {str(HERE)!r}); import corpus; "
            f"print('RESULT ' + json.dumps(corpus.measure({name!r}, {seed}, {k}, {budget!r}, {calls_in!r})))")
    try:
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout,
                           env={**os.environ, "PYTHONPATH": str(ROOT), "WHILELAB_CACHE": "off"})
    except subprocess.TimeoutExpired:
        return {"world": name, "seed": seed, "error": f"did not finish in {timeout} s"}
    out = [x for x in p.stdout.splitlines() if x.startswith("RESULT ")]
    if not out: return {"world": name, "seed": seed, "error": (p.stderr.strip().splitlines() or ["?"])[-1][:200]}
    return json.loads(out[-1][len("RESULT "):])


def compare(rows: list, base: dict) -> list[str]:
    "Each figure that dropped (or, for price and stop, rose) beyond its tolerance against the baseline, in words."
    bad = []
    for r in rows:
        was = base.get(f"{r['world']}/{r['seed']}")
        if was is None: bad.append(f"{r['world']} seed {r['seed']}: not in the baseline"); continue
        if "error" in r: bad.append(f"{r['world']} seed {r['seed']}: {r['error']}"); continue
        for f, tol in TOLERANCE.items():
            now, then = r.get(f), was.get(f)
            if then is None: continue
            if now is None: bad.append(f"{r['world']} seed {r['seed']}: {f} was {then:.3f}, now none"); continue
            worse = now - then > tol * max(1.0, then) if f in HIGHER_IS_WORSE else then - now > tol
            if worse: bad.append(f"{r['world']} seed {r['seed']}: {f} {then:.3f} -> {now:.3f} (tolerance {tol})")
    return bad


def table(rows: list) -> str:
    cols = ["world", "seed", "cells", "rollouts", "delivered_pairs", "price", "stop", "signatures", "late_signatures",
            "exists_n", "ineligible_n",
            "missing_n", "impossible", "own", "ok_rate", "cpu_ms"]
    fmt = lambda v: "-" if v is None else f"{v:.2f}" if isinstance(v, float) else str(v)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        lines.append("| " + " | ".join(fmt(r.get(c)) if "error" not in r or c in ("world", "seed") else
                                       (r["error"] if c == "cells" else "") for c in cols) + " |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default=",".join(WORLDS))
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--k", type=int, default=4)
    ap.add_argument("--budget", type=int, default=None, help="the search's rollout budget (default: SearchOptions')")
    ap.add_argument("--quick", action="store_true", help="CI's settings: k=2, one seed, mcp-git at a budget of 96")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=900)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--calls-in", default="threads", choices=("threads", "processes"),
                    help="where the worlds of functions run their calls (WorldOptions.calls_in)")
    a = ap.parse_args(argv)
    k, seeds = (2, 1) if a.quick else (a.k, a.seeds)
    names = [n for n in a.only.split(",") if n]
    unknown = set(names) - set(WORLDS)
    if unknown: sys.exit(f"--only names {sorted(unknown)}; the corpus has {', '.join(WORLDS)}")
    # each rollout of a writing server starts its own: CI plays 96 of them; a whole run takes tens of minutes here
    budget = lambda n: 96 if n == "mcp-git" and a.quick else a.budget
    jobs = [(n, s, k, budget(n), a.timeout, a.calls_in) for s in range(seeds) for n in names]
    t0 = time.time()
    with ThreadPoolExecutor(a.workers) as ex: rows = list(ex.map(_child, jobs))
    print(table(rows))
    ok = [r for r in rows if "error" not in r]
    if ok:
        print(f"\n{len(ok)} of {len(rows)} runs; wall {time.time() - t0:.0f} s; CPU ms per rollout median "
              f"{statistics.median(r['cpu_ms'] for r in ok):.1f}; world axis as played, lowest: " + ", ".join(
              f"{w} {min((r[w] for r in ok if r[w] is not None), default=float('nan')):.2f}"
              for w in ("exists", "ineligible", "missing")))
    path = HERE / f"corpus_baseline{'_quick' if a.quick else ''}.json"
    if a.write:
        kept = json.loads(path.read_text()) if path.exists() else {}   # the worlds --only left out keep their figures
        kept = {key: v for key, v in kept.items() if key.split("/")[0] in WORLDS}
        path.write_text(json.dumps({**kept, **{f"{r['world']}/{r['seed']}": r for r in ok}}, indent=1, sort_keys=True)
                        + "\n")
        print(f"wrote {path.name}")
    if a.check:
        bad = compare(rows, json.loads(path.read_text()))
        print("\n".join(["", "against the baseline:"] + (bad or ["every figure within its tolerance"])))
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())

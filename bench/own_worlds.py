"""Users' own worlds through `simulate`: an SQLite file, a dict of tables, and a real MCP server that writes.

Three worlds nobody on the project wrote (`bench/worlds/`): a public library's lending desk as an SQLite file
(`FunctionWorld(functions, "library.db")`), a municipal permits office as a dict of tables
(`FunctionWorld(functions, state)`), and a choir's git repository served by the real `mcp-server-git`
(`MCPWorld(python, ["-m", "mcp_server_git", ...], writes=True)`). Each runs `simulate` with the default search and the
offline stand-ins (no network, no key), in a fresh Python process (`--timeout` seconds at most), and the table says:

* delivered: pairs delivered / deliverable (the summary's `delivered_pairs`, pairs the plan proved impossible not owed);
  target 100%;
* full at: rollouts, in the order they landed, until every deliverable pair was delivered, / (plan cells x phrasings
  x samples) -- bench/coverage.py's measure of the plan's price; target <= 1.25 x (with 100% delivered); stop: all the
  search's rollouts (it goes on until no new behaviour shows), likewise;
* ok-rate: of the calls in `exists` cells with condition `ok` that the user's world answered, those it answered `ok`
  (rows there that reached no call of the world are counted in `silent`); target >= 90%;
* bytes changed outside temporary copies: the user's db file (and any -journal/-wal beside it), the dict world's source
  files and its state object, every file of the git repository incl. `.git` (plus `git log --all` and HEAD); target 0;
* servers left: processes still alive after the run that descend from the run's process (a child subreaper, so orphans
  are re-parented to it and still counted) or whose command line names the user's repository, and that were not there
  before; counted in the run's process after the world is closed, and again in this process after the run's exited;
  target 0;
* (second line) files and folders the run left in its own TMPDIR (the library's temporary copies), not a target;
* rollouts/s: rollouts / seconds of `simulate`, writing its run folder as a user's run does (imports and world
  building outside the clock).

    python bench/own_worlds.py [--only library,permits,git] [--budget N] [--k K] [--n N]
                               [--git-budget 128] [--git-k 1] [--git-n 1] [--timeout 420]

The function worlds run `SimOptions()` as it is (n=2, k=4, budget 20,000). The git world runs the same search at n=1, k=1
and a 128-rollout budget by default: with writes each rollout starts its own server on its own copy of the repository
(~1 s of CPU each), and the default sampling (~1,900 rollouts) does not finish in minutes on two shared cores.
"""
import argparse, hashlib, json, os, subprocess, sys, tempfile, time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WORLDS = ("library", "permits", "git")

# ---------------------------------------------------------------------------------------------------- watching
def snapshot(paths) -> dict:
    "path -> bytes of every file under `paths` (files or folders)."
    out = {}
    for p in map(Path, paths):
        files = [p] if p.is_file() else sorted(x for x in p.rglob("*") if x.is_file()) if p.exists() else []
        for f in files:
            try: out[str(f)] = f.read_bytes()
            except OSError: pass
    return out

def bytes_changed(before: dict, after: dict) -> int:
    "Bytes that differ between two snapshots: differing positions, plus length changes, plus whole added/removed files."
    n = 0
    for k in before.keys() | after.keys():
        a, b = before.get(k, b""), after.get(k, b"")
        if a == b: continue
        n += sum(x != y for x, y in zip(a, b)) + abs(len(a) - len(b))
    return n

def processes() -> dict:
    "pid -> (parent pid, command line) of every process we can see."
    out = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit(): continue
        try:
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
            stat = (d / "stat").read_text()
            ppid = int(stat[stat.rindex(")") + 2:].split()[1])
            state = stat[stat.rindex(")") + 2:].split()[0]
            if state != "Z": out[int(d.name)] = (ppid, cmd)
        except (OSError, ValueError): pass
    return out

def adopt_orphans():
    "Make this process a child subreaper (Linux): a server whose parent exits is re-parented here, so it is still counted."
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)    # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError): pass

def descendants(pid: int, procs: dict) -> set:
    kids, frontier = set(), {pid}
    while frontier:
        frontier = {p for p, (pp, _) in procs.items() if pp in frontier and p not in kids}
        kids |= frontier
    return kids

def left(before: dict, marks) -> list:
    "Processes not in `before` that descend from this process or whose command line holds one of `marks`."
    now = processes()
    mine = descendants(os.getpid(), now)
    return sorted(f"{p}: {cmd[:120]}" for p, (_, cmd) in now.items()
                  if p not in before and p != os.getpid() and (p in mine or any(m in cmd for m in marks)))

# ---------------------------------------------------------------------------------------------------- the worlds
def build(name: str, tmp: Path):
    """(world, tools or None, policy, paths to watch, a function returning extra text to watch, marks of its server
    processes, a closer) for world `name`, its files made in `tmp`."""
    sys.path.insert(0, str(HERE))
    from whilelab.worlds import FunctionWorld, MCPWorld
    if name == "library":
        from worlds import library
        (tmp / "user").mkdir()
        db = library.make_db(tmp / "user" / "library.db")
        world = FunctionWorld(library.FUNCTIONS, str(db), name="library")
        return world, world.tools, library.POLICY, [db.parent], lambda: b"", [], lambda: None
    if name == "permits":
        from worlds import permits
        state = permits.state()
        source = [HERE / "worlds" / "permits.py"]
        watched = lambda: json.dumps([permits.DATA, state], sort_keys=True).encode()   # the module's data and the object given
        world = FunctionWorld(permits.FUNCTIONS, state, name="permits")
        return world, world.tools, permits.POLICY, source, watched, [], lambda: None
    if name == "git":
        from worlds import gitrepo
        repo = gitrepo.make_repo(tmp / "user" / "choir")
        subprocess.run(["git", "-C", str(repo), "status"], capture_output=True)   # settle the index before the snapshot
        facts = {"repo_path": [str(repo)], "files": [["scores.csv"], ["loans.txt"]], "branch_name": ["draft-programme"],
                 "target": ["main"], "revision": ["HEAD"], "branch_type": ["local"],
                 "message": ["Add the Rutter Magnificat"]}
        world = MCPWorld(sys.executable, gitrepo.server_args(repo), writes=True, facts=facts, name="mcp:git")
        git = lambda *a: subprocess.run(["git", "-C", str(repo), *a], capture_output=True).stdout
        watched = lambda: git("log", "--all", "--format=%H %s") + git("rev-parse", "--abbrev-ref", "HEAD")
        return world, None, gitrepo.POLICY, [repo], watched, [str(repo)], world.close
    raise ValueError(f"unknown world {name!r}. Fix: one of {WORLDS}")

def child(name: str, budget: int | None, k: int | None, n: int | None) -> dict:
    "Run world `name` in this process; the measurements as a dict."
    import dataclasses
    from whilelab.defaults import SimOptions
    from whilelab.simulate import simulate
    opts = SimOptions()
    if k: opts = dataclasses.replace(opts, k_samples=k)
    if n: opts = dataclasses.replace(opts, n_phrasings=n)
    if budget: opts = dataclasses.replace(opts, search=dataclasses.replace(opts.search, budget=budget))
    adopt_orphans()
    before_procs = processes()
    with tempfile.TemporaryDirectory(prefix="own-worlds-", dir=os.environ.get("OWN_WORLDS_HOME")) as d:
        tmp = Path(d)
        try: world, tools, policy, paths, extra, marks, close = build(name, tmp)
        except Exception as e: return {"world": name, "build": f"{type(e).__name__}: {e}"[:300]}
        before = snapshot(paths); before_extra = extra()
        t = time.perf_counter()
        try: sim = simulate(None, tools, policy, opts, world=world, progress=False, out=tmp / "run")
        except Exception as e:
            close()
            return {"world": name, "build": "ok", "run": f"{type(e).__name__}: {e}"[:300]}
        seconds = time.perf_counter() - t
        close()
        time.sleep(0.5)                                   # a server that exits on close has had time to
        changed = bytes_changed(before, snapshot(paths)) + bytes_changed({"x": before_extra}, {"x": extra()})
        procs_left = left(before_procs, marks)
        s = sim.summary()
        by = getattr(world, "name", None)
        asked = [c for r in sim.rows if r["cell"].get("world") == "exists" and r["cell"].get("condition") == "ok"
                 for c in r["calls"] if c.get("by") == by]
        silent = sum(1 for r in sim.rows if r["cell"].get("world") == "exists" and r["cell"].get("condition") == "ok"
                     and not any(c.get("by") == by for c in r["calls"]))
        answered = [c for r in sim.rows for c in r["calls"] if c.get("by") == by]
        cell_rows = [r for r in sim.rows if r["cell"].get("world") == "exists" and r["cell"].get("condition") == "ok"]
        tool_ok = sum(any(c["tool"] == r["cell"].get("tool") and c.get("by") == by and c["status"] == "ok"
                          for c in r["calls"]) for r in cell_rows)
        planned_once = s["cells"] * opts.n_phrasings * opts.k_samples
        full_at = delivered_at(sim, tmp / "run")
        return {"world": name, "build": "ok", "run": "ok", "rollouts": s["rollouts"], "cells": s["cells"],
                "cost": s["rollouts"] / planned_once, "delivered": s["delivered_pairs"],
                "full_at": full_at / planned_once if full_at else None,
                "delivered_fraction": s["delivered_fraction"], "ok_calls": sum(c["status"] == "ok" for c in asked),
                "calls": len(asked), "silent": silent,
                "tool_ok": f"{tool_ok}/{len(cell_rows)}",
                "world_ok_all": f"{sum(c['status'] == 'ok' for c in answered)}/{len(answered)}",
                "bytes_changed": changed, "procs_left": procs_left, "seconds": seconds,
                "rate": s["rollouts"] / seconds, "stopped": s["stopped"], "errors": s["errors"],
                "pass_rate": s["pass_rate"], "marks": marks}

def delivered_at(sim, out) -> int | None:
    """Rollouts, in the order they landed, until every pair some row delivered was delivered (bench/coverage.py's
    measure: the plan's price is cells x phrasings x samples). Landing order is the run folder's `rows.jsonl`:
    `sim.rows` is sorted by row key (situation id, phrasing, sample), not by when a row landed."""
    from whilelab.rollout import delivered_cell
    from whilelab.search import pairs_of
    cov = sim.coverage
    landed = [json.loads(line) for line in (Path(out) / "rows.jsonl").read_text().splitlines() if line.strip()]
    owed = set().union(*(pairs_of(cov, delivered_cell(r)) for r in landed))
    seen = set()
    for i, r in enumerate(landed, 1):
        seen |= pairs_of(cov, delivered_cell(r))
        if owed <= seen: return i
    return None

# ---------------------------------------------------------------------------------------------------- the table
def measure(name: str, a) -> dict:
    "World `name` in a fresh process; its row, with the server processes still alive after that process exited."
    before = processes()
    budget, k, n = settings(name, a)
    cmd = [sys.executable, __file__, "--child", name] + [f"--{o}={v}" for o, v in
                                                         (("budget", budget), ("k", k), ("n", n)) if v]
    home, scratch = tempfile.mkdtemp(prefix="own-worlds-home-"), tempfile.mkdtemp(prefix="own-worlds-tmp-")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
           "TMPDIR": scratch, "OWN_WORLDS_HOME": home}    # the user's files in home; the library's copies in scratch
    try:
        try: p = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout, env=env)
        except subprocess.TimeoutExpired:        # subprocess.run has killed the run's process (only it)
            left_behind = orphans(before, [])
            return {"world": name, "build": "ok", "run": f"hung: no result in {a.timeout:g} s; "
                    f"{len(left_behind)} processes left after it was killed"}
        temp_left = sum(1 for _ in Path(scratch).rglob("*"))
    finally:
        import shutil
        for d in (home, scratch): shutil.rmtree(d, ignore_errors=True)
    try: m = json.loads(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError): return {"world": name, "build": "?", "run": f"crashed: {p.stderr.strip()[-300:]}"}
    m["orphans"] = orphans(before, m.get("marks") or [])
    m["temp_left"] = temp_left
    return m

def orphans(before: dict, marks) -> list:
    """Processes the run left behind once its process is gone: re-parented to this one (a subreaper) or naming the
    user's files; each is counted, then ended (by its id: the run started it) so the next world starts clean."""
    time.sleep(2.0)                                      # a server whose stdin closed has had time to exit
    reap()
    now = processes()
    found = {q: cmd for q, (_, cmd) in now.items() if q not in before and q != os.getpid() and
             (q in descendants(os.getpid(), now) or any(x in cmd for x in marks))}
    for q in found:
        try: os.kill(q, 9)
        except OSError: pass
    time.sleep(0.2); reap()
    return sorted(f"{q}: {cmd[:120]}" for q, cmd in found.items())

def reap():
    "Collect the exit status of adopted children that ended (so they are not counted as alive)."
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
            if pid == 0: return
        except ChildProcessError: return

def settings(name: str, a) -> tuple:
    "(budget, k, n) for world `name`: the git world's own (each rollout starts a server: ~1 s of CPU), else the common."
    if name == "git": return a.git_budget, a.git_k, a.git_n
    return a.budget, a.k, a.n

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", default=",".join(WORLDS), help=f"worlds to run, comma-separated (default: {','.join(WORLDS)})")
    ap.add_argument("--budget", type=int, default=None, help="the search's rollout budget (default: SearchOptions')")
    ap.add_argument("--k", type=int, default=None, help="samples per situation (default: SimOptions')")
    ap.add_argument("--n", type=int, default=None, help="phrasings per situation (default: SimOptions')")
    ap.add_argument("--git-budget", type=int, default=128, help="the git world's search budget (default: 128; each "
                    "rollout with writes starts its own server on its own copy, ~1 s of CPU)")
    ap.add_argument("--git-k", type=int, default=1, help="the git world's samples per situation (default: 1)")
    ap.add_argument("--git-n", type=int, default=1, help="the git world's phrasings per situation (default: 1)")
    ap.add_argument("--timeout", type=float, default=420, help="seconds a world may take before it counts as hung")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    adopt_orphans()
    if a.child:
        print(json.dumps(child(a.child, a.budget, a.k, a.n))); return
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    print(f"whilelab at {ROOT} ({commit}); default search, offline stand-ins")
    head = (f"{'world':8} {'rollouts':>8} {'delivered':>15} {'full at':>7} {'stop':>6} {'ok-rate (exists/ok)':>20} "
            f"{'silent':>6} "
            f"{'bytes chg':>9} {'procs':>5} {'roll/s':>7}  targets")
    print(head); print("-" * len(head))
    ok_all = True
    for name in a.only.split(","):
        m = measure(name.strip(), a)
        budget, k, n = settings(name.strip(), a)
        how = f"n={n or 'default'}, k={k or 'default'}, budget={budget or 'default'}"
        if m.get("build") != "ok" or m.get("run") != "ok":
            print(f"{name:8} FAILED  build: {m.get('build')}  run: {m.get('run', '-')}  ({how})"); ok_all = False
            continue
        rate = m["ok_calls"] / m["calls"] if m["calls"] else None
        procs = len(m["procs_left"]) + len(m["orphans"])
        checks = {"delivered 100%": m["delivered_fraction"] >= 1.0,
                  "full at <= 1.25x": m["full_at"] is not None and m["full_at"] <= 1.25,
                  "ok-rate >= 90%": rate is not None and rate >= 0.9,
                  "bytes 0": m["bytes_changed"] == 0,
                  "procs 0": procs == 0}
        ok_all &= all(checks.values())
        marks = "; ".join(f"{k} {'met' if v else 'MISSED'}" for k, v in checks.items())
        ok_text = f"{m['ok_calls']}/{m['calls']} = {rate:.0%}" if rate is not None else "0/0 = -"
        full = f"{m['full_at']:6.2f}x" if m["full_at"] is not None else "     -"
        print(f"{name:8} {m['rollouts']:8} {m['delivered']:>9} {m['delivered_fraction']:5.0%} {full} {m['cost']:5.2f}x "
              f"{ok_text:>20} {m['silent']:6} {m['bytes_changed']:9} {procs:5} {m['rate']:7.1f}  {marks}")
        print(f"{'':8} {how}; cells {m['cells']}, {m['seconds']:.1f} s, stopped: {m['stopped']}, errors {m['errors']}, "
              f"pass rate {m['pass_rate']}, world answered ok {m['world_ok_all']} of all its calls; exists/ok rows whose "
              f"cell's own tool the world answered ok: {m['tool_ok']}; files and folders left in the run's TMPDIR: "
              f"{m['temp_left']}"
              + (f"; left: {m['procs_left'] + m['orphans']}" if procs else ""))
    print("\nfull at: rollouts, in landing order (the run folder's rows.jsonl), until every deliverable pair was "
          "delivered, / (plan cells x phrasings x samples) (bench/coverage.py's measure); stop: all the search's "
          "rollouts, likewise; ok-rate: calls in exists/ok cells the user's world answered ok, of those it answered; "
          "silent: exists/ok rows with no call to it")
    print("all targets met" if ok_all else "SOME TARGETS MISSED")

if __name__ == "__main__":
    main()

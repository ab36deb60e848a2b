"""Real public tool sets through the whole engine: build, plan, search to saturation, grade.

A corpus nobody on this team wrote, in four styles:
  * tau-bench domains (OpenAI function schemas + markdown policies), from ../shared/data;
  * BFCL function docs (the `bfcl-eval` package's data: the multi-turn API suites and live function sets,
    dotted names and BFCL's own type names included), read from its wheel, downloaded from PyPI at run time;
  * MCP servers' live `tools/list`, from the reference servers started over stdio with the official `mcp` SDK
    (PyPI: mcp-server-time, mcp-server-git, mcp-server-fetch; npm: @modelcontextprotocol/server-memory,
    -filesystem, -everything, -sequential-thinking), installed into a cache folder at run time;
  * typed Python functions with pydantic-model parameters and a LangChain-style `args_schema` tool.
Nothing is stored in this repository: every set is fetched or started when the benchmark runs (SOURCES says
where each comes from and under which licence).

Columns: set, style, tools, rules, build (ok or the error), seconds (simulate to saturation, k=4, n=1), crashes
(unhandled exceptions and error rows), wrongly refused (calls the schema accepts, as `jsonschema` judges the schema
as written, that the world answered invalid or refused; from unflawed rows and from the world's own proposals),
delivered / deliverable pairs (pairs the plan proved impossible are not owed) and the undelivered pairs' reasons.

    python bench/real_tools.py [--quick] [--only NAME]
"""
import argparse, asyncio, collections, json, os, subprocess, sys, tempfile, time, traceback, warnings, zipfile
from pathlib import Path
import jsonschema

CACHE = Path(os.environ.get("WHILELAB_BENCH_CACHE", Path.home() / ".cache" / "whilelab-bench"))
NPM_SERVERS = ("server-memory", "server-filesystem", "server-everything", "server-sequential-thinking")
SOURCES = {
    "tau-bench": "sierra-research/tau-bench (Yao et al. 2024), MIT; via ../shared/data/tau_bench_domains.json",
    "bfcl": "bfcl-eval on PyPI (Berkeley Function Calling Leaderboard, ShishirPatil/gorilla), Apache-2.0; data/*.json in the wheel",
    "mcp": "modelcontextprotocol/servers reference servers (PyPI and npm), MIT; live tools/list over stdio",
    "python": "typed Python functions and a LangChain-style tool written for this benchmark (the intake styles, not data)",
}
POLICIES = {   # policies in several languages for the sets that ship none; the empty one is a tools-only agent
    "en": "Verify the user's identity before any change. Never share one user's data with another. Ask for explicit "
          "confirmation (yes) before any action that changes data. If a tool fails, say so; never claim success.",
    "de": "Bestätige die Identität des Nutzers vor jeder Änderung. Gib niemals Daten eines Nutzers an andere weiter. "
          "Hole vor jeder Änderung eine ausdrückliche Zustimmung ein.",
    "zh": "在任何更改之前必须核实用户身份。不得向他人透露用户数据。执行更改前需要得到用户的明确确认。",
    "none": "",
}

# ---------------------------------------------------------------------------------------------------- the corpus
def tau_bench():
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from whilelab.core import shared_data
    p = shared_data("tau_bench_domains.json", __file__)
    if p is None: print("tau-bench: ../shared/data not found, skipped"); return []
    d = json.loads(p.read_text())
    return [(f"tau-{k}", "tau-bench", v["tools"], v["policy"]) for k, v in d.items()]

def bfcl(n_live=4):
    "The multi-turn API suites (one set each) and the live function sets with the most functions and dotted names."
    CACHE.mkdir(parents=True, exist_ok=True)
    wheels = sorted(CACHE.glob("bfcl_eval-*.whl"))
    if not wheels:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(CACHE), "bfcl-eval"], check=True)
        wheels = sorted(CACHE.glob("bfcl_eval-*.whl"))
    z, out = zipfile.ZipFile(wheels[-1]), []
    langs = iter(("en", "de", "zh", "none") * 10)
    for name in sorted(n for n in z.namelist() if "multi_turn_func_doc/" in n and n.endswith(".json")):
        fns = [json.loads(l) for l in z.read(name).decode().splitlines() if l.strip()]
        out.append((f"bfcl-{Path(name).stem}", "bfcl", fns, POLICIES[next(langs)]))
    live = [json.loads(l) for l in z.read("bfcl_eval/data/BFCL_v4_live_multiple.json").decode().splitlines() if l.strip()]
    seen, picks = set(), []
    for e in sorted(live, key=lambda e: (-sum("." in f["name"] for f in e["function"]), -len(e["function"]), e["id"])):
        key = tuple(sorted(f["name"] for f in e["function"]))
        if key in seen: continue
        seen.add(key); picks.append(e)
        if len(picks) == n_live: break
    out += [(f"bfcl-{e['id']}", "bfcl", e["function"], POLICIES[next(langs)]) for e in picks]
    return out

def _npm_servers() -> Path:
    root = CACHE / "npm"
    if not all((root / "node_modules/@modelcontextprotocol" / s).exists() for s in NPM_SERVERS):
        root.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "install", "--silent", "--prefix", str(root)] + [f"@modelcontextprotocol/{s}" for s in NPM_SERVERS], check=True)
    return root / "node_modules/@modelcontextprotocol"

async def _tools_list(cmd, args):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    async with stdio_client(StdioServerParameters(command=cmd, args=args)) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            return {"tools": [t.model_dump(exclude_none=True, by_alias=True) for t in (await s.list_tools()).tools]}

def mcp_servers():
    "Each reference server started over stdio; its tools/list result as it answers it."
    try: import mcp  # noqa: F401
    except ImportError: subprocess.run([sys.executable, "-m", "pip", "install", "-q", "mcp", "mcp-server-time", "mcp-server-git", "mcp-server-fetch"], check=True)
    work = Path(tempfile.mkdtemp())
    subprocess.run(["git", "init", "-q", str(work / "repo")], check=True)
    npm = _npm_servers()
    servers = {"time": (sys.executable, ["-m", "mcp_server_time"]), "git": (sys.executable, ["-m", "mcp_server_git", "--repository", str(work / "repo")]),
               "fetch": (sys.executable, ["-m", "mcp_server_fetch"])}
    servers.update({s.removeprefix("server-"): ("node", [str(npm / s / "dist/index.js")] + ([str(work)] if s == "server-filesystem" else []))
                    for s in NPM_SERVERS})
    langs, out = iter(("en", "none", "de", "zh") * 3), []
    for name, (cmd, args) in servers.items():
        try: out.append((f"mcp-{name}", "mcp", asyncio.run(_tools_list(cmd, args)), POLICIES[next(langs)]))
        except Exception as e: print(f"mcp-{name}: could not start ({type(e).__name__}: {e})")
    return out

def python_tools():
    "Typed functions with a pydantic-model parameter and docstrings with prose lines, plus a LangChain-style tool."
    import pydantic
    class Address(pydantic.BaseModel):
        street: str
        city: str
        postcode: str
    def get_account(account_id: str) -> dict:
        """Look up an account.

        Checks: the caller must own the account.
        Args:
            account_id: the account, such as 'A1042'"""
    def ship_parcel(account_id: str, to: Address, weight_kg: float) -> dict:
        """Book a parcel shipment for an account.

        Args:
            account_id: the paying account
            to: where it goes
            weight_kg: weight in kilograms"""
    search = {"name": "search_docs", "description": "Search the help center", "args_schema": {"type": "object", "properties": {
              "query": {"type": "string"}, "top_k": {"type": "integer", "minimum": 1, "maximum": 20}}, "required": ["query"]}}
    return [("python-shipping", "python", [get_account, ship_parcel, search], POLICIES["en"])]

# ----------------------------------------------------------------------------------------------- the measurement
def independent_ok(schema, args) -> bool:
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER).is_valid(args)

def measure(name, style, tools, policy, quick=False):
    from whilelab.core import AgentSpec, tools as as_tools
    from whilelab.world import Sandbox
    from whilelab.simulate import simulate
    from whilelab.defaults import SimOptions
    row = {"set": name, "style": style, "tools": "-", "rules": "-", "build": "ok", "seconds": "-", "crashes": 0, "wrongly_refused": 0,
           "pairs": "-", "undelivered": ""}
    stage = "build"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            spec = AgentSpec(name, tools, policy)
            ts, stage = spec.tools, "run"
            row["tools"] = len(ts)
            schemas = {t.name: t.input_schema for t in ts}
            box = Sandbox(ts, seed=0)
            for t in ts:                                   # the world's own proposals: valid, and never refused
                a = box.valid_args(t.name)
                if independent_ok(schemas[t.name], a) and box.call(t.name, a)["status"] in ("invalid", "refused"): row["wrongly_refused"] += 1
            t0 = time.perf_counter()
            sim = simulate(None, ts, policy, SimOptions(n_phrasings=1, k_samples=1 if quick else 4), progress=False)
            row["seconds"] = round(time.perf_counter() - t0, 1)
    except Exception as e:                                 # what the benchmark exists to find: recorded, never fatal
        if stage == "build": row["build"] = f"{type(e).__name__}: {str(e)[:60]}"
        else: row["crashes"] += 1; row["undelivered"] = f"{type(e).__name__}: {str(e)[:80]}"
        traceback.print_exc()
        return row
    row["rules"] = len(sim.axes["rule"])
    row["crashes"] = sum(r["error"] is not None for r in sim.rows)
    for r in sim.rows:
        if r.get("flaw"): continue
        sent = [c["function"] for m in r["messages"] for c in m.get("tool_calls") or []]
        for f, c in zip(sent, r["calls"]):
            if f["name"] in schemas and c["status"] in ("invalid", "refused") and independent_ok(schemas[f["name"]], f["arguments"]):
                row["wrongly_refused"] += c["status"] == "invalid"   # a refused echo of the schema is right to refuse
    cov = sim.coverage.attrs
    row["pairs"] = f"{cov['pairs_covered']}/{cov['pairs_planned']}"
    why = collections.Counter(x for p in sim.undelivered_pairs() for x in p["reasons"])
    row["undelivered"] = "; ".join(f"{n}x {w}" for w, n in why.most_common(2))
    return row

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="k=1 instead of 4")
    ap.add_argument("--only", default=None, help="only sets whose name contains this")
    a = ap.parse_args()
    corpus = tau_bench() + bfcl() + mcp_servers() + python_tools()
    corpus = [c for c in corpus if a.only is None or a.only in c[0]]
    print(f"{len(corpus)} tool sets in {len({c[1] for c in corpus})} styles; sources:")
    for k, v in SOURCES.items(): print(f"  {k}: {v}")
    cols = ("set", "style", "tools", "rules", "build", "seconds", "crashes", "wrongly_refused", "pairs", "undelivered")
    rows = []
    print("\n| " + " | ".join(cols) + " |\n|" + "---|" * len(cols))
    for c in corpus:
        rows.append(measure(*c, quick=a.quick))
        print("| " + " | ".join(str(rows[-1][k]) for k in cols) + " |", flush=True)
    full = sum(r["pairs"] != "-" and r["pairs"].split("/")[0] == r["pairs"].split("/")[1] for r in rows)
    print(f"\n{len(rows)} sets: {sum(r['build'] == 'ok' for r in rows)} built, {sum(r['crashes'] for r in rows if isinstance(r['crashes'], int))} crashes, "
          f"{sum(r['wrongly_refused'] for r in rows)} wrongly refused, {full} at 100% of deliverable pairs")

if __name__ == "__main__":
    main()

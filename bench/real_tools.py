"""Real public tool sets through the whole engine: build, plan, search to saturation, grade.

A corpus nobody on this team wrote, in four styles:
  * tau-bench domains (OpenAI function schemas + markdown policies), from ../shared/data;
  * BFCL function docs (the `bfcl-eval` package's data: the multi-turn API suites and live function sets,
    dotted names and BFCL's own type names included), read from its wheel, downloaded from PyPI at run time;
  * MCP servers' live `tools/list`, from the reference servers started over stdio with the official `mcp` SDK
    (PyPI: mcp-server-time, mcp-server-git, mcp-server-fetch; npm: @modelcontextprotocol/server-memory,
    -filesystem, -everything, -sequential-thinking), installed into a cache folder at run time;
  * typed Python functions with pydantic-model parameters and a LangChain-style `args_schema` tool;
  * Notion-API-shaped sets (24 and 38 tools: nested rich-text and block schemas, `format: uuid` ids), written here from
    the facts of Notion's public API reference;
  * large sets: BFCL suites played by one agent together (36, 39 and 40 tools).
Nothing is stored in this repository: every set is fetched or started when the benchmark runs (SOURCES says
where each comes from and under which licence).

Columns: set, style, tools, rules, build (ok or the error), seconds (simulate to saturation, k=4, n=1), crashes
(unhandled exceptions and error rows), wrongly refused (calls the schema accepts, as `jsonschema` judges the schema
as written, that the world answered invalid or refused; from unflawed rows and from the world's own proposals),
delivered / deliverable pairs (pairs the plan proved impossible are not owed) and as a share, rows played, seconds per
deliverable pair (a set's time should grow no faster than its pairs), the rows played by the batch that first delivered
every pair (`full_at`: the search goes on exploring behaviour until no batch shows a new one), and the undelivered
pairs' reasons.

    python bench/real_tools.py [--quick] [--only NAME]
"""
import argparse, asyncio, collections, json, os, subprocess, sys, tempfile, time, traceback, warnings, zipfile
from pathlib import Path
import jsonschema

CACHE = Path(os.environ.get("WHILELAB_BENCH_CACHE", Path.home() / ".cache" / "whilelab-bench"))
# Suites played together: two pairs BFCL's multi-turn entries list as `involved_classes` (VehicleControlAPI+MathAPI,
# TwitterAPI+VehicleControlAPI: 39 and 36 tools), and vehicle control with travel booking (40 tools; not a BFCL pair)
BFCL_COMBOS = (("vehicle_control", "math_api"), ("posting_api", "vehicle_control"), ("vehicle_control", "travel_booking"))
NPM_SERVERS = ("server-memory", "server-filesystem", "server-everything", "server-sequential-thinking")
SOURCES = {
    "tau-bench": "sierra-research/tau-bench (Yao et al. 2024), MIT; via ../shared/data/tau_bench_domains.json",
    "bfcl": "bfcl-eval on PyPI (Berkeley Function Calling Leaderboard, ShishirPatil/gorilla), Apache-2.0; data/*.json in the wheel",
    "mcp": "modelcontextprotocol/servers reference servers (PyPI and npm), MIT; live tools/list over stdio",
    "notion": "developers.notion.com API reference (endpoints, parameters, object shapes as facts; no code copied)",
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

def _bfcl_wheel() -> zipfile.ZipFile:
    "The `bfcl-eval` wheel, downloaded from PyPI into the cache on first use."
    CACHE.mkdir(parents=True, exist_ok=True)
    wheels = sorted(CACHE.glob("bfcl_eval-*.whl"))
    if not wheels:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(CACHE), "bfcl-eval"], check=True)
        wheels = sorted(CACHE.glob("bfcl_eval-*.whl"))
    return zipfile.ZipFile(wheels[-1])

def bfcl_live_multiple() -> list:
    "Every entry of BFCL v4's live_multiple set (1,053 tool sets written by real users of function-calling APIs)."
    z = _bfcl_wheel()
    return [json.loads(l) for l in z.read("bfcl_eval/data/BFCL_v4_live_multiple.json").decode().splitlines() if l.strip()]

def bfcl(n_live=4):
    "The multi-turn API suites (one set each) and the live function sets with the most functions and dotted names."
    z, out = _bfcl_wheel(), []
    langs = iter(("en", "de", "zh", "none") * 10)
    for name in sorted(n for n in z.namelist() if "multi_turn_func_doc/" in n and n.endswith(".json")):
        fns = [json.loads(l) for l in z.read(name).decode().splitlines() if l.strip()]
        out.append((f"bfcl-{Path(name).stem}", "bfcl", fns, POLICIES[next(langs)]))
    live = bfcl_live_multiple()
    seen, picks = set(), []
    for e in sorted(live, key=lambda e: (-sum("." in f["name"] for f in e["function"]), -len(e["function"]), e["id"])):
        key = tuple(sorted(f["name"] for f in e["function"]))
        if key in seen: continue
        seen.add(key); picks.append(e)
        if len(picks) == n_live: break
    out += [(f"bfcl-{e['id']}", "bfcl", e["function"], POLICIES[next(langs)]) for e in picks]
    docs = {Path(n).stem: [json.loads(l) for l in z.read(n).decode().splitlines() if l.strip()]
            for n in z.namelist() if "multi_turn_func_doc/" in n and n.endswith(".json")}
    for combo in BFCL_COMBOS:      # large sets: the suites BFCL's multi-turn entries give one agent together
        out.append(("bfcl-" + "+".join(combo), "bfcl", [f for c in combo for f in docs[c]], POLICIES["en"]))
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

# Notion's public API reference, as facts: the endpoints, their parameters and object shapes (ids are UUIDv4 strings,
# rich text is a list of text objects, a block holds rich text, a parent is a page or a database). No code copied.
_N_UUID = {"type": "string", "format": "uuid"}
def _n_id(what): return {**_N_UUID, "description": f"The ID of the {what} (a UUIDv4)."}
_N_RICH = {"type": "array", "description": "Rich text objects.", "items": {"type": "object", "properties": {
    "type": {"type": "string", "enum": ["text"]},
    "text": {"type": "object", "properties": {"content": {"type": "string", "maxLength": 2000},
             "link": {"type": ["object", "null"], "properties": {"url": {"type": "string", "format": "uri"}}}}, "required": ["content"]},
    "annotations": {"type": "object", "properties": {k: {"type": "boolean"} for k in ("bold", "italic", "strikethrough", "underline", "code")}}},
    "required": ["text"]}}
_N_PARAGRAPH = {"type": "object", "properties": {"rich_text": _N_RICH, "color": {"type": "string", "enum": ["default", "gray", "blue"]}},
                "required": ["rich_text"]}
_N_BLOCK = {"type": "object", "description": "A block object.", "properties": {
    "object": {"type": "string", "enum": ["block"]},
    "type": {"type": "string", "enum": ["paragraph", "heading_1", "heading_2", "bulleted_list_item", "to_do"]},
    "paragraph": _N_PARAGRAPH}, "required": ["type"]}
_N_PARENT = {"type": "object", "description": "The parent page or database.", "properties": {
    "type": {"type": "string", "enum": ["page_id", "database_id"]}, "page_id": _N_UUID, "database_id": _N_UUID}, "required": ["type"]}
_N_CURSOR = {"start_cursor": {"type": "string", "description": "Cursor from a previous response's next_cursor."},
             "page_size": {"type": "integer", "minimum": 1, "maximum": 100, "description": "Number of items (max 100)."}}
_N_FILTER = {"type": "object", "properties": {"property": {"type": "string"}, "rich_text": {"type": "object", "properties": {
             "contains": {"type": "string"}}}}}
_N_SORTS = {"type": "array", "items": {"type": "object", "properties": {"property": {"type": "string"},
            "direction": {"type": "string", "enum": ["ascending", "descending"]}}, "required": ["direction"]}}

def _n_tool(name, desc, props, required=()):
    return {"type": "function", "function": {"name": name, "description": desc, "parameters": {
        "type": "object", "properties": props, "required": list(required)}}}

def notion_api():
    """Two Notion-API-shaped sets: the 24 endpoints of pages, databases, blocks, comments, users, search and file uploads
    (nested schemas, `format: uuid` ids), and the fuller 38 with data sources, page moves, restores, file-upload parts and OAuth tokens."""
    t = _n_tool
    core = [
        t("retrieve_user", "Retrieve a user by id.", {"user_id": _n_id("user")}, ["user_id"]),
        t("list_users", "List all users of the workspace.", dict(_N_CURSOR)),
        t("retrieve_bot_user", "Retrieve the bot user of the token.", {}),
        t("create_page", "Create a page in a page or database.", {"parent": _N_PARENT, "properties": {"type": "object", "description": "Property values."},
          "children": {"type": "array", "items": _N_BLOCK}, "icon": {"type": "object", "properties": {"emoji": {"type": "string"}}}}, ["parent", "properties"]),
        t("retrieve_page", "Retrieve a page.", {"page_id": _n_id("page"), "filter_properties": {"type": "array", "items": {"type": "string"}}}, ["page_id"]),
        t("update_page_properties", "Update a page's properties, icon or cover.", {"page_id": _n_id("page"), "properties": {"type": "object"},
          "archived": {"type": "boolean"}, "in_trash": {"type": "boolean"}}, ["page_id"]),
        t("trash_page", "Move a page to the trash.", {"page_id": _n_id("page"), "in_trash": {"type": "boolean", "const": True}}, ["page_id", "in_trash"]),
        t("retrieve_page_property_item", "Retrieve a page property item.", {"page_id": _n_id("page"), "property_id": {"type": "string"}, **_N_CURSOR},
          ["page_id", "property_id"]),
        t("create_database", "Create a database as a child of a page.", {"parent": {"type": "object", "properties": {
          "type": {"type": "string", "const": "page_id"}, "page_id": _N_UUID}, "required": ["type", "page_id"]}, "title": _N_RICH,
          "properties": {"type": "object", "additionalProperties": {"type": "object"}, "minProperties": 1}, "is_inline": {"type": "boolean"}},
          ["parent", "properties"]),
        t("query_database", "Query a database's pages with a filter and sorts.", {"database_id": _n_id("database"), "filter": _N_FILTER,
          "sorts": _N_SORTS, **_N_CURSOR}, ["database_id"]),
        t("retrieve_database", "Retrieve a database object.", {"database_id": _n_id("database")}, ["database_id"]),
        t("update_database", "Update a database's title, description or properties.", {"database_id": _n_id("database"), "title": _N_RICH,
          "description": _N_RICH, "properties": {"type": "object"}}, ["database_id"]),
        t("retrieve_block", "Retrieve a block.", {"block_id": _n_id("block")}, ["block_id"]),
        t("update_block", "Update a block's content.", {"block_id": _n_id("block"), "paragraph": _N_PARAGRAPH, "archived": {"type": "boolean"}},
          ["block_id"]),
        t("retrieve_block_children", "Retrieve a block's children.", {"block_id": _n_id("block"), **_N_CURSOR}, ["block_id"]),
        t("append_block_children", "Append blocks to a parent block.", {"block_id": _n_id("block"), "children": {"type": "array", "items": _N_BLOCK,
          "minItems": 1, "maxItems": 100}, "after": _n_id("block to append after")}, ["block_id", "children"]),
        t("delete_block", "Archive (delete) a block.", {"block_id": _n_id("block")}, ["block_id"]),
        t("create_comment", "Add a comment to a page or a discussion thread.", {"parent": {"type": "object", "properties": {"page_id": _N_UUID},
          "required": ["page_id"]}, "discussion_id": _n_id("discussion"), "rich_text": _N_RICH}, ["rich_text"]),
        t("retrieve_comments", "List the unresolved comments of a block or page.", {"block_id": _n_id("block"), **_N_CURSOR}, ["block_id"]),
        t("retrieve_comment", "Retrieve one comment.", {"comment_id": _n_id("comment")}, ["comment_id"]),
        t("search", "Search pages and databases shared with the integration by title.", {"query": {"type": "string"},
          "filter": {"type": "object", "properties": {"value": {"type": "string", "enum": ["page", "database"]},
                     "property": {"type": "string", "const": "object"}}, "required": ["value", "property"]},
          "sort": {"type": "object", "properties": {"direction": {"type": "string", "enum": ["ascending", "descending"]},
                   "timestamp": {"type": "string", "const": "last_edited_time"}}}, **_N_CURSOR}),
        t("create_file_upload", "Start a file upload.", {"mode": {"type": "string", "enum": ["single_part", "multi_part", "external_url"]},
          "filename": {"type": "string", "maxLength": 900}, "content_type": {"type": "string"},
          "number_of_parts": {"type": "integer", "minimum": 1, "maximum": 1000}, "external_url": {"type": "string", "format": "uri"}}, ["mode"]),
        t("complete_file_upload", "Complete a multi-part file upload.", {"file_upload_id": _n_id("file upload")}, ["file_upload_id"]),
        t("retrieve_file_upload", "Retrieve a file upload.", {"file_upload_id": _n_id("file upload")}, ["file_upload_id"]),
    ]
    more = [
        t("move_page", "Move a page under another page or a data source.", {"page_id": _n_id("page"), "parent": {"type": "object",
          "properties": {"type": {"type": "string", "enum": ["page_id", "data_source_id"]}, "page_id": _N_UUID, "data_source_id": _N_UUID},
          "required": ["type"]}}, ["page_id", "parent"]),
        t("create_data_source", "Add a data source to a database.", {"parent": {"type": "object", "properties": {
          "type": {"type": "string", "const": "database_id"}, "database_id": _N_UUID}, "required": ["type", "database_id"]},
          "properties": {"type": "object", "additionalProperties": {"type": "object"}, "minProperties": 1}, "title": _N_RICH}, ["parent", "properties"]),
        t("retrieve_data_source", "Retrieve a data source and its property schema.", {"data_source_id": _n_id("data source")}, ["data_source_id"]),
        t("update_data_source", "Update a data source's title or properties.", {"data_source_id": _n_id("data source"), "title": _N_RICH,
          "properties": {"type": "object"}, "in_trash": {"type": "boolean"}}, ["data_source_id"]),
        t("query_data_source", "Query a data source's pages with a filter and sorts.", {"data_source_id": _n_id("data source"),
          "filter": _N_FILTER, "sorts": _N_SORTS, **_N_CURSOR}, ["data_source_id"]),
        t("list_data_source_templates", "List the page templates of a data source.", {"data_source_id": _n_id("data source"), **_N_CURSOR},
          ["data_source_id"]),
        t("send_file_upload", "Send the file (or one part) of a file upload.", {"file_upload_id": _n_id("file upload"),
          "part_number": {"type": "integer", "minimum": 1, "maximum": 1000}}, ["file_upload_id"]),
        t("list_file_uploads", "List the file uploads of the integration.", {"status": {"type": "string",
          "enum": ["pending", "uploaded", "expired", "failed"]}, **_N_CURSOR}),
        t("create_token", "Exchange an OAuth grant for an access token.", {"grant_type": {"type": "string",
          "enum": ["authorization_code", "refresh_token"]}, "code": {"type": "string"}, "redirect_uri": {"type": "string", "format": "uri"}},
          ["grant_type"]),
        t("introspect_token", "Whether an access token is active, and its scope.", {"token": {"type": "string"}}, ["token"]),
        t("revoke_token", "Revoke an access token.", {"token": {"type": "string"}}, ["token"]),
        t("refresh_token", "Refresh an access token.", {"refresh_token": {"type": "string"}, "grant_type": {"type": "string",
          "const": "refresh_token"}}, ["refresh_token", "grant_type"]),
        t("restore_page", "Restore a page from the trash.", {"page_id": _n_id("page"), "in_trash": {"type": "boolean", "const": False}},
          ["page_id", "in_trash"]),
        t("restore_block", "Restore an archived block.", {"block_id": _n_id("block"), "archived": {"type": "boolean", "const": False}},
          ["block_id", "archived"]),
    ]
    policy = ("Only act on pages, databases and blocks the user names by id. Confirm before archiving, trashing or "
              "deleting anything. Never share another user's email.")
    return [("notion-api", "notion", core, policy), ("notion-api-full", "notion", core + more, policy)]

# ----------------------------------------------------------------------------------------------- the measurement
def independent_ok(schema, args) -> bool:
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER).is_valid(args)

def measure(name, style, tools, policy, quick=False):
    from whilelab.core import AgentSpec, tools as as_tools
    from whilelab.world import Sandbox
    from whilelab.simulate import simulate
    from whilelab.defaults import SimOptions
    row = {"set": name, "style": style, "tools": "-", "rules": "-", "build": "ok", "seconds": "-", "crashes": 0, "wrongly_refused": 0,
           "pairs": "-", "delivered": "-", "s_per_pair": "-", "rows": "-", "full_at": "-",
           "undelivered": ""}
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
    row["delivered"] = f"{100 * cov['pairs_covered'] / max(1, cov['pairs_planned']):.1f}%"
    row["s_per_pair"] = round(row["seconds"] / max(1, cov["pairs_planned"]), 4)
    row["rows"] = len(sim.rows)
    h = sim.history         # the rows played when every deliverable pair was first delivered; the rest explored behaviour
    full = h.total_rollouts.where(h.coverage >= 1.0, drop=True).values if h is not None else []
    row["full_at"] = int(full[0]) if len(full) else "-"
    why = collections.Counter(x for p in sim.undelivered_pairs() for x in p["reasons"])
    row["undelivered"] = "; ".join(f"{n}x {w}" for w, n in why.most_common(2))
    return row

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="k=1 instead of 4")
    ap.add_argument("--only", default=None, help="only sets whose name contains this")
    a = ap.parse_args()
    picked = lambda cs: [c for c in cs if a.only is None or a.only in c[0]]
    corpus = picked(tau_bench()) + picked(bfcl()) + picked(notion_api()) + picked(python_tools())
    if a.only is None or "mcp" in a.only: corpus += picked(mcp_servers())      # servers started only when asked for
    print(f"{len(corpus)} tool sets in {len({c[1] for c in corpus})} styles; sources:")
    for k, v in SOURCES.items(): print(f"  {k}: {v}")
    cols = ("set", "style", "tools", "rules", "build", "seconds", "crashes", "wrongly_refused", "pairs", "delivered", "rows",
            "full_at", "s_per_pair", "undelivered")
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

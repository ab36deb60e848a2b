"""Real public tool sets nobody here wrote, through the whole engine (the quick form of bench/real_tools.py):
BFCL function docs from the `bfcl-eval` wheel (dotted names, BFCL type names), live `tools/list` of MCP reference
servers started over stdio (Python and Node), tau-bench, typed Python functions with pydantic parameters, and
Notion-API-shaped sets (nested schemas, uuid ids).
Each must build, play with no error row, refuse no call its schema accepts, and deliver every deliverable pair."""
import importlib.util, json, shutil, sys, warnings
from pathlib import Path
import pytest

spec = importlib.util.spec_from_file_location("real_tools", Path(__file__).resolve().parents[1] / "bench" / "real_tools.py")
rt = importlib.util.module_from_spec(spec); spec.loader.exec_module(rt)

def check(row):
    assert row["build"] == "ok", row
    assert row["crashes"] == 0 and row["wrongly_refused"] == 0, row
    covered, owed = map(int, row["pairs"].split("/"))
    assert covered == owed, row

@pytest.fixture(scope="module")
def bfcl_sets():
    try: return {name: (tools, policy) for name, _, tools, policy in rt.bfcl()}
    except Exception as e: pytest.skip(f"bfcl-eval could not be downloaded from PyPI here: {e}")

@pytest.mark.parametrize("name", ["bfcl-math_api", "bfcl-gorilla_file_system", "bfcl-message_api", "bfcl-posting_api",
                                  "bfcl-live_multiple_180-76-0", "bfcl-vehicle_control+travel_booking"])   # the last: 40 tools
def test_bfcl_sets(bfcl_sets, name):
    tools, policy = bfcl_sets[name]
    check(rt.measure(name, "bfcl", tools, policy, quick=True))

@pytest.mark.skipif(shutil.which("node") is None, reason="node is needed for the npm MCP servers")
def test_mcp_reference_servers():
    sets = rt.mcp_servers()
    assert {"mcp-time", "mcp-git", "mcp-memory", "mcp-filesystem"} <= {s[0] for s in sets}, [s[0] for s in sets]
    for name, style, tools, policy in sets: check(rt.measure(name, style, tools, policy, quick=True))

def test_typed_functions_and_tau_bench():
    for name, style, tools, policy in rt.python_tools() + rt.tau_bench()[:1]:
        check(rt.measure(name, style, tools, policy, quick=True))

def test_notion_api_shaped_sets():
    "24 and 38 tools with nested rich-text and block schemas and `format: uuid` ids: every deliverable pair."
    for name, style, tools, policy in rt.notion_api(): check(rt.measure(name, style, tools, policy, quick=True))

@pytest.fixture(scope="module")
def live_multiple():
    try: return rt.bfcl_live_multiple()
    except Exception as e: pytest.skip(f"bfcl-eval could not be downloaded from PyPI here: {e}")

def test_every_bfcl_live_multiple_set_builds_and_its_world_answers(live_multiple):
    """All 1,053 sets build (45 type a parameter `integer` or `boolean` and list strings, or put an array's enum on the
    array: read as meant, with a warning naming the tool and the field), and the world answers a call of each tool with
    arguments it proposes, and with each value of every enum, with no unhandled exception and no `invalid`."""
    from whilelab.core import tools as as_tools
    from whilelab.world import Sandbox
    assert len(live_multiple) == 1053
    warned, answered = set(), 0
    for e in live_multiple:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            ts = as_tools(e["function"])
        said = [str(w.message) for w in seen if "read as meant" in str(w.message)]
        for m in said: assert any(f"tool {t.name!r}, field input_schema.properties." in m for t in ts), m
        if said: warned.add(e["id"])
        box = Sandbox(ts, seed=0)
        for t in ts:
            args = box.valid_args(t.name)
            assert box.call(t.name, args)["status"] != "invalid", (e["id"], t.name, args)
            for p, s in t.params.items():
                for v in (s.get("enum") or s.get("items", {}).get("enum") or [])[:4]:
                    a = {**args, p: [v] if s.get("type") == "array" else v}
                    res = box.call(t.name, a)
                    assert res["status"] != "invalid", (e["id"], t.name, a, res)
                    answered += 1
    assert len(warned) == 45 and {"live_multiple_560-155-0", "live_multiple_301-131-0"} <= warned, sorted(warned)
    assert answered > 1000

def test_a_bfcl_set_read_as_meant_plays_with_no_error_row(live_multiple):
    "A set whose integer and boolean parameters list strings plays through the whole engine."
    e = next(e for e in live_multiple if e["id"] == "live_multiple_560-155-0")
    check(rt.measure("bfcl-" + e["id"], "bfcl", e["function"], rt.POLICIES["en"], quick=True))

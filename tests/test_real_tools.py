"""Real public tool sets nobody here wrote, through the whole engine (the quick form of bench/real_tools.py):
BFCL function docs from the `bfcl-eval` wheel (dotted names, BFCL type names), live `tools/list` of MCP reference
servers started over stdio (Python and Node), tau-bench, typed Python functions with pydantic parameters, and
Notion-API-shaped sets (nested schemas, uuid ids).
Each must build, play with no error row, refuse no call its schema accepts, and deliver every deliverable pair."""
import importlib.util, shutil, sys
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

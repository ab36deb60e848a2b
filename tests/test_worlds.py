"""Worlds you bring: your functions over your own state, a real MCP server over stdio (one installed from PyPI,
one written with the SDK in the test), your own agent as a plain function, and the CLI's --mcp. Every MCP server
here is a real subprocess spoken to through the official `mcp` SDK."""

import collections, json, subprocess, sys, textwrap
import pytest
from whilelab.core import canonical_json, shopfront
from whilelab.defaults import SimOptions, WorldOptions
from whilelab.rollout import strip_timings
from whilelab.simulate import simulate
from whilelab.worlds import FunctionWorld, MCPWorld, example_shop

pytest.importorskip("mcp")
ONCE = SimOptions(k_samples=1, n_phrasings=1, search=None)
TIME = [sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC"]
POLICY = """# Support
- Confirm the user's identity by email before you look at their orders.
- Only pending orders can be cancelled; tell the user when an order cannot be.
- Ask the user to confirm before you cancel an order."""


def by(rows):
    return collections.Counter(c.get("by", "sandbox") for r in rows for c in r["calls"])


def fired_where_planned(rows):
    "Rows whose planned fault could fire (the tool got a call its schema accepts) and did, out of those rows."
    reached = lambda r: {c["tool"] for c in r["calls"] if c["status"] not in ("invalid", "refused")}  # refused: an echo
    on_read = lambda r: (r["cell"]["condition"] == "write_conflict"
                         and r["cell"]["tool"].startswith(("get", "find", "list")))
    planned = [r for r in rows if r["cell"]["condition"] not in ("ok", None) and r["cell"]["tool"] in reached(r)
               and not on_read(r)]     # a write conflict never fires on a read
    return sum(any(f["fault"] == r["cell"]["condition"] for f in r["faults"]) for r in planned), len(planned)


def test_the_functions_world_answers_hashes_and_keeps_its_faults():
    shop = example_shop()
    before = canonical_json(shop.state)
    sim = simulate(None, shop.tools, POLICY, ONCE, world=shop, progress=False)
    rows = sim.rows
    assert canonical_json(shop.state) == before                      # every rollout wrote to its own copy
    assert sim.summary()["world"] == "shop" and sim.summary()["errors"] == 0
    assert by(rows)["shop"] > 0.5 * sum(by(rows).values())          # the rest: schema refusals and planned faults
    fired, planned = fired_where_planned(rows)
    assert planned > 20 and fired == planned                         # the condition axis is delivered in this world too
    # the state hash is the shop's: a cancellation that went through changed it; careful rollouts reach the reference
    went = lambda c: (c["tool"], c["status"], c.get("by")) == ("cancel_pending_order", "ok", "shop")
    cancelled = [r for r in rows if any(went(c) for c in r["calls"])]
    assert cancelled and all(r["state_hash_after"] != r["state_hash_before"] for r in cancelled)
    careful = [r for r in rows if r["flaw"] is None]
    assert sum(r["state_hash_after"] == r["reference_hash"] for r in careful) >= 0.9 * len(careful)
    assert any(r["reference_hash"] != r["state_hash_before"] for r in careful)
    # an ineligible order: the function refuses (ValueError), and the reference is the unchanged state
    inel = [r for r in rows if r["cell"]["tool"] == "cancel_pending_order" and r["cell"]["world"] == "ineligible"]
    assert inel and all(r["reference_hash"] == r["state_hash_before"] for r in inel)
    said = [m["content"] for r in inel for m in r["messages"] if m["role"] == "tool"]
    assert any("only pending orders can be cancelled" in s for s in said)


def test_the_functions_world_is_deterministic_at_any_concurrency():
    import dataclasses
    at = lambda c: dataclasses.replace(ONCE, rollout=dataclasses.replace(ONCE.rollout, concurrency=c))
    runs = [simulate(None, example_shop().tools, POLICY, at(c), world=example_shop(), progress=False) for c in (1, 32)]
    a, b = ([canonical_json(strip_timings(r)) for r in s.rows] for s in runs)
    assert a == b and len(a) > 40


def test_a_function_must_take_the_state_first():
    def get_order(order_id: str) -> dict:
        "An order."
    with pytest.raises(TypeError, match="must take the state first"):
        FunctionWorld([get_order], {})


def test_the_time_server_from_pypi_answers_its_read_only_tools():
    with MCPWorld(TIME[0], TIME[1:]) as clock:
        assert {t["name"] for t in clock.tools} == {"get_current_time", "convert_time"} == clock.read_only
        policy = "Answer questions about time zones. Never guess a time zone the user did not give."
        sim = simulate(None, None, policy, ONCE, world=clock, progress=False)
    rows = sim.rows
    assert sim.summary()["errors"] == 0 and sim.spec.tools[0].name in {"get_current_time", "convert_time"}
    assert by(rows)["mcp:mcp_server_time"] > 10
    results = lambda r: [m for m in r["messages"] if m["role"] == "tool"]
    answered = [m["content"] for r in rows for c, m in zip(r["calls"], results(r))
                if c.get("by") == "mcp:mcp_server_time" and c["status"] == "ok"]
    assert answered and all('"datetime"' in a for a in answered)     # the server's own answers, not the sandbox's
    fired, planned = fired_where_planned(rows)
    assert planned > 5 and fired == planned
    # reads change nothing: the state (the sandbox's, which answers any write) ends as it began, as the reference says
    assert all(r["state_hash_before"] == r["state_hash_after"] == r["reference_hash"] for r in rows)


NOTES_SERVER = textwrap.dedent('''
    from mcp.server.mcpserver import MCPServer
    from mcp.types import ToolAnnotations
    server, notes = MCPServer("notes", log_level="CRITICAL"), []

    @server.tool()
    def add_note(text: str) -> dict:
        """Add a note."""
        notes.append(text)
        return {"added": text, "count": len(notes)}

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def list_notes() -> dict:
        """List the notes."""
        return {"notes": list(notes)}

    server.run()
''')


def note_taker(messages, tools):
    "An agent as a plain function of the conversation and the tools: add a note, list the notes, say what they are."
    assert {t["function"]["name"] for t in tools} == {"add_note", "list_notes"}
    done = [m for m in messages if m["role"] == "tool"]
    call = lambda i, name, args: {"tool_calls": [{"id": i, "function": {"name": name, "arguments": args}}]}
    if not done: return call("a", "add_note", '{"text": "buy milk"}')
    if len(done) == 1: return call("b", "list_notes", "{}")
    return "Your notes: " + done[-1]["content"]


@pytest.mark.parametrize("writes", [False, True])
def test_a_server_written_with_the_sdk_gets_only_reads_unless_told(tmp_path, writes):
    (tmp_path / "notes.py").write_text(NOTES_SERVER)
    # the notes live in the server's memory: a fresh server per rollout is isolation enough, which `setup` vouches for
    fresh = (lambda folder: []) if writes else None
    with MCPWorld(sys.executable, [str(tmp_path / "notes.py")], writes=writes, setup=fresh) as notes:
        assert notes.read_only == {"list_notes"} and notes.name == "mcp:notes"
        sim = simulate(note_taker, None, "Keep the user's notes.", ONCE, world=notes, progress=False)
    ok = [r for r in sim.rows if r["cell"]["condition"] == "ok" and len(r["calls"]) == 2]
    assert ok and sim.summary()["errors"] == 0
    for r in ok:
        add, listed = r["calls"]
        assert listed.pop("world_said", "ok") == "ok"          # said where list_notes is the cell's planned call
        assert listed == {"tool": "list_notes", "status": "ok", "by": "mcp:notes"}
        assert add.get("by") == ("mcp:notes" if writes else None)          # not sent: the sandbox answered the write
        seen = json.loads([m for m in r["messages"] if m["role"] == "tool"][-1]["content"])["notes"]
        assert ("buy milk" in seen) == writes                              # only a write that reached the server shows
    assert all((r["reference_hash"] is None) == writes for r in sim.rows)  # state in the server's memory: unknown
    ends = {x["reason"] for r in sim.rows for x in r["rules"] if x["rule"] == "end_state"}
    assert ("the world shows no state, so there is no end state to check" in ends) == writes


def test_a_server_that_does_not_start_says_why(tmp_path):
    (tmp_path / "broken.py").write_text("import sys\nsys.stderr.write('missing config settings.yaml')\nsys.exit(3)")
    with pytest.raises(RuntimeError, match="did not start.*missing config settings.yaml"):
        MCPWorld(sys.executable, [str(tmp_path / "broken.py")], options=WorldOptions(server_timeout_s=20.0))


def test_a_world_cannot_be_shipped_to_a_cluster():
    with pytest.raises(ValueError, match="answers in this process"):
        simulate(None, None, None, ONCE, world=example_shop(), executor=object(), progress=False)


def test_the_cli_runs_on_an_mcp_server(tmp_path):
    (tmp_path / "policy.md").write_text("Answer questions about time zones.")
    (tmp_path / "once.toml").write_text("k_samples = 1\nn_phrasings = 1\nsearch = false\n")
    r = subprocess.run(["whilelab", "run", "--mcp", " ".join(TIME), "--policy", "policy.md", "--options", "once.toml",
                        "--out", "t"], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    summary = json.loads((tmp_path / "t" / "summary.json").read_text())
    rows = [json.loads(x) for x in (tmp_path / "t" / "rows.jsonl").read_text().splitlines()]
    assert summary["world"] == "mcp:mcp_server_time" and summary["errors"] == 0 and by(rows)["mcp:mcp_server_time"] > 0


@pytest.fixture
def repo(tmp_path):
    r = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(r)], check=True)
    (r / "notes.txt").write_text("first line\n")
    subprocess.run(["git", "-C", str(r), "add", "notes.txt"], check=True)
    subprocess.run(["git", "-C", str(r), "-c", "user.name=Mei", "-c", "user.email=mei@example.org", "commit", "-qm",
                    "Add notes"], check=True)
    return r


def test_the_git_server_reads_a_real_repository_the_person_names(repo):
    "No schema says which repository: a fact does, and the person gives it; the server's own answers come back."
    server = ["-m", "mcp_server_git", "--repository", str(repo)]
    with MCPWorld(sys.executable, server, facts={"repo_path": str(repo)}) as git:
        assert {"git_status", "git_log"} <= git.read_only and "git_commit" not in git.read_only
        sim = simulate(None, None, "Help with the user's git repository. Never commit without asking.", ONCE,
                       world=git, progress=False)
    results = lambda r: [m for m in r["messages"] if m["role"] == "tool"]
    sent = [(c, m["content"]) for r in sim.rows for c, m in zip(r["calls"], results(r))
            if c.get("by") == "mcp:mcp_server_git"]
    ok = [text for c, text in sent if c["status"] == "ok"]
    assert sim.summary()["errors"] == 0 and len(ok) > 10
    assert any("Add notes" in text for text in ok)                           # git_log of the real repository
    commits = subprocess.run(["git", "-C", str(repo), "log", "--oneline"], capture_output=True, text=True).stdout
    tried = any(c["tool"] == "git_commit" for r in sim.rows for c in r["calls"])
    assert tried and commits.count("\n") == 1                                # commits were asked for, none was sent


def test_the_cli_passes_facts_to_a_server(repo, tmp_path):
    (tmp_path / "policy.md").write_text("Help with the user's git repository.")
    (tmp_path / "once.toml").write_text("k_samples = 1\nn_phrasings = 1\nsearch = false\n")
    server = f"{sys.executable} -m mcp_server_git --repository {repo}"
    r = subprocess.run(["whilelab", "run", "--mcp", server, "--fact", f"repo_path={repo}", "--policy", "policy.md",
                        "--options", "once.toml", "--out", "g"], cwd=tmp_path, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr
    rows = [json.loads(x) for x in (tmp_path / "g" / "rows.jsonl").read_text().splitlines()]
    assert sum(c.get("by") == "mcp:mcp_server_git" and c["status"] == "ok" for x in rows for c in x["calls"]) > 10
    bad = subprocess.run(["whilelab", "run", "--tools", "t.json", "--fact", "repo_path", "--policy", "policy.md"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert bad.returncode == 2 and "is not NAME=VALUE" in bad.stderr


MEMBERS_SERVER = textwrap.dedent('''
    from mcp.server.mcpserver import MCPServer
    from mcp.types import ToolAnnotations
    server = MCPServer("club", log_level="CRITICAL")
    members = {"K-0031": {"member_id": "K-0031", "name": "Tove Aalto", "plan": "weekday"},
               "K-0047": {"member_id": "K-0047", "name": "Ruben Sosa", "plan": "full"}}

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def list_members() -> dict:
        """Every member of the climbing club."""
        return {"members": list(members.values())}

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def get_member(member_id: str) -> dict:
        """A member's plan. member_id: the member's id, such as 'K-0031'"""
        if member_id not in members: raise KeyError(f"no member {member_id}")
        return members[member_id]

    server.run()
''')


def test_the_person_knows_the_records_a_servers_list_tools_show(tmp_path):
    "No tables given: the records come from the server's own read tools, so the ids a person gives are real ones."
    (tmp_path / "club.py").write_text(MEMBERS_SERVER)
    with MCPWorld(sys.executable, [str(tmp_path / "club.py")]) as club:
        assert set(club.tables()["member"]) == {"K-0031", "K-0047"}
        sim = simulate(None, None, "Tell members about their plan.", ONCE, world=club, progress=False)
    asked = [c for r in sim.rows if r["cell"]["world"] == "exists" and r["cell"]["condition"] == "ok"
             for c in r["calls"] if c["tool"] == "get_member" and c.get("by") == "mcp:club"]
    assert asked and sum(c["status"] == "ok" for c in asked) >= 0.9 * len(asked)


def test_a_function_that_raises_keeps_its_worker_and_is_never_answered_timeout():
    """A plain function's own error is its answer: its worker thread takes the next call. Each error used to abandon
    the thread as if the call had hung, and once 8 were not yet gone the next call of that function was answered
    'did not return in 30 s' at once: rows that differed from run to run on a busy machine."""
    import asyncio, threading
    from whilelab.worlds import acall_within
    threads = []
    def lookup(order_id):
        threads.append(threading.current_thread())      # kept: no two threads share one
        raise KeyError(order_id)
    async def twenty():
        said = []
        for i in range(20):
            try: await acall_within(lookup, (f"#W{i}",), cap=8, most=64)
            except Exception as e: said.append(type(e).__name__)
        return said
    assert asyncio.run(twenty()) == ["KeyError"] * 20
    assert len(set(threads)) == 1, len(set(threads))     # one worker, given back after each error

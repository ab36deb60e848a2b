"""The main job and `whilelab run`, through the installed `whilelab` command, as a user runs them."""
import dataclasses, json, subprocess
from pathlib import Path
import pytest, xarray as xr
from whilelab.core import shared_data
from whilelab.rollout import strip_timings

def run(*args, cwd):
    return subprocess.run(["whilelab", *args], cwd=cwd, capture_output=True, text=True, timeout=600)

def test_demo_writes_a_run_folder_and_is_idempotent(tmp_path):
    r = run("demo", "--out", "out", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "delivered pairwise coverage" in r.stdout and "0 errors" in r.stdout
    out = tmp_path / "out"
    assert (out / "coverage.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rows = (out / "rows.jsonl").read_text().splitlines()
    summary = json.loads((out / "summary.json").read_text())
    assert len(rows) == summary["rollouts"] and summary["delivered_fraction"] == 1.0
    assert summary["stopped"].startswith("saturated: every deliverable pair delivered"), summary["stopped"]
    with xr.open_dataset(out / "plan.nc", engine="h5netcdf") as plan: assert plan.sizes["cell"] == summary["cells"]
    r2 = run("demo", "--out", "out", cwd=tmp_path)
    assert r2.returncode == 0 and (out / "rows.jsonl").read_text().splitlines() == rows
    assert json.loads((out / "summary.json").read_text()) == summary

@pytest.mark.skipif(shared_data("tau_bench_domains.json", __file__) is None, reason="../shared/data not found")
def test_run_on_a_real_domain(tmp_path):
    d = json.loads(shared_data("tau_bench_domains.json", __file__).read_text())["retail"]
    (tmp_path / "tools.json").write_text(json.dumps(d["tools"]))
    (tmp_path / "policy.md").write_text(d["policy"])
    r = run("run", "--tools", "tools.json", "--policy", "policy.md", "--out", "retail", "--k-samples", "1", "--n-phrasings", "1", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    s = json.loads((tmp_path / "retail" / "summary.json").read_text())
    assert s["errors"] == 0 and s["delivered_fraction"] > 0.95 and s["rollouts"] >= s["cells"]
    assert s["stopped"].startswith("saturated: "), s["stopped"]
    r = run("run", "--tools", "tools.json", "--policy", "policy.md", "--out", "retail2", "--k-samples", "1", "--n-phrasings", "1",
            "--processes", "2", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rows = lambda out: sorted(strip_timings(json.loads(l)) for l in (tmp_path / out / "rows.jsonl").read_text().splitlines())
    assert rows("retail2") == rows("retail")              # two worker processes play the same rows
    r = run("run", "--tools", "tools.json", "--policy", "policy.md", "--processes", "2", "--ray", cwd=tmp_path)
    assert r.returncode == 2 and "--ray and --processes" in r.stderr

def test_bad_input_names_the_problem(tmp_path):
    (tmp_path / "tools.json").write_text('[{"name": "get order!", "parameters": {}}]')
    (tmp_path / "policy.md").write_text("Never invent ids.")
    r = run("run", "--tools", "tools.json", "--policy", "policy.md", cwd=tmp_path)
    assert r.returncode == 2 and "tool name" in r.stderr and "Fix:" in r.stderr and "Traceback" not in r.stderr
    r = run("run", "--tools", "missing.json", "--policy", "policy.md", cwd=tmp_path)
    assert r.returncode == 2 and "no such file" in r.stderr

def test_schema_command_prints_row_schema(tmp_path):
    r = run("schema", cwd=tmp_path)
    assert r.returncode == 0 and "messages" in json.loads(r.stdout)["required"]

def test_bad_command_is_refused(tmp_path):
    r = run("frobnicate", cwd=tmp_path)
    assert r.returncode != 0 and "invalid choice" in r.stderr

def test_help_lists_every_option_with_its_reason(tmp_path):
    r = run("run", "--help", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "--k-samples" in r.stdout and "70-97%" in r.stdout          # a reason with a % in it prints as written


# ---- real backends named on the command line, through each SDK's own HTTP layer against strict local servers ----

def _real_run(tmp_path, *roles, env_extra=None, key="sk-ant-api03-CLITESTKEYneverwritten000000000000"):
    import os, sys
    sys.path.insert(0, str(Path(__file__).parent))
    from wire import Strict, serve, message, chat
    from whilelab.core import shopfront

    def claude(body):     # the agent: says one helpful line
        return message([{"type": "text", "text": "I can help with that. Which order is it?"}])

    def compatible(body):  # the person (first turn, then leaves) and the judge, told apart by the judge's rubric
        said = " ".join(str(m.get("content")) for m in body["messages"])
        if "LABEL: pass" in said: return chat("LABEL: pass\nREASON: it asked before acting.")
        people = [m for m in body["messages"] if m["role"] == "assistant"]
        return chat("I want to cancel my order, please." if not people else "###STOP###")

    spec = shopfront()
    (tmp_path / "tools.json").write_text(json.dumps([t.to_anthropic() for t in spec.tools]))
    (tmp_path / "policy.md").write_text(spec.policy)
    (tmp_path / "once.toml").write_text("k_samples = 1\nn_phrasings = 1\nsearch = false\n")
    a, o = Strict(claude), Strict(compatible)
    with serve(a) as url_a, serve(o) as url_o:
        args = [r.replace("URL", url_o) for r in roles]
        env = {**os.environ, "ANTHROPIC_BASE_URL": url_a, "ANTHROPIC_API_KEY": key, "WHILELAB_CACHE": "off",
               **(env_extra or {})}
        env = {k: v for k, v in env.items() if v is not None}
        command = ["whilelab", "run", "--tools", "tools.json", "--policy", "policy.md", "--options", "once.toml"]
        r = subprocess.run([*command, "--out", "real", *args], cwd=tmp_path, capture_output=True, text=True,
                           timeout=600, env=env)
    return r, a, o


def test_run_names_real_backends_and_reads_keys_from_the_environment(tmp_path):
    key = "sk-ant-api03-CLITESTKEYneverwritten000000000000"
    r, a, o = _real_run(tmp_path, "--agent", "claude:claude-sonnet-4-5", "--user", "openai:URL/v1:person-model",
                        "--judge", "openai:URL/v1:judge-model", key=key)
    assert r.returncode == 0, r.stderr
    rows = [json.loads(x) for x in (tmp_path / "real" / "rows.jsonl").read_text().splitlines()]
    assert rows and all(x["agent_family"] == "anthropic" and x["error"] is None for x in rows)
    judged = [x for x in rows if not any(not y["passed"] and y.get("hard") for y in x["rules"])]   # hard rules first

    assert judged and all(x["judge"]["label"] == "pass" for x in judged)
    assert all(x["messages"][0]["content"] == "I want to cancel my order, please." for x in rows)
    assert a.refused == [] and o.refused == [] and len(a.calls) == len(rows)      # one agent turn each; nothing refused
    assert a.keys == {key} and all(key.encode() not in p.read_bytes() for p in (tmp_path / "real").iterdir())
    assert key not in r.stdout + r.stderr


def test_run_refuses_a_judge_of_the_agents_family_and_a_missing_key(tmp_path):
    r, a, o = _real_run(tmp_path, "--agent", "claude:claude-sonnet-4-5", "--judge", "claude:claude-haiku-4-5")
    assert r.returncode == 2 and "model family 'anthropic'" in r.stderr and "--allow-same-family" in r.stderr
    assert a.calls == [] and "Traceback" not in r.stderr                     # refused before anything was played
    r, a, o = _real_run(tmp_path, "--agent", "claude:claude-sonnet-4-5", env_extra={"ANTHROPIC_API_KEY": None})
    assert r.returncode == 2 and "no API key: set ANTHROPIC_API_KEY" in r.stderr
    r, _, _ = _real_run(tmp_path, "--agent", "gemini:pro")
    assert r.returncode == 2 and "openai:BASE_URL:MODEL" in r.stderr


def test_options_prints_every_default_and_writes_a_file_run_reads(tmp_path):
    r = run("options", cwd=tmp_path)
    assert r.returncode == 0 and "WorldOptions:" in r.stdout and "server_timeout_s = 30.0" in r.stdout
    assert "tau-bench retail uses these four" in r.stdout              # each field's reason under it

    t = run("options", "--toml", cwd=tmp_path)
    (tmp_path / "o.toml").write_text(t.stdout.replace("k_samples = 4", "k_samples = 7"))
    from whilelab.cli import options_from
    from whilelab.defaults import SimOptions
    assert options_from(tmp_path / "o.toml") == SimOptions(k_samples=7)
    (tmp_path / "bad.toml").write_text("[search]\nbatch_situation = 4\n")
    (tmp_path / "p.md").write_text("Be kind.")
    r = run("run", "--tools", "t.json", "--policy", "p.md", "--options", "bad.toml", cwd=tmp_path)
    assert r.returncode == 2 and "bad.toml.search: SearchOptions has no field(s) ['batch_situation']" in r.stderr


# ---- your own world (--world, --mcp, --writes), the documented options file, a run that stops mid-way ----

SHOP = '''"A tiny shop: orders by id, and the functions that work on them."
import dataclasses, json
from pathlib import Path
from typing import Annotated
OrderId = Annotated[str, "the order id, such as '#W1001'"]
DB = {"orders": {"#W1001": {"order_id": "#W1001", "status": "pending", "total": 12.5},
                 "#W1002": {"order_id": "#W1002", "status": "delivered", "total": 40.0}}}

def get_order(db, order_id: OrderId) -> dict:
    "An order's status and total."
    return db["orders"][order_id]

def cancel_order(db, order_id: OrderId) -> dict:
    "Cancel a pending order."
    order = db["orders"][order_id]
    if order["status"] != "pending": raise ValueError("only pending orders can be cancelled")
    order["status"] = "cancelled"
    return order

def make(options=None):
    "A factory: it writes the [world] options it was given, so a test can read them."
    from whilelab.worlds import FunctionWorld
    Path("given.json").write_text(json.dumps(dataclasses.asdict(options)))
    return FunctionWorld([get_order, cancel_order], json.loads(json.dumps(DB)), name="made")

def _built():
    from whilelab.worlds import FunctionWorld
    return FunctionWorld([get_order, cancel_order], json.loads(json.dumps(DB)), name="built")

WORLD = _built()          # a world built on import, before any run
'''
ONCE = "k_samples = 1\nn_phrasings = 1\nsearch = false\n"

def _rows(folder): return [json.loads(x) for x in (folder / "rows.jsonl").read_text().splitlines()]

def _answered_by(rows, name): return [c for r in rows for c in r["calls"] if c.get("by") == name]

@pytest.fixture
def shop(tmp_path):
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "shop.py").write_text(SHOP)
    (tmp_path / "policy.md").write_text("Only cancel pending orders. Ask before cancelling anything.")
    (tmp_path / "once.toml").write_text(ONCE)
    return tmp_path


def test_run_plays_against_a_module_of_functions_and_its_state(shop):
    r = run("run", "--world", "tools/shop.py", "--policy", "policy.md", "--options", "once.toml", "--out", "w",
            cwd=shop)
    assert r.returncode == 0, r.stderr
    summary, rows = json.loads((shop / "w" / "summary.json").read_text()), _rows(shop / "w")
    assert summary["world"] == "shop" and summary["errors"] == 0 and len(rows) == summary["rollouts"]
    ok = [c for c in _answered_by(rows, "shop") if c["status"] == "ok"]
    assert {c["tool"] for c in ok} == {"get_order", "cancel_order"}        # the module's own functions answered
    assert "world shop answered" in r.stdout


def test_a_world_factory_is_given_every_world_option_of_the_run(shop):
    (shop / "opts.toml").write_text(ONCE + "\n[world]\nserver_timeout_s = 4.5\npartial_share = 0.25\n")
    r = run("run", "--world", "tools.shop:make", "--policy", "policy.md", "--options", "opts.toml", "--out", "m",
            cwd=shop)                                                        # a dotted module, importable from here
    assert r.returncode == 0, r.stderr
    from whilelab.cli import options_from
    given = json.loads((shop / "given.json").read_text())
    assert given["server_timeout_s"] == 4.5 and given["partial_share"] == 0.25
    assert given == json.loads(json.dumps(dataclasses.asdict(options_from(shop / "opts.toml").world)))
    assert json.loads((shop / "m" / "summary.json").read_text())["world"] == "made"


def test_a_world_built_before_the_run_is_played_and_told_which_options_cannot_reach_it(shop):
    (shop / "opts.toml").write_text(ONCE + "\n[world]\nserver_timeout_s = 4.5\n")
    r = run("run", "--world", "tools/shop.py:WORLD", "--policy", "policy.md", "--options", "opts.toml", "--out", "b",
            cwd=shop)
    assert r.returncode == 0, r.stderr
    assert "built before the run: the run's [world] options do not reach it. Fix: name a factory" in r.stderr
    rows = _rows(shop / "b")
    assert json.loads((shop / "b" / "summary.json").read_text())["world"] == "built" and _answered_by(rows, "built")


@pytest.mark.parametrize("ref, said", [
    ("nowhere_at_all", "no module 'nowhere_at_all' importable from"),
    ("tools/missing.py", "no such file tools/missing.py"),
    ("tools/shop.py:nothing", "has no attribute 'nothing'. Fix: name one it has"),
    ("tools/shop.py:DB", "is a dict: not a world, a factory of one, or a module of functions"),
    ("tools/needs.py:build", "needs argument(s) ['path']. Fix: give them defaults"),
    ("tools/needs.py", "no functions found that take the state first"),
    ("tools/stateless.py", "has functions but no state. Fix: add `DB = {...}`"),
    ("tools/broken.py", "importing tools/broken.py failed: No module named 'no_such_package_here'. Fix: install"),
])
def test_a_bad_world_names_the_argument_and_the_fix(shop, ref, said):
    (shop / "tools" / "needs.py").write_text("def build(path): return path\n")
    (shop / "tools" / "stateless.py").write_text("def get_order(db, order_id: str) -> dict:\n    return {}\n")
    (shop / "tools" / "broken.py").write_text("import no_such_package_here\n")
    r = run("run", "--world", ref, "--policy", "policy.md", "--options", "once.toml", cwd=shop)
    assert r.returncode == 2 and f"--world {ref}" in r.stderr and said in r.stderr and "Fix:" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and not (shop / "run").exists()


def test_writes_needs_a_world_and_a_world_plays_in_this_process(shop):
    r = run("run", "--tools", "t.json", "--policy", "policy.md", "--writes", cwd=shop)
    assert r.returncode == 2 and "--writes" in r.stderr and "Fix: add --mcp 'COMMAND' or --world" in r.stderr
    r = run("run", "--world", "tools/shop.py", "--mcp", "python -m mcp_server_time", "--policy", "policy.md", cwd=shop)
    assert r.returncode == 2 and "--mcp and --world both given" in r.stderr
    r = run("run", "--world", "tools/shop.py", "--policy", "policy.md", "--processes", "2", cwd=shop)
    assert r.returncode == 2 and "--world answers in this process" in r.stderr and "Fix: drop one" in r.stderr


def test_the_mcp_world_is_given_the_runs_world_options_and_writes(shop):
    import subprocess as sp, sys
    from whilelab.cli import build_world, options_from
    (shop / "slow.toml").write_text("[world]\nserver_timeout_s = 12.5\n")
    time_server = f"{sys.executable} -m mcp_server_time --local-timezone UTC"
    with build_world(mcp=time_server, options=options_from(shop / "slow.toml").world) as w:
        assert w.server.timeout == 12.5 and w.writes is False               # the TOML's [world] reached the server
    repo = shop / "repo"
    sp.run(["git", "init", "-q", str(repo)], check=True)
    with build_world(mcp=f"{sys.executable} -m mcp_server_git --repository {repo}", writes=True) as w:
        assert w.writes is True and w.server.timeout == 30.0
    served = shop / "served"; served.mkdir()
    with build_world(mcp=time_server, writes=True, roots=[served]) as w:    # without roots= it is refused (above)
        assert w.writes is True


def _documented_toml() -> list:
    "The TOML examples in 15_cli's prose."
    nb = json.loads((Path(__file__).parent.parent / "nbs" / "15_cli.ipynb").read_text())
    prose = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    import re
    return re.findall(r"```toml\n(.*?)```", prose, re.S)


def test_the_documented_options_files_run_end_to_end(tmp_path):
    from whilelab.core import shopfront
    spec = shopfront()
    (tmp_path / "tools.json").write_text(json.dumps([t.to_anthropic() for t in spec.tools]))
    (tmp_path / "policy.md").write_text(spec.policy)
    examples = _documented_toml()
    assert examples, "15_cli's prose shows no ```toml example"
    (tmp_path / "all.toml").write_text(run("options", "--toml", cwd=tmp_path).stdout)
    for i, text in enumerate(examples): (tmp_path / f"doc{i}.toml").write_text(text)
    for name in ["all.toml"] + [f"doc{i}.toml" for i in range(len(examples))]:
        out = tmp_path / Path(name).stem
        r = run("run", "--tools", "tools.json", "--policy", "policy.md", "--options", name, "--out", out.name,
                cwd=tmp_path)
        assert r.returncode == 0, (name, r.stderr[-2000:])
        summary = json.loads((out / "summary.json").read_text())
        assert summary["errors"] == 0 and summary["rollouts"] == len(_rows(out))


FLAKY = '''"The example shop, whose state is lost after its 300th fork while a file `lost` exists."
import copy
from pathlib import Path
from whilelab.worlds import example_shop
forks = 0
class Flaky:
    def __init__(self): self.shop = example_shop(); self.tools, self.name = self.shop.tools, "flaky"
    def call(self, name, arguments): return self.shop.call(name, arguments)
    def state_hash(self): return self.shop.state_hash()
    def fork(self):
        global forks
        forks += 1
        if forks > 300 and Path("lost").exists(): raise OSError("the disk holding the shop's state is gone")
        new = copy.copy(self); new.shop = self.shop.fork(); return new
'''

def test_a_run_that_stops_midway_keeps_its_rows_says_so_and_resumes(shop):
    (shop / "tools" / "flaky.py").write_text(FLAKY)
    (shop / "lost").write_text("")
    r = run("run", "--world", "tools/flaky.py:Flaky", "--policy", "policy.md", "--out", "f", cwd=shop)
    assert r.returncode != 0 and "the disk holding the shop's state is gone" in r.stderr
    kept = (shop / "f" / "rows.jsonl").read_text().splitlines()
    assert kept and f"The {len(kept)} rollouts played so far are kept in f/rows.jsonl" in r.stderr
    assert "Run the same command again to go on from them" in r.stderr and not (shop / "f" / "summary.json").exists()
    (shop / "lost").unlink()
    r = run("run", "--world", "tools/flaky.py:Flaky", "--policy", "policy.md", "--out", "f", cwd=shop)
    assert r.returncode == 0, r.stderr
    rows = (shop / "f" / "rows.jsonl").read_text().splitlines()
    assert rows[:len(kept)] == kept and len(rows) > len(kept)         # resumed: what was played is not played again
    assert json.loads((shop / "f" / "summary.json").read_text())["rollouts"] == len(rows)


SQL_SHOP = '''"A shop kept in an SQLite file beside this module."
from typing import Annotated
OrderId = Annotated[str, "the order id, such as '#W1001'"]
DB = "shop.db"

def get_order(db, order_id: OrderId) -> dict:
    "An order's status and total."
    row = db.execute("SELECT order_id, status, total FROM orders WHERE order_id = ?", (order_id,)).fetchone()
    if row is None: raise KeyError(f"no order {order_id}")
    return dict(zip(("order_id", "status", "total"), row))

def cancel_order(db, order_id: OrderId) -> dict:
    "Cancel a pending order."
    if get_order(db, order_id)["status"] != "pending": raise ValueError("only pending orders can be cancelled")
    db.execute("UPDATE orders SET status = 'cancelled' WHERE order_id = ?", (order_id,))
    return get_order(db, order_id)
'''

def test_run_plays_against_a_module_whose_state_is_an_sqlite_file(shop):
    import sqlite3
    (shop / "tools" / "sql_shop.py").write_text(SQL_SHOP)
    with sqlite3.connect(shop / "tools" / "shop.db") as con:       # beside the module; the run is from its parent
        con.execute("CREATE TABLE orders (order_id TEXT PRIMARY KEY, status TEXT, total REAL)")
        con.executemany("INSERT INTO orders VALUES (?, ?, ?)",
                        [("#W1001", "pending", 12.5), ("#W1002", "delivered", 40.0)])
    con.close()
    before = (shop / "tools" / "shop.db").read_bytes()
    r = run("run", "--world", "tools/sql_shop.py", "--policy", "policy.md", "--options", "once.toml", "--out", "s",
            cwd=shop)
    assert r.returncode == 0, r.stderr
    ok = [c for c in _answered_by(_rows(shop / "s"), "sql_shop") if c["status"] == "ok"]
    assert {c["tool"] for c in ok} == {"get_order", "cancel_order"}
    assert (shop / "tools" / "shop.db").read_bytes() == before              # every rollout wrote on its own copy


def test_writes_reaches_the_mcp_server_and_a_refusal_names_the_flag(tmp_path):
    import sys
    (tmp_path / "policy.md").write_text("Tell the time.")
    r = run("run", "--mcp", f"{sys.executable} -m mcp_server_time", "--writes", "--policy", "policy.md", "--out", "t",
            cwd=tmp_path)                      # writes=True reached MCPWorld: it has no directory to copy, so it refuses
    assert r.returncode == 2 and "Fix:" in r.stderr and "--root DIR" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "t").exists()
    r = run("run", "--world", "shop.py", "--root", str(tmp_path), "--policy", "policy.md", cwd=tmp_path)
    assert r.returncode == 2 and "--root names what an --mcp server works on. Fix:" in r.stderr


SLOW = '''"The example shop, answering each call after 20 ms."
import copy, time
from whilelab.worlds import example_shop
class Slow:
    def __init__(self): self.shop = example_shop(); self.tools, self.name = self.shop.tools, "slow"
    def call(self, name, arguments): time.sleep(0.02); return self.shop.call(name, arguments)
    def state_hash(self): return self.shop.state_hash()
    def fork(self): new = copy.copy(self); new.shop = self.shop.fork(); return new
'''

STARTS = 300    # seconds a run may take to write its first row: a generous bound for a busy machine, never a race
ENDS = 120      # seconds a signalled run may take to exit here (how fast it is honoured: bench/ctrl_c.py measures it)

def _wait_for(cond, p, limit=STARTS):
    "Wait until `cond()` holds (True), the run `p` ends, or `limit` seconds pass (False)."
    import time
    t = time.monotonic()
    while time.monotonic() - t < limit:
        if cond(): return True
        if p.poll() is not None: return False
        time.sleep(0.05)
    return False

def _lines(path): return path.read_bytes().count(b"\n") if path.is_file() else 0

def _stopped(p, rows):
    "Ctrl-C sent to run `p`: it exits 130, says 'stopped' and how many rows it kept, and they are the rows on disk."
    import signal
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=ENDS)
    kept = rows.read_text().splitlines()
    assert p.returncode == 130 and "whilelab: stopped." in err and "Traceback" not in err, err[-2000:]
    assert kept and f"The {len(kept)} rollouts played so far are kept in k/rows.jsonl" in err, err[-2000:]
    assert len({(r["situation_id"], r["phrasing"], r["sample"]) for r in map(json.loads, kept)}) == len(kept)
    return kept

def test_ctrl_c_keeps_the_rows_and_says_so(shop):
    (shop / "tools" / "slow.py").write_text(SLOW)
    p = subprocess.Popen(["whilelab", "run", "--world", "tools/slow.py:Slow", "--policy", "policy.md", "--out", "k"],
                         cwd=shop, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    rows = shop / "k" / "rows.jsonl"
    assert _wait_for(lambda: _lines(rows) > 0, p), p.communicate()[1][-2000:]     # the first row is on disk
    _stopped(p, rows)


BLOCKING = '''"The example shop, whose calls block (a user function sleeping) once the file `block` names the thread they run on."
import copy, pathlib, threading, time
from whilelab.worlds import example_shop
class Blocking:
    def __init__(self): self.shop = example_shop(); self.tools, self.name = self.shop.tools, "blocking"
    def call(self, name, arguments):
        if pathlib.Path("block").exists() and threading.current_thread().name.startswith(pathlib.Path("block").read_text()):
            with open("blocked", "a") as f: f.write(threading.current_thread().name + "\\n")   # the test's cue
            time.sleep(25)                       # under the server time-out (30 s): the call is still running
        return self.shop.call(name, arguments)
    def state_hash(self): return self.shop.state_hash()
    def fork(self): new = copy.copy(self); new.shop = self.shop.fork(); return new
'''

def test_ctrl_c_during_a_world_call_that_blocks(shop):
    "SIGINT while your function sleeps on a worker thread: the run stops (130), and every finished row is kept."
    (shop / "tools" / "blocking.py").write_text(BLOCKING)
    p = subprocess.Popen(["whilelab", "run", "--world", "tools/blocking.py:Blocking", "--policy", "policy.md",
                          "--out", "k"], cwd=shop, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    rows = shop / "k" / "rows.jsonl"
    assert _wait_for(lambda: _lines(rows) > 0, p), p.communicate()[1][-2000:]
    (shop / "block").touch()
    assert _wait_for(lambda: (shop / "blocked").exists(), p), p.communicate()[1][-2000:]
    before = _lines(rows)
    kept = _stopped(p, rows)
    assert len(kept) >= before


def test_a_ctrl_c_once_the_run_is_written_ends_it_quietly(shop):
    """SIGINT once the run has printed its end: the files are written and Python is tearing itself down (~0.4 s), where
    it would die of the signal without a word. It ends as finished, with every row its summary counts."""
    import signal
    p = subprocess.Popen(["whilelab", "run", "--world", "whilelab.worlds:example_shop", "--policy", "policy.md",
                          "--out", "k"], cwd=shop, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    said = []
    for line in p.stdout:         # a pipe: the end is flushed as the interpreter begins to exit
        said.append(line)
        if line.startswith("wrote "): break
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=ENDS)
    # still in `run`: it says so (130); past it, in the teardown: it exits 0. Never a death by the signal (-2)
    finished = p.returncode == 0 or p.returncode == 130 and "The run had finished: its " in err
    assert said[-1].startswith("wrote ") and finished and "Traceback" not in err, (p.returncode, err[-2000:])
    assert json.loads((shop / "k" / "summary.json").read_text())["rollouts"] == _lines(shop / "k" / "rows.jsonl") > 0


@pytest.mark.parametrize("module", ["whilelab.cli", "whilelab.command"])
def test_python_dash_m_runs_the_same_command_line(tmp_path, module):
    "`python -m whilelab.cli` printed nothing and did nothing; it and `whilelab.command` are the `whilelab` command."
    import sys
    r = subprocess.run([sys.executable, "-m", module, "options"], cwd=tmp_path, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0 and r.stdout == run("options", cwd=tmp_path).stdout and "RolloutOptions" in r.stdout


def test_the_command_starts_where_a_ctrl_c_is_heard_while_the_rest_is_imported(tmp_path):
    """`whilelab` starts in `whilelab.command`, which imports nothing of whilelab's: a Ctrl-C that lands while
    `whilelab.cli` is imported says 'stopped' and returns 130, not a traceback. It lands in code CPython runs from a
    string, as an import's can, which marks it unhandled; the mark is cleared, or `python -m` would end by the
    signal."""
    import ctypes, sys, textwrap
    from importlib.metadata import entry_points
    assert entry_points(group="console_scripts")["whilelab"].value == "whilelab.command:start"
    try: ctypes.c_int.in_dll(ctypes.pythonapi, "_Py_UnhandledKeyboardInterrupt")
    except ValueError: pytest.skip("this Python does not export the mark")
    script = tmp_path / "early.py"
    script.write_text(textwrap.dedent('''
        import ctypes, sys
        from whilelab import command
        mark = ctypes.c_int.in_dll(ctypes.pythonapi, "_Py_UnhandledKeyboardInterrupt")
        run_string = ctypes.pythonapi.PyRun_String
        run_string.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.py_object, ctypes.py_object]
        run_string.restype = ctypes.py_object
        class CtrlCWhileImported:
            def find_spec(self, name, path=None, target=None):
                if name == "whilelab.cli": run_string(b"raise KeyboardInterrupt", 257, {}, {})   # as exec runs code
        sys.meta_path.insert(0, CtrlCWhileImported())
        print(command.start(), mark.value, "whilelab.cli" in sys.modules)
    '''))
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600)
    assert (r.stdout.split(), r.stderr) == (["130", "0", "False"], "whilelab: stopped.\n"), r.stderr[-2000:]


def test_a_ctrl_c_that_lands_in_a_finalizer_is_delivered_after_it():
    "Python prints and drops an error raised in `__del__` or a weakref's callback: a Ctrl-C landing there comes again."
    import signal, time
    from whilelab import core
    class Finalized:
        def __del__(self): signal.raise_signal(signal.SIGINT)     # the Ctrl-C lands while this runs
    before = signal.signal(signal.SIGINT, core._on_sigint)
    try:
        with pytest.raises(KeyboardInterrupt):
            Finalized()                                             # finalized at once
            for _ in range(1000): time.sleep(0.01)                  # delivered within a moment, not dropped
    finally:
        signal.signal(signal.SIGINT, before); core.STOP.clear()


def test_a_ctrl_c_from_a_finalizer_that_already_stopped_the_run_is_not_raised_again():
    """A Ctrl-C landing in a finalizer while a run plays is sent again 10 ms later; if `STOP` alone stopped the run
    meanwhile, the second one broke out of the caller's `except KeyboardInterrupt` (whilelab said 'stopped' and still
    died of the signal, exit -2: bench/ctrl_c.py). Once delivered, it is never raised again."""
    import asyncio, signal, threading, time
    from whilelab import core
    class Finalized:
        def __del__(self): signal.raise_signal(signal.SIGINT)
    async def work():
        Finalized()                      # the Ctrl-C lands in its finalizer while the run's task is running
        core.stop_if_asked()             # where a loop of rollouts checks: the run stops on the flag alone
        await asyncio.sleep(30)
    before, again = signal.signal(signal.SIGINT, core._on_sigint), False
    try:
        with pytest.raises(KeyboardInterrupt): core.run_sync(work())
        try:                             # the caller's `except` clause: the resend timer has had its moment here
            for t in [t for t in threading.enumerate() if isinstance(t, threading.Timer)]: t.join(5)
            time.sleep(0.05)
        except KeyboardInterrupt: again = True
    finally:
        signal.signal(signal.SIGINT, before); core.STOP.clear()
    assert not again and not core.STOP.is_set()


def test_a_weak_sets_callback_is_a_finalizer_too():
    "A WeakSet's callback lives in `_weakrefset.py`, not `weakref.py`: a Ctrl-C there was dropped (bench/ctrl_c.py)."
    import sys, weakref
    from whilelab import core
    class Item: pass
    seen = []
    def watch(frame, event, arg):
        if event == "call" and frame.f_code.co_name == "_remove": seen.append(frame)
    items, item = weakref.WeakSet(), Item()
    items.add(item)
    sys.setprofile(watch)
    try: del item                                                   # its callback runs as it goes
    finally: sys.setprofile(None)
    assert [f.f_code.co_filename.rsplit("/", 1)[-1] for f in seen] == ["_weakrefset.py"]
    assert core._in_finalizer(seen[0]) and not core._in_finalizer(sys._getframe())


def test_a_ctrl_c_swallowed_before_a_run_stops_that_run_and_no_later_one():
    """A library's `except BaseException` can swallow the KeyboardInterrupt of a Ctrl-C between two batches: the next
    run stops all the same (it cleared the flag as it began: 2 of 45 tries ran on to the end). Once delivered, it is
    spent: a run its caller starts next plays."""
    import asyncio, signal
    from whilelab import core
    async def work(): await asyncio.sleep(0); return "done"
    async def interrupted(): signal.raise_signal(signal.SIGINT); await asyncio.sleep(30); return "late"
    before = signal.signal(signal.SIGINT, core._on_sigint)     # as whilelab's own process has it
    try:
        try: signal.raise_signal(signal.SIGINT)                # lands in code that swallows everything
        except BaseException: pass
        with pytest.raises(KeyboardInterrupt): core.run_sync(work())
        assert core.run_sync(work()) == "done"
        with pytest.raises(KeyboardInterrupt): core.run_sync(interrupted())
        assert core.run_sync(work()) == "done"                 # caught by its caller: not the next run's
    finally:
        signal.signal(signal.SIGINT, before); core.STOP.clear()


def test_the_report_prints_the_summary_its_run_wrote_and_no_other(tmp_path, capsys):
    """`whilelab run` prints the summary.json `simulate` just wrote (at 1M rollouts a second summary is a minute's read
    of every row); the same words as one computed from the rows, and never another run's file."""
    from whilelab.cli import _print_run
    from whilelab.simulate import simulate
    from whilelab.defaults import SimOptions
    out, elsewhere = tmp_path / "r", tmp_path / "empty"
    sim = simulate(options=SimOptions(n_phrasings=1, k_samples=1, search=None), out=out, progress=False)
    _print_run(sim, out, 1.0); written = capsys.readouterr().out.replace(str(out), "")
    _print_run(sim, elsewhere, 1.0); computed = capsys.readouterr().out.replace(str(elsewhere), "")
    assert written == computed and f"rollouts: {len(sim.rows)} in 1.0 s" in written, (written, computed)
    f = out / "summary.json"; s = json.loads(f.read_text())
    f.write_text(json.dumps({**s, "errors": 123456}))
    _print_run(sim, out, 1.0); assert "123456 errors" in capsys.readouterr().out          # the file, not a recount
    f.write_text(json.dumps({**s, "errors": 123456, "run_id": "another run"}))
    _print_run(sim, out, 1.0); assert "123456 errors" not in capsys.readouterr().out


def test_a_ctrl_c_main_handled_leaves_no_mark_that_ends_the_process_by_the_signal(tmp_path):
    """CPython marks a KeyboardInterrupt leaving code it ran from a string as unhandled even once caught, and
    `python -m whilelab.cli` then ended by the signal (-2) after saying 'stopped' (bench/ctrl_c.py: a Ctrl-C landing in
    an import). `main` clears the mark once it has handled the Ctrl-C, so the process ends with the 130 it returns."""
    import ctypes, sys, textwrap
    try: ctypes.c_int.in_dll(ctypes.pythonapi, "_Py_UnhandledKeyboardInterrupt")
    except ValueError: pytest.skip("this Python does not export the mark")
    script = tmp_path / "marked.py"
    script.write_text(textwrap.dedent('''
        import ctypes, sys
        from whilelab import cli
        mark = ctypes.c_int.in_dll(ctypes.pythonapi, "_Py_UnhandledKeyboardInterrupt")
        run_string = ctypes.pythonapi.PyRun_String
        run_string.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.py_object, ctypes.py_object]
        run_string.restype = ctypes.py_object
        def interrupted(a): run_string(b"raise KeyboardInterrupt", 257, {}, {})   # 257: a module's code, as exec runs
        cli._command = interrupted
        sys.argv = ["whilelab", "schema"]
        print(cli.main(), mark.value)
    '''))
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600)
    assert r.stdout.split() == ["130", "0"] and "whilelab: stopped." in r.stderr, (r.stdout, r.stderr[-2000:])

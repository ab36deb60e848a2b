"""Isolation first: a run never changes anything outside its own temporary copies -- not the user's database, files or
repository -- and never leaves a process behind. Checked by checksum (every file, `.git` included) and against the
process table, with a real SQLite file, the real `mcp-server-git` from PyPI, and servers written with the SDK that
hang."""

import hashlib, json, os, sqlite3, subprocess, sys, textwrap, time
from pathlib import Path
import pytest
from whilelab.axes import agent_axes
from whilelab.core import AgentSpec, canonical_json, run_sync
from whilelab.defaults import SimOptions, WorldOptions
from whilelab.rollout import strip_timings
from whilelab.simulate import simulate
from whilelab.worlds import FunctionWorld, MCPWorld, _pid_in

pytest.importorskip("mcp")
ONCE = SimOptions(k_samples=1, n_phrasings=1, search=None)


def checksum(root: Path) -> dict:
    "sha256 of every file under `root` (a file: itself), `.git` and SQLite side files included."
    files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}


def alive_in_group(pgid: int) -> list[int]:
    "Processes of group `pgid` that are still running (zombies waiting to be reaped do not run)."
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit(): continue
        try: stat = (d / "stat").read_text()
        except OSError: continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[2]) == pgid and fields[0] != "Z": out.append(int(d.name))
    return out


def children_of(pid: int) -> list[int]:
    "Running processes whose parent is `pid`."
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit(): continue
        try: fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError: continue
        if int(fields[1]) == pid and fields[0] != "Z": out.append(int(d.name))
    return out


# ---- a database of the user's own: a bicycle repair desk (riders, bikes, repair jobs) over SQLite

def make_db(path: Path) -> Path:
    with sqlite3.connect(path) as con:
        con.executescript("""
        CREATE TABLE riders (rider_id TEXT PRIMARY KEY, name TEXT, phone TEXT);
        CREATE TABLE jobs (job_id TEXT PRIMARY KEY, rider_id TEXT, bike TEXT, state TEXT, quote REAL);
        INSERT INTO riders VALUES ('R100', 'Ines Ruiz', '555-0101'), ('R101', 'Karl Berg', '555-0102'),
                                  ('R102', 'Ola Nowak', '555-0103');
        INSERT INTO jobs VALUES ('J1000', 'R100', 'road', 'waiting', 80.0),
                                ('J1001', 'R101', 'gravel', 'waiting', 45.5),
                                ('J1002', 'R102', 'city', 'done', 30.0), ('J1003', 'R100', 'city', 'waiting', 12.0);""")
    con.close()
    return path


def get_job(db, job_id: str) -> dict:
    "A repair job: the bike, its state and the quote. job_id: such as 'J1000'"
    row = db.execute("SELECT job_id, rider_id, bike, state, quote FROM jobs WHERE job_id = ?", (job_id,)).fetchone()
    if row is None: raise LookupError(f"no repair job {job_id}")
    return dict(zip(["job_id", "rider_id", "bike", "state", "quote"], row))


def approve_job(db, job_id: str) -> dict:
    "Approve the quote of a waiting repair job. job_id: such as 'J1000'"
    job = get_job(db, job_id)
    if job["state"] != "waiting": raise ValueError(f"job {job_id} is {job['state']}, not waiting")
    db.execute("UPDATE jobs SET state = 'approved' WHERE job_id = ?", (job_id,))
    return {**job, "state": "approved"}


POLICY = "Only waiting repair jobs can be approved. Ask the rider to confirm the quote before you approve a job."


@pytest.mark.parametrize("given", ["path", "url", "connection"])
def test_a_run_with_writes_never_changes_the_users_database(tmp_path, given):
    db = make_db(tmp_path / "repairs.db")
    before = checksum(tmp_path)
    state = {"path": str(db), "url": f"sqlite:///{db}", "connection": sqlite3.connect(db)}[given]
    world = FunctionWorld([get_job, approve_job], state, name="repairs")
    sim = simulate(None, world.tools, POLICY, ONCE, world=world, progress=False)
    if given == "connection": state.close()
    assert checksum(tmp_path) == before                      # the file, byte for byte; no journal left beside it
    approved = [r for r in sim.rows if {"tool": "approve_job", "status": "ok", "by": "repairs"} in r["calls"]]
    assert approved and all(r["state_hash_after"] != r["state_hash_before"] for r in approved)   # the copy changed
    assert sim.summary()["reached_reference"] is not None and sim.summary()["errors"] == 0


def test_the_database_world_is_deterministic(tmp_path):
    db = make_db(tmp_path / "repairs.db")
    runs = [simulate(None, None, POLICY, ONCE, world=FunctionWorld([get_job, approve_job], db),
                     progress=False) for _ in range(2)]
    a, b = ([canonical_json(strip_timings(r)) for r in s.rows] for s in runs)
    assert a == b and len(a) > 20


def test_a_state_that_is_a_file_but_not_a_database_is_refused(tmp_path):
    (tmp_path / "jobs.json").write_text("{}")
    with pytest.raises(ValueError, match="not an SQLite database. Fix"):
        FunctionWorld([get_job], str(tmp_path / "jobs.json"))
    with pytest.raises(ValueError, match="does not exist"):
        FunctionWorld([get_job], tmp_path / "nowhere.db")


def test_a_function_that_never_returns_is_a_timeout_and_the_run_goes_on(tmp_path):
    def look_up_job(db, job_id: str) -> dict:
        "Look a repair job up. job_id: such as 'J1000'"
        if job_id == "J1001":
            while True: time.sleep(0.01)                 # a lock never released
        return get_job(db, job_id)
    world = FunctionWorld([look_up_job], make_db(tmp_path / "r.db"), options=WorldOptions(server_timeout_s=0.3))
    threads = lambda: {t for t in __import__("threading").enumerate() if t.name == "whilelab-call"}
    answer = world.call("look_up_job", {"job_id": "J1001"})
    assert answer["status"] == "timeout" and "did not return in 0.3 s" in answer["payload"]["error"]
    assert world.call("look_up_job", {"job_id": "J1000"})["status"] == "ok"     # the world still answers
    world.close()
    assert threads() == set()                           # the hung thread was ended, and the idle workers with it


@pytest.fixture
def repo(tmp_path):
    r = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(r)], check=True)
    (r / "notes.txt").write_text("first line\n")
    git = ["git", "-C", str(r), "-c", "user.name=Mei", "-c", "user.email=mei@example.org"]
    subprocess.run(git + ["add", "notes.txt"], check=True)
    subprocess.run(git + ["commit", "-qm", "Add notes"], check=True)
    (r / "large.bin").write_text("staged, not committed\n")
    subprocess.run(git + ["add", "large.bin"], check=True)
    (r / "draft.txt").write_text("not staged\n")
    return r


def test_git_server_writes_reach_only_each_rollouts_copy(repo):
    "The issue's report: rollouts with writes committed into the user's repository. Now each works on its own copy."
    before = checksum(repo)
    server = ["-m", "mcp_server_git", "--repository", str(repo)]
    with MCPWorld(sys.executable, server, writes=True, facts={"repo_path": str(repo)}) as git:
        spec = AgentSpec("git", git.tools, "Help with the user's git repository.")
        axes = agent_axes(spec).restrict("tool", ["git_commit", "git_add", "git_status"])
        axes = axes.restrict("condition", ["ok", "timeout"])
        sim = simulate(None, None, spec.policy, ONCE, world=git, axes=axes, progress=False)
        pgid = _pid_in(git.server.pidfile)
    assert checksum(repo) == before                                  # every file, .git included, as it was
    wrote = [r for r in sim.rows if any(c["tool"] in ("git_commit", "git_add") and c["status"] == "ok"
                                        and c.get("by") == "mcp:mcp_server_git" for c in r["calls"])]
    assert wrote and all(r["state_hash_after"] != r["state_hash_before"] for r in wrote)      # the copies changed
    assert all(r["reference_hash"] is not None for r in sim.rows)    # the end-state check is made, on copies
    said = [m["content"] for r in sim.rows for m in r["messages"] if m["role"] == "tool"]
    assert not any("whilelab-" in s for s in said)                   # answers name the user's paths, not the copies'
    assert children_of(os.getpid()) == [] and (pgid is None or alive_in_group(pgid) == [])


def test_writes_on_a_server_with_nothing_to_copy_are_refused_with_the_fix(tmp_path):
    (tmp_path / "srv.py").write_text("from mcp.server.mcpserver import MCPServer\nMCPServer('x').run()\n")
    with pytest.raises(ValueError, match="Fix: pass roots=.*or setup="):
        MCPWorld(sys.executable, [str(tmp_path / "srv.py")], writes=True)


HANGING_SERVER = textwrap.dedent('''
    import subprocess, time
    from mcp.server.mcpserver import MCPServer
    from mcp.types import ToolAnnotations
    server = MCPServer("stuck", log_level="CRITICAL")
    helper = subprocess.Popen(["sleep", "600"])         # a child of its own, as npx and node servers have

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def lookup(key: str) -> dict:
        """Look a key up."""
        time.sleep(600)                                 # blocks the server's loop: it cannot even end its session
        return {}

    server.run()
''')


def test_a_hung_call_then_close_leaves_no_process(tmp_path):
    (tmp_path / "stuck.py").write_text(HANGING_SERVER)
    world = MCPWorld(sys.executable, [str(tmp_path / "stuck.py")],
                     options=WorldOptions(server_timeout_s=1.0, end_grace_s=1.0))
    pgid = _pid_in(world.server.pidfile)
    assert len(alive_in_group(pgid)) == 2                            # the server and its helper
    assert run_sync(world.call("lookup", {"key": "a"}))["status"] == "timeout"
    world.close()
    assert alive_in_group(pgid) == []


def test_a_process_that_exits_without_closing_leaves_no_server(tmp_path):
    (tmp_path / "stuck.py").write_text(HANGING_SERVER)
    script = textwrap.dedent(f'''
        import sys
        from whilelab.core import run_sync
        from whilelab.defaults import WorldOptions
        from whilelab.worlds import MCPWorld, _pid_in
        w = MCPWorld(sys.executable, [{str(tmp_path / "stuck.py")!r}], options=WorldOptions(server_timeout_s=1.0))
        print(_pid_in(w.server.pidfile), flush=True)
        print(run_sync(w.call("lookup", {{"key": "a"}}))["status"], flush=True)
    ''')                                                         # no close(): Python exits with the server hung
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    pgid, status = r.stdout.split()
    assert status == "timeout" and alive_in_group(int(pgid)) == []

"""Determinism and scale-out: the same seed gives byte-identical rows (timing fields aside) at concurrency 1
and 64, in process and on a local Ray instance (2 CPUs, started here), and in two fresh Python processes
with different hash seeds; a Ray worker that dies mid-shard is retried without a lost or doubled row."""
import importlib, json, os, subprocess, sys
from pathlib import Path
import pytest
from whilelab.core import shopfront
from whilelab.axes import agent_axes
from whilelab.cover import covering_array, plan_cells
from whilelab.defaults import RayOptions, RolloutOptions, SimOptions
from whilelab.rollout import situation_from_cell, rollouts, strip_timings, read_rows
from whilelab.standins import ScriptedAgent, TemplateUser
from whilelab.simulate import simulate

SPEC = shopfront()
CELLS = plan_cells(covering_array(agent_axes(SPEC), seed=0))
SITS = [situation_from_cell(c, SPEC, seed=3) for c in CELLS]

def play(**kw): return rollouts(SITS, SPEC, ScriptedAgent(), TemplateUser(), 2, 3, seed=3, progress=False, **kw)
def lines(rows): return [strip_timings(r) for r in rows]

@pytest.fixture(scope="module")
def reference(): return lines(play())

def test_concurrency_1_and_64_give_the_same_bytes(reference):
    assert lines(play(opts=RolloutOptions(concurrency=1))) == reference == lines(play(opts=RolloutOptions(concurrency=64)))

FRESH = """
import sys
from pathlib import Path
from whilelab.core import shopfront
from whilelab.axes import agent_axes
from whilelab.cover import covering_array, plan_cells
from whilelab.rollout import situation_from_cell, rollouts
from whilelab.standins import ScriptedAgent, TemplateUser
spec = shopfront()
sits = [situation_from_cell(c, spec, seed=3) for c in plan_cells(covering_array(agent_axes(spec), seed=0))]
rollouts(sits, spec, ScriptedAgent(), TemplateUser(), 2, 3, seed=3, store=Path(sys.argv[1]), keep=False, progress=False)
"""

def test_two_fresh_processes_with_different_hash_seeds_give_the_same_bytes(tmp_path, reference):
    outs = []
    for hs in ("1", "2"):
        path = tmp_path / f"rows{hs}.jsonl"
        subprocess.run([sys.executable, "-c", FRESH, str(path)], check=True, env={**os.environ, "PYTHONHASHSEED": hs}, timeout=300)
        outs.append(lines(read_rows(path)))
    assert outs[0] == outs[1] == reference

RAY_KEY = "sk-ant-api03-RAYWORKERSkeyNEVERinLOGS0123456789"

@pytest.fixture(scope="module")
def ray_local():
    ray = pytest.importorskip("ray")
    old = os.environ.get("ANTHROPIC_API_KEY")
    os.environ["ANTHROPIC_API_KEY"] = RAY_KEY       # workers inherit the environment Ray starts in: how a cluster gives them a key
    from whilelab.scale import start_ray    # tried again if Ray's node misses its fixed 30 s (a busy machine)
    start_ray(num_cpus=2, include_dashboard=False, object_store_memory=128 * 2**20, log_to_driver=False)
    yield ray
    ray.shutdown()
    if old is None: os.environ.pop("ANTHROPIC_API_KEY", None)
    else: os.environ["ANTHROPIC_API_KEY"] = old

def test_ray_executor_gives_the_in_process_rows(ray_local, reference, tmp_path):
    from whilelab.scale import RayExecutor
    ex = RayExecutor()
    assert ex.cpus() == 2
    assert lines(play(executor=ex)) == reference
    view = play(executor=ex, store=tmp_path / "rows.jsonl", keep=False)            # streamed to the driver's store
    assert len(view) == len(reference) and lines(view.sorted()) == reference
    assert len((tmp_path / "rows.jsonl").read_text().splitlines()) == len(reference)

def test_simulate_with_search_on_ray_matches_in_process(ray_local, tmp_path):
    from whilelab.scale import RayExecutor
    a = simulate(options=SimOptions(k_samples=2, seed=5), out=tmp_path / "ray", executor=RayExecutor(), progress=False)
    b = simulate(options=SimOptions(k_samples=2, seed=5), out=tmp_path / "local", progress=False)
    assert a.summary() == b.summary() and lines(a.rows) == lines(b.rows)
    assert (tmp_path / "ray" / "rows.jsonl").read_text().count("\n") == len(b.rows)

class DiesOnce(ScriptedAgent):
    "Kills its Ray worker process the first time it plays a marked rollout (a crashed node, a cgroup OOM kill)."
    def __init__(self, marker): super().__init__(); self.marker = str(marker)
    async def respond(self, messages, ctx):
        if ctx.key[1:] == (1, 2) and not os.path.exists(self.marker):
            Path(self.marker).write_text(str(os.getpid())); os._exit(1)
        return await super().respond(messages, ctx)

def test_a_dead_ray_worker_is_retried_and_no_row_is_lost_or_doubled(ray_local, reference, tmp_path):
    from ray import cloudpickle
    from whilelab.scale import RayExecutor
    cloudpickle.register_pickle_by_value(sys.modules[__name__])       # workers cannot import this test module
    marker, path = tmp_path / "died", tmp_path / "rows.jsonl"
    rows = rollouts(SITS, SPEC, DiesOnce(marker), TemplateUser(), 2, 3, seed=3, store=path, executor=RayExecutor(), progress=False)
    assert marker.exists() and int(marker.read_text()) != os.getpid()           # a worker, not this process, died
    keys = [(r["situation_id"], r["phrasing"], r["sample"]) for r in map(json.loads, path.read_text().splitlines())]
    assert len(keys) == len(set(keys)) == len(reference)
    assert lines(rows) == reference

def test_whilelab_run_with_ray_writes_the_in_process_rows(ray_local, tmp_path, monkeypatch):
    from whilelab.cli import main
    from whilelab.core import shared_data
    data = shared_data("tau_bench_domains.json", __file__)
    if data is None: pytest.skip("../shared/data not found")
    d = json.loads(data.read_text())["airline"]
    (tmp_path / "tools.json").write_text(json.dumps(d["tools"])); (tmp_path / "policy.md").write_text(d["policy"])
    monkeypatch.chdir(tmp_path)
    args = ["run", "--tools", "tools.json", "--policy", "policy.md", "--k-samples", "1", "--n-phrasings", "1"]
    assert main(args + ["--out", "ray", "--ray"]) == 0 and main(args + ["--out", "local"]) == 0
    assert lines(read_rows(tmp_path / "ray" / "rows.jsonl")) == lines(read_rows(tmp_path / "local" / "rows.jsonl"))


httpx = importlib.import_module("httpx2") if importlib.util.find_spec("httpx2") else importlib.import_module("httpx")

def echoing_api(request):
    "A Messages API that refuses every third conversation with an error body quoting the caller's credentials."
    sent = request.headers.get("x-api-key") or request.headers.get("authorization")
    body = json.loads(request.content)
    if len(body["messages"][0]["content"]) % 3 == 0:
        return httpx.Response(400, json={"type": "error", "error": {"type": "invalid_request_error", "message": f"bad request from {sent}"}})
    return httpx.Response(200, json={"id": "m", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                                     "content": [{"type": "text", "text": "I can help."}], "stop_reason": "end_turn",
                                     "stop_sequence": None, "usage": {"input_tokens": 3, "output_tokens": 3}})

def test_a_ray_run_with_a_key_leaves_it_in_no_row_task_or_ray_log(ray_local, tmp_path):
    from ray import cloudpickle
    from whilelab.roles import ClaudeAgent
    from whilelab.backends import ClaudeBackend
    from whilelab.scale import RayExecutor
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    fast = RolloutOptions(backoff_base_s=0.001, backoff_cap_s=0.002, max_retries=1)
    agent = ClaudeAgent(backend=ClaudeBackend(api_key=RAY_KEY, transport=httpx.MockTransport(echoing_api), opts=fast))
    assert RAY_KEY.encode() not in cloudpickle.dumps(agent)                 # what a task carries
    rows = rollouts(SITS, SPEC, agent, TemplateUser(), 1, 1, seed=3, opts=fast, store=tmp_path / "rows.jsonl",
                    executor=RayExecutor(), progress=False)
    assert any(not r["error"] for r in rows) and any(r["error"] and "Bearer [redacted]" in r["error"] for r in rows)
    session = Path(ray_local._private.worker._global_node.get_session_dir_path())
    files = [p for p in [*session.rglob("*"), tmp_path / "rows.jsonl"] if p.is_file()]
    assert len(files) > 10 and not [p for p in files if RAY_KEY.encode() in p.read_bytes()]

def test_a_row_read_back_from_a_store_gets_the_same_grades():
    """Stores and Ray ship rows as canonical JSON (keys sorted); a verdict must not depend on the order in which
    the agent happened to write its arguments."""
    from whilelab.core import canonical_json
    from whilelab.grade import RuleCtx, check_conduct
    from whilelab.rollout import user_msg, assistant_msg
    args = {"order_id": 7, "amount": "lots", "reason": "x"}                 # two problems; written order != sorted order
    row = {"messages": [user_msg("refund please"), assistant_msg("", [("c1", "refund_order", args)]),
                        assistant_msg("", [("c2", "update_shipping_address", {"order_id": "#W9", "address": "#W8"})])],
           "calls": [{"tool": "refund_order", "status": "invalid"}], "cell": {"tool": "refund_order"}}
    ctx = RuleCtx(SPEC)
    back = json.loads(canonical_json(row))
    assert list(back["messages"][1]["tool_calls"][0]["function"]["arguments"]) != list(args)   # the order really changed
    assert check_conduct(back, ctx) == check_conduct(row, ctx)

def test_exports_are_the_same_bytes_from_rows_in_memory_or_read_back(tmp_path):
    from whilelab.core import canonical_json
    from whilelab.cut import cut_sft, cut_dpo, cut_grpo, export
    sim = simulate(options=SimOptions(k_samples=2), progress=False)
    back = [json.loads(canonical_json(r)) for r in sim.rows]
    for cut in (cut_sft, cut_dpo, cut_grpo):
        a, b = export(cut(sim.rows, sim.spec), tmp_path / "memory"), export(cut(back, sim.spec), tmp_path / "store")
        assert all(a[k].read_bytes() == b[k].read_bytes() for k in a), cut.__name__

def test_the_demo_in_two_fresh_processes_gives_the_same_run_folder(tmp_path):
    import xarray as xr
    for hs in ("1", "2"):
        subprocess.run(["whilelab", "demo", "--out", str(tmp_path / hs)], check=True, capture_output=True, timeout=600,
                       env={**os.environ, "PYTHONHASHSEED": hs})
    a, b = (tmp_path / "1"), (tmp_path / "2")
    assert lines(read_rows(a / "rows.jsonl")) == lines(read_rows(b / "rows.jsonl"))      # graded rows, byte for byte
    for nc in ("plan.nc", "coverage.nc", "history.nc"):
        with xr.open_dataset(a / nc, engine="h5netcdf") as x, xr.open_dataset(b / nc, engine="h5netcdf") as y: assert x.identical(y), nc
    assert json.loads((a / "summary.json").read_text()) == json.loads((b / "summary.json").read_text())

def _rows_alive(run_id: str) -> int:
    "Rollout rows of `run_id` held in this process's memory (row dicts: they hold messages, so gc tracks them)."
    import gc
    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o) is dict and o.get("run_id") == run_id and "messages" in o)

def test_a_search_into_a_run_folder_gives_a_lazy_view_of_the_held_rows(tmp_path):
    from whilelab.rollout import RowView
    opts = SimOptions(k_samples=2, seed=7)
    view = simulate(options=opts, out=tmp_path / "run", progress=False)
    held = simulate(options=opts, progress=False)                      # no run folder: rows in memory, as before
    assert isinstance(view.rows, RowView) and isinstance(held.rows, list)
    assert len(view.rows) == len(held.rows) > 100
    first, again = lines(view.rows), lines(view.rows)                  # re-iterable: read from disk each time
    assert first == again == lines(held.rows)                          # the same rows, byte for byte (timings aside)
    assert lines(view.rows[10:20]) == lines(held.rows[10:20]) and strip_timings(view.rows[-1]) == lines(held.rows)[-1]
    assert view.summary() == held.summary() and view.coverage.identical(held.coverage)
    assert lines(read_rows(tmp_path / "run" / "rows.jsonl")) == lines(held.rows)

def test_a_search_into_a_run_folder_holds_no_rows_in_memory(tmp_path):
    import array
    from whilelab.axes import default_axes
    from whilelab.rollout import RowStore, RowView
    from whilelab.search import Search
    opts = SimOptions(k_samples=2, seed=7)
    sim = simulate(options=opts, out=tmp_path / "run", progress=False)
    assert _rows_alive(sim.run_id) == 0 and len(sim.rows) > 100
    assert set(vars(sim.rows)) == {"path", "offsets"} and isinstance(sim.rows.offsets, array.array)   # 8 bytes a row
    held = simulate(options=opts, progress=False)
    assert _rows_alive(held.run_id) >= len(held.rows)                  # the count sees rows where they are held
    del held
    axes = default_axes(SPEC.tools, SPEC.policy)                       # mid-search too, batch after batch
    store = RowStore(tmp_path / "search" / "rows.jsonl", "mid")
    s = Search(SPEC, ScriptedAgent(), TemplateUser(), axes, covering_array(axes, seed=7), opts, store=store,
               run_id="mid")
    s.run(max_batches=4)
    assert isinstance(s.rows, RowView) and s.total == len(s.rows) > 0 and _rows_alive("mid") == 0
    store.close()


def test_rows_of_a_run_folder_that_is_gone_say_where_they_lived(tmp_path):
    "A streamed run's rows live in its folder: once it is removed, reading them names the folder and the fix."
    import shutil
    from fastcore.test import test_fail
    from whilelab.simulate import simulate
    from whilelab.defaults import SimOptions, SearchOptions
    opts = SimOptions(k_samples=1, n_phrasings=1, search=SearchOptions(budget=32))
    sim = simulate(options=opts, out=tmp_path / "run", progress=False)
    assert len(list(sim.rows)) == len(sim.rows) > 0
    shutil.rmtree(tmp_path / "run")
    test_fail(lambda: list(sim.rows), contains="which is gone. Fix: keep the run folder")

FAILED_START = """
import sys, ray, ray._private.services as services
from whilelab.scale import start_ray
tries, real = [], services.get_node
def node_never_registers(*a, **k):     # where Ray's own 30 s wait gives up, at once: the node's processes are running
    tries.append(1)
    if sys.argv[2] == "always" or len(tries) == 1:
        raise Exception("The current node timed out during startup (a fault this test puts there)")
    return real(*a, **k)
services.get_node = node_never_registers
try:
    start_ray(int(sys.argv[3]), num_cpus=1, include_dashboard=False, object_store_memory=80 * 2**20, _temp_dir=sys.argv[1])
    print("started:", ray.is_initialized())
except Exception as e: print("raised:", e)
print("tries:", len(tries))
ray.shutdown()
"""

def _processes_naming(text: str) -> list:
    import psutil
    out = []
    for p in psutil.process_iter(["pid", "cmdline"]):
        if any(text in a for a in p.info["cmdline"] or ()): out.append((p.info["pid"], " ".join(p.info["cmdline"])[:120]))
    return out

@pytest.mark.parametrize("fails", ["always", "once"])
def test_a_ray_start_that_fails_leaves_no_process_behind(fails):
    pytest.importorskip("ray")
    import tempfile, shutil
    temp = tempfile.mkdtemp(prefix="wlray")        # short: Ray's socket paths live under it (a 107-byte limit)
    try:
        # once: the fault's start, then as many real ones as a user gets (a real start can miss Ray's 30 s under load)
        tries = 2 if fails == "always" else 1 + RayOptions().start_tries
        r = subprocess.run([sys.executable, "-c", FAILED_START, temp, fails, str(tries)], capture_output=True, text=True,
                           timeout=900)
        if fails == "always": assert "raised: The current node timed out" in r.stdout and "tries: 2" in r.stdout, r.stdout
        else:
            tried = int(r.stdout.split("tries: ")[-1].split()[0])
            assert "started: True" in r.stdout and tried >= 2, (r.stdout, r.stderr[-2000:])
        assert _processes_naming(temp) == []      # gcs_server, raylet, monitors, agents: every one of both starts
    finally:
        for pid, _ in _processes_naming(temp): os.kill(pid, 9)
        shutil.rmtree(temp, ignore_errors=True)

"""A run killed (SIGKILL) or interrupted (Ctrl-C) part-way resumes with no row lost and none duplicated,
and gives the same rows, byte for byte apart from timings, as a run that was never stopped.

The runs to be stopped cannot finish first, however busy the machine: one rollout waits at a gate (a file
the test creates only for the resumed run), so the run is certain to be live when the signal comes."""
import json, signal, subprocess, sys, time
import pytest
from whilelab.rollout import read_rows, strip_timings

SCRIPT = """
import asyncio, os, signal, sys
# as a terminal starts a program: the children of a background job (a CI step, `cmd &`) inherit an ignored SIGINT,
# and whilelab leaves an ignored Ctrl-C ignored, as Python does; this run is one a person can interrupt
signal.signal(signal.SIGINT, signal.default_int_handler)
from whilelab.simulate import simulate
from whilelab.standins import ScriptedAgent
from whilelab.defaults import SimOptions, RolloutOptions, SearchOptions
out, mode, gate, gate_at = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])

class Gated(ScriptedAgent):
    "The scripted agent, except that the gate_at-th rollout to start waits until the gate file exists."
    started = 0
    async def respond(self, messages, ctx):
        if not any(m["role"] == "assistant" for m in messages):
            Gated.started += 1
            if Gated.started == gate_at:
                while not os.path.exists(gate): await asyncio.sleep(0.01)
        return await super().respond(messages, ctx)

search = SearchOptions() if mode == "search" else None
n, k = (1, 4) if search else (4, 8)
simulate(Gated(), options=SimOptions(n_phrasings=n, k_samples=k, search=search, rollout=RolloutOptions(flush_rows=16, flush_seconds=0.05)),
         out=out, progress=False)
"""

def start(out, mode="plan", gate=None, gate_at=0):
    "A run in a fresh process; with `gate` (a path not yet there), its `gate_at`-th rollout waits until the test creates it."
    return subprocess.Popen([sys.executable, "-c", SCRIPT, str(out), mode, str(gate), str(gate_at)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)

STARTS = 300   # seconds a run may take to write its rows or to start: generous for a busy machine, never a race
ENDS = 120     # seconds a signalled run may take to exit (how fast Ctrl-C is honoured: bench/ctrl_c.py measures it)

def wait_for_rows(path, n, proc, timeout=STARTS):
    t = time.time()
    while time.time() - t < timeout:
        if path.exists() and path.read_bytes().count(b"\n") >= n: return True
        if proc.poll() is not None: return False
        time.sleep(0.01)
    return False

def _ended(started: list):
    "Kill the runs still going: a test that fails (a timeout, an assertion) leaves no process behind."
    for p in started:
        if p.poll() is None: p.kill(); p.wait()

@pytest.fixture
def runs():
    "`start`, for a test: its runs are ended with it, whatever happened."
    started = []
    yield lambda *a, **k: started.append(start(*a, **k)) or started[-1]
    _ended(started)

@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    out, p = tmp_path_factory.mktemp("ref"), None
    try: p = start(out); assert p.wait(300) == 0, p.stderr.read()
    finally: _ended([p] if p else [])
    return [strip_timings(r) for r in read_rows(out / "rows.jsonl")]

@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT])
def test_interrupted_run_resumes_without_loss_or_duplicates(tmp_path, reference, sig, runs):
    path, gate = tmp_path / "rows.jsonl", tmp_path.parent / f"gate-{tmp_path.name}"
    p = runs(tmp_path, gate=gate, gate_at=200)
    assert wait_for_rows(path, 100, p), p.stderr.read()
    assert p.poll() is None                                   # cannot have finished: one rollout waits at the gate
    p.send_signal(sig)
    assert p.wait(ENDS) == -sig, p.stderr.read()[-2000:]     # an uncaught Ctrl-C ends Python by SIGINT: it was honoured
    partial = path.read_bytes().count(b"\n")
    assert 0 < partial < len(reference)
    gate.touch()
    p = runs(tmp_path, gate=gate, gate_at=200); assert p.wait(300) == 0, p.stderr.read()
    lines = path.read_text().splitlines()
    keys = [(r["situation_id"], r["phrasing"], r["sample"]) for r in map(json.loads, lines)]
    assert len(keys) == len(set(keys)) == len(reference)
    assert [strip_timings(r) for r in read_rows(path)] == reference

def test_killed_search_resumes_to_the_same_rows(tmp_path, runs):
    """The search re-derives each batch from the rows before it, so a killed search resumed from its store
    plays exactly the rollouts an uninterrupted one does."""
    ref_dir = tmp_path / "ref"; ref_dir.mkdir()
    p = runs(ref_dir, "search"); assert p.wait(300) == 0, p.stderr.read()
    reference = [strip_timings(r) for r in read_rows(ref_dir / "rows.jsonl")]
    out, gate = tmp_path / "killed", tmp_path / "gate"; out.mkdir()
    p = runs(out, "search", gate, gate_at=len(reference) // 2)
    assert wait_for_rows(out / "rows.jsonl", len(reference) // 3, p), p.stderr.read()
    assert p.poll() is None                                   # cannot have finished: one rollout waits at the gate
    p.kill(); p.wait(ENDS)
    gate.touch()
    p = runs(out, "search", gate, gate_at=len(reference) // 2); assert p.wait(300) == 0, p.stderr.read()
    assert [strip_timings(r) for r in read_rows(out / "rows.jsonl")] == reference
    assert json.loads((out / "summary.json").read_text())["stopped"].startswith("saturated: ")

WRITING = """
import signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)     # as from a terminal (see SCRIPT)
import h5netcdf
from whilelab.simulate import simulate
from whilelab.defaults import SimOptions
opened, cut = h5netcdf.File.__init__, []
def cut_short(self, *a, **k):
    "A Ctrl-C that lands as the run's first netCDF file (plan.nc) is opened."
    if not cut: cut.append(1); signal.raise_signal(signal.SIGINT)
    return opened(self, *a, **k)
h5netcdf.File.__init__ = cut_short
try: simulate(options=SimOptions(n_phrasings=1, k_samples=1, search=None), out=sys.argv[1], progress=False)
except KeyboardInterrupt: print("stopped")
"""

def test_a_ctrl_c_as_a_netcdf_file_is_written_waits_for_the_whole_file(tmp_path):
    "The file is written whole and the run stops: no half-made h5netcdf object printing a traceback as Python exits."
    p = subprocess.Popen([sys.executable, "-c", WRITING, str(tmp_path / "run")], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try: out, err = p.communicate(timeout=STARTS)
    finally: _ended([p])
    import xarray as xr
    with xr.open_dataset(tmp_path / "run" / "plan.nc", engine="h5netcdf") as plan: sizes = dict(plan.sizes)
    left = sorted(f.name for f in (tmp_path / "run").iterdir() if f.suffix == ".tmp")
    got = (p.returncode, out.strip(), left, "Exception ignored" in err, bool(sizes))
    assert got == (0, "stopped", [], False, True), err

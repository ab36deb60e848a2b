"""Crash and resume, twenty times in a row: a streaming run is killed (SIGKILL) at random moments -- while
starting up, while repairing the store, mid-write -- and resumed each time. At the end the store is valid
JSONL, with every row once and the same bytes (timings aside) as a run that was never killed."""
import json, random, signal, subprocess, sys, time
import pytest
from whilelab.rollout import read_rows, strip_timings

SCRIPT = """
import sys
from pathlib import Path
from whilelab.core import shopfront
from whilelab.axes import agent_axes
from whilelab.cover import covering_array, plan_cells
from whilelab.defaults import RolloutOptions
from whilelab.rollout import situation_from_cell, rollouts
from whilelab.standins import ScriptedAgent, TemplateUser
spec = shopfront()
sits = [situation_from_cell(c, spec, seed=7) for c in plan_cells(covering_array(agent_axes(spec), seed=0))]
rollouts(sits, spec, ScriptedAgent(), TemplateUser(), 4, 24, seed=7, store=Path(sys.argv[1]), keep=False, progress=False,
         opts=RolloutOptions(flush_rows=8, flush_seconds=0.02))   # small flushes: more moments where a kill tears a write
"""
KILLS = 20

def start(path): return subprocess.Popen([sys.executable, "-c", SCRIPT, str(path)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
def count(path): return path.read_bytes().count(b"\n") if path.exists() else 0
def size(path): return path.stat().st_size if path.exists() else 0

@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    path = tmp_path_factory.mktemp("ref") / "rows.jsonl"
    t, p = time.time(), start(path)
    while size(path) == 0 and p.poll() is None: time.sleep(0.002)
    first_row = time.time() - t                                  # start-up: imports, plan, situations
    assert p.wait(300) == 0, p.stderr.read()
    return [strip_timings(r) for r in read_rows(path)], size(path), first_row

def test_twenty_kills_at_random_moments_lose_and_double_nothing(tmp_path, reference):
    reference, full, startup = reference
    rng, path, total = random.Random(2026), tmp_path / "rows.jsonl", len(reference)
    mid_run = 0
    for i in range(KILLS):
        before, p = size(path), start(path)
        if rng.random() < 0.25: time.sleep(rng.uniform(0, startup))      # during start-up, or while the store is read and repaired
        else:                                                              # after a random share of what is left (mid-write)
            target = before + rng.uniform(0, 1.6) * (full - before) / (KILLS - i + 1)
            t = time.time()
            while size(path) < target and p.poll() is None and time.time() - t < 120: time.sleep(0.001)
        running = p.poll() is None
        p.send_signal(signal.SIGKILL); p.wait(60)
        mid_run += running and 0 < count(path) < total
        assert p.returncode in (-signal.SIGKILL, 0), (i, p.returncode, p.stderr.read().decode()[-2000:])
    assert mid_run >= KILLS // 2, f"only {mid_run} of {KILLS} kills landed mid-run"
    p = start(path); assert p.wait(300) == 0, p.stderr.read().decode()[-2000:]
    raw = path.read_bytes()
    assert raw.endswith(b"\n")
    rows = [json.loads(line) for line in raw.decode().splitlines()]      # every line is valid JSON
    keys = [(r["situation_id"], r["phrasing"], r["sample"]) for r in rows]
    assert len(keys) == len(set(keys)) == total, (len(keys), len(set(keys)), total)   # none lost, none doubled
    got = [strip_timings(r) for r in read_rows(path)]
    assert got == reference, next((i, a[:300], b[:300]) for i, (a, b) in enumerate(zip(got, reference)) if a != b)

def test_a_second_run_on_the_same_store_is_refused_while_the_first_writes(tmp_path, reference):
    reference = reference[0]
    path = tmp_path / "rows.jsonl"
    first = start(path)
    t = time.time()
    while count(path) < 50 and first.poll() is None and time.time() - t < 120: time.sleep(0.005)
    second = start(path)                                   # a notebook and a terminal on one folder, say
    assert second.wait(120) != 0 and "being written by another run" in second.stderr.read().decode()
    assert first.wait(300) == 0, first.stderr.read()
    keys = [(r["situation_id"], r["phrasing"], r["sample"]) for r in map(json.loads, path.read_text().splitlines())]
    assert len(keys) == len(set(keys)) == len(reference)
    third = start(path); assert third.wait(300) == 0       # once the first is done, the store opens again (and has nothing to add)
    assert count(path) == len(reference)

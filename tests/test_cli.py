"""The main job, through the installed `whilelab` command, as a user runs it."""
import subprocess, sys
from pathlib import Path

def run(*args, cwd):
    return subprocess.run(["whilelab", *args], cwd=cwd, capture_output=True, text=True, timeout=300)

def test_demo_writes_heatmap_and_plan_and_is_idempotent(tmp_path):
    r = run("demo", "--out", "out", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "pairwise plan:" in r.stdout and "tool" in r.stdout and "write_conflict" in r.stdout
    png, csv = tmp_path / "out" / "coverage.png", tmp_path / "out" / "plan.csv"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    first = csv.read_text()
    assert len(first.splitlines()) > 40
    r2 = run("demo", "--out", "out", cwd=tmp_path)
    assert r2.returncode == 0 and r2.stdout == r.stdout and csv.read_text() == first

def test_schema_command_prints_row_schema(tmp_path):
    import json
    r = run("schema", cwd=tmp_path)
    assert r.returncode == 0 and "messages" in json.loads(r.stdout)["required"]

def test_bad_command_is_refused(tmp_path):
    r = run("frobnicate", cwd=tmp_path)
    assert r.returncode != 0 and "invalid choice" in r.stderr

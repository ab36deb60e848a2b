"""The main job and `whilelab run`, through the installed `whilelab` command, as a user runs them."""
import json, subprocess
import pytest, xarray as xr
from whilelab.core import shared_data

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
    assert len(rows) == summary["rollouts"] and summary["stopped"] == "saturated" and summary["delivered_fraction"] == 1.0
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
    assert s["errors"] == 0 and s["stopped"] == "saturated" and s["delivered_fraction"] > 0.95 and s["rollouts"] >= s["cells"]

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

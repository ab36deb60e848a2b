"""The main job and `whilelab run`, through the installed `whilelab` command, as a user runs them."""
import json, subprocess
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
    assert "tau-bench retail's statuses" in r.stdout                   # each field's reason under it

    t = run("options", "--toml", cwd=tmp_path)
    (tmp_path / "o.toml").write_text(t.stdout.replace("k_samples = 4", "k_samples = 7"))
    from whilelab.cli import options_from
    from whilelab.defaults import SimOptions
    assert options_from(tmp_path / "o.toml") == SimOptions(k_samples=7)
    (tmp_path / "bad.toml").write_text("[search]\nbatch_situation = 4\n")
    (tmp_path / "p.md").write_text("Be kind.")
    r = run("run", "--tools", "t.json", "--policy", "p.md", "--options", "bad.toml", cwd=tmp_path)
    assert r.returncode == 2 and "bad.toml.search: SearchOptions has no field(s) ['batch_situation']" in r.stderr

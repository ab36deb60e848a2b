"""The README gives exactly two set-up commands, and CI runs the second."""
import re, subprocess, sys
from pathlib import Path
ROOT = Path(__file__).resolve().parent.parent

def test_exactly_two_commands_and_ci_runs_the_test_one():
    blocks = re.findall(r"```sh\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    cmds = [l for b in blocks for l in b.strip().splitlines() if l.strip()]
    assert len(cmds) == 2, cmds
    assert "whilelab demo" in cmds[0] and "pip install" in cmds[0]
    assert cmds[1] in (ROOT / ".ci" / "run").read_text()

def test_readme_is_generated_from_index_notebook():
    r = subprocess.run([sys.executable, "tools/readme.py", "--check"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr

"""The search panel in a real browser: JupyterLab on 127.0.0.1, Debian's chromium driven by Playwright.
A slider moved in the page must reach the kernel and the search engine. The test stops what it starts."""
import contextlib, json, os, secrets, subprocess, sys, time, urllib.request
import pytest
from conftest import HAVE_CHROMIUM, chromium_page, free_port

pytestmark = pytest.mark.skipif(not HAVE_CHROMIUM, reason="Debian chromium is not installed (tests/run.sh installs it)")

CELL = """
import json, pathlib
from whilelab.core import shopfront
from whilelab.axes import agent_axes
from whilelab.cover import covering_array
from whilelab.defaults import SimOptions
from whilelab.models import ScriptedAgent, TemplateUser
from whilelab.search import Search
from whilelab.widgets import SearchPanel
spec = shopfront(); axes = agent_axes(spec)
search = Search(spec, ScriptedAgent(), TemplateUser(), axes, covering_array(axes, seed=0), SimOptions(n_phrasings=1, k_samples=2))
panel = SearchPanel(search)
def record(change):
    pathlib.Path("seen.json").write_text(json.dumps({"slider": change["new"], "engine": search.weights["open_ended"]}))
panel.weight["open_ended"].observe(record, names="value")
pathlib.Path("ready.json").write_text(json.dumps({"engine": search.weights["open_ended"]}))
panel
"""

def wait_http(url, proc, timeout=90):
    t = time.time()
    while time.time() - t < timeout:
        if proc.poll() is not None: raise RuntimeError(f"jupyter lab exited early:\n{proc.stderr.read().decode()[-2000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200: return
        except OSError: time.sleep(0.3)
    raise TimeoutError(f"jupyter lab did not answer at {url}")

def wait_file(path, timeout=90):
    t = time.time()
    while time.time() - t < timeout:
        if path.exists() and path.read_text().strip(): return json.loads(path.read_text())
        time.sleep(0.2)
    raise TimeoutError(f"{path.name} never appeared: the kernel did not see the page")

@contextlib.contextmanager
def running_lab(tmp_path):
    "JupyterLab serving a notebook with the panel from `tmp_path`; stopped, with its kernels, on exit."
    import nbformat
    nb = nbformat.v4.new_notebook(); nb.cells = [nbformat.v4.new_code_cell(CELL)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, tmp_path / "panel.ipynb")
    port, token = free_port(), secrets.token_hex(16)
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(tmp_path / "cfg"), "JUPYTER_DATA_DIR": str(tmp_path / "data"),
           "JUPYTER_RUNTIME_DIR": str(tmp_path / "rt"), "MPLBACKEND": "Agg"}
    env.pop("JUPYTER_PATH", None)
    proc = subprocess.Popen([sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
                             f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={tmp_path}",
                             "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate", "--LabApp.news_url=None",
                             *(["--allow-root"] if os.geteuid() == 0 else [])],
                            cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        wait_http(f"http://127.0.0.1:{port}/api/status?token={token}", proc)
        yield f"http://127.0.0.1:{port}", token, tmp_path
    finally:
        proc.terminate()
        try: proc.wait(20)
        except subprocess.TimeoutExpired: os.killpg(proc.pid, 9); proc.wait(10)
        try: os.killpg(proc.pid, 9)          # any kernel the server left behind
        except ProcessLookupError: pass

@pytest.fixture
def lab(tmp_path):
    with running_lab(tmp_path) as x: yield x

def test_slider_in_the_browser_reaches_the_kernel(lab):
    base, token, root = lab
    with chromium_page() as page:
        page.goto(f"{base}/lab/tree/panel.ipynb?token={token}", wait_until="domcontentloaded", timeout=90_000)
        page.wait_for_selector(".jp-Notebook .jp-Cell .cm-content", timeout=90_000)
        page.locator(".jp-StatusBar-TextItem", has_text="Idle").first.wait_for(timeout=90_000)   # the kernel is up
        page.click(".jp-Notebook .jp-Cell .cm-content")
        page.keyboard.press("Shift+Enter")
        before = wait_file(root / "ready.json")["engine"]
        row = page.locator(".widget-slider", has=page.locator(".widget-label", has_text="open_ended"))
        handle = row.locator(".noUi-handle").first
        handle.wait_for(timeout=60_000)
        handle.focus()
        for _ in range(3): page.keyboard.press("ArrowLeft")
        seen = wait_file(root / "seen.json")
        page.screenshot(path=str(root / "panel.png"))
    assert before - 0.035 < seen["slider"] < before - 0.005, (before, seen)           # the kernel got the moved slider's value
    assert abs(seen["engine"] - seen["slider"]) < 1e-6                                # and the engine took it as the arm's weight

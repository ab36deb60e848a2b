"""The search panel in a real browser: JupyterLab on 127.0.0.1, Debian's chromium driven by Playwright.
A slider moved in the page must reach the kernel and the search engine. The test stops what it starts."""
import contextlib, json, os, re, secrets, subprocess, sys, time, urllib.request
import pytest
from conftest import HAVE_CHROMIUM, chromium_page, free_port

pytestmark = pytest.mark.skipif(not HAVE_CHROMIUM, reason="Debian chromium is not installed (tests/run.sh installs it)")

CELL = """
import json, pathlib
from whilelab.core import shopfront
from whilelab.axes import agent_axes
from whilelab.cover import covering_array
from whilelab.defaults import SimOptions
from whilelab.standins import ScriptedAgent, TemplateUser
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

LIVE = """
import json, pathlib, time
from IPython.display import display
from whilelab.core import shopfront
from whilelab.axes import agent_axes
from whilelab.cover import covering_array
from whilelab.defaults import SimOptions, SearchOptions
from whilelab.standins import ScriptedAgent, TemplateUser
from whilelab.search import Search
from whilelab.simulate import simulate
from whilelab.grade import gold_from_flaws
from whilelab.widgets import SearchPanel, JudgeInspector
spec = shopfront(); axes = agent_axes(spec)
search = Search(spec, ScriptedAgent(), TemplateUser(), axes, covering_array(axes, seed=0),
                SimOptions(n_phrasings=1, k_samples=2, search=SearchOptions(budget=160, patience=1000)))
play = search.step
def gated():      # before batches 2 and 3 the run waits for the test to say go: it has seen the page as it stood
    if search.batch in (2, 3):
        pathlib.Path(f"at{search.batch}.json").write_text("{}")
        while not pathlib.Path(f"go{search.batch}.json").exists(): time.sleep(0.1)
    return play()
search.step = gated
panel = SearchPanel(search)
sim = simulate(options=SimOptions(k_samples=2, search=None), progress=False)
inspector = JudgeInspector(lambda row: "pass", sim.rows, gold_from_flaws)
display(panel)
inspector
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
def running_lab(tmp_path, cell=CELL):
    "JupyterLab serving a notebook with `cell` from `tmp_path`; stopped, with its kernels, on exit."
    import nbformat
    nb = nbformat.v4.new_notebook(); nb.cells = [nbformat.v4.new_code_cell(cell)]
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


def open_and_run(page, base, token):
    page.goto(f"{base}/lab/tree/panel.ipynb?token={token}", wait_until="domcontentloaded", timeout=90_000)
    page.wait_for_selector(".jp-Notebook .jp-Cell .cm-content", timeout=90_000)
    page.locator(".jp-StatusBar-TextItem", has_text="Idle").first.wait_for(timeout=90_000)
    page.click(".jp-Notebook .jp-Cell .cm-content")
    page.keyboard.press("Shift+Enter")


def test_the_panel_draws_live_snaps_refused_values_back_and_the_inspector_pages(tmp_path):
    with running_lab(tmp_path, LIVE) as (base, token, root), chromium_page() as page:
        open_and_run(page, base, token)
        status = page.locator(".wl-status").first
        status.wait_for(timeout=120_000)
        assert "not started" in status.inner_text()
        row = page.locator(".widget-hbox", has=page.locator(".widget-label", has_text="open_ended")).first
        floor = row.locator(".widget-slider").nth(1)
        floor.locator(".noUi-handle").first.focus()
        page.keyboard.press("End")                                    # a floor of 1.0, above its cap: refused
        page.locator(".widget-html", has_text="kept the engine").first.wait_for(timeout=60_000)
        readout = floor.locator(".widget-readout").element_handle()
        page.wait_for_function("e => e.textContent.trim() === '0.01'", arg=readout, timeout=60_000)   # snapped back
        page.get_by_role("button", name="run", exact=True).click()
        wait_file(root / "at2.json", 120)
        history = page.locator("img.widget-image").first
        page.wait_for_function("e => !!e.getAttribute('src')", arg=history.element_handle(), timeout=60_000)
        first = history.get_attribute("src")
        assert "running" in status.inner_text()                      # said while the search runs
        (root / "go2.json").write_text("{}")
        wait_file(root / "at3.json", 120)
        page.wait_for_function("([e, old]) => e.getAttribute('src') !== old", arg=[history.element_handle(), first],
                               timeout=60_000)                       # a new figure for the next batch, before the end
        page.screenshot(path=str(root / "running.png"))
        (root / "go3.json").write_text("{}")
        page.locator(".widget-html", has_text="stopped (budget)").first.wait_for(timeout=120_000)
        position = page.locator(".widget-label", has_text=re.compile(r"^row \d+ of ")).first
        before = position.inner_text()
        page.get_by_role("button", name="next", exact=True).click()
        page.wait_for_function("([e, old]) => e.textContent !== old", arg=[position.element_handle(), before],
                               timeout=60_000)

        assert before.startswith("row 1 of ") and position.inner_text().startswith("row 2 of ")
        page.screenshot(path=str(root / "done.png"), full_page=True)


GATED = """
import json, pathlib, threading, time
from whilelab.core import shopfront
from whilelab.axes import agent_axes
from whilelab.cover import covering_array
from whilelab.defaults import SimOptions, SearchOptions
from whilelab.standins import ScriptedAgent, TemplateUser
from whilelab.search import Search
from whilelab.widgets import SearchPanel
spec = shopfront(); axes = agent_axes(spec)
search = Search(spec, ScriptedAgent(), TemplateUser(), axes, covering_array(axes, seed=0),
                SimOptions(n_phrasings=1, k_samples=2, search=SearchOptions(budget=160, patience=1000)))
play = search.step
def gated():      # batches 1-3 wait, once begun, for the test to say go: it sees the page with a batch in flight
    n = search.batch
    if n < 3:
        pathlib.Path(f"at{n}.json").write_text(json.dumps({"batch": n, "weights": search.weights}))
        while not pathlib.Path(f"go{n}.json").exists(): time.sleep(0.1)
    rec = play()
    if search.stopped: pathlib.Path("done.json").write_text(json.dumps({"batches": len(search.history)}))
    return rec
search.step = gated
panel = SearchPanel(search)
pathlib.Path("ready.json").write_text(json.dumps({"weights": search.weights}))
panel
"""

BROKEN = """() => [...document.querySelectorAll('img')].filter(i => i.offsetParent !== null
                                                      && !(i.complete && i.naturalWidth > 0)).length"""


def _agree(page):
    "The status line's batch, once the figures' caption (set with them, from the same state) says the same."
    js = """() => {
        const s = document.querySelector('.wl-status').innerText, c = document.querySelector('.wl-caption').innerText;
        const m = s.match(/batch (\\d+), ([\\d,]+) rollouts/);
        return m && c.trim() === `figures after batch ${m[1]}, ${m[2]} rollouts` ? m[1] : null }"""
    try: return int(page.wait_for_function(js, timeout=60_000).json_value())
    except Exception:
        seen = page.evaluate("() => [...document.querySelectorAll('.wl-status, .wl-caption')].map(e => e.innerText)")
        raise AssertionError(f"the status and the figures' titles never agreed: {seen}")


def test_the_panel_never_disagrees_with_itself(tmp_path):
    with running_lab(tmp_path, GATED) as (base, token, root), chromium_page() as page:
        open_and_run(page, base, token)
        weights = wait_file(root / "ready.json")["weights"]
        status = page.locator(".wl-status").first
        status.wait_for(timeout=120_000)
        assert "not started" in status.inner_text() and page.evaluate(BROKEN) == 0      # no figure yet: none shown
        readouts = lambda: [page.locator(".widget-slider", has=page.locator(".widget-label", has_text=a)).first
                            .locator(".widget-readout").inner_text() for a in weights]
        before = readouts()
        row = page.locator(".widget-hbox", has=page.locator(".widget-label", has_text="open_ended")).first
        row.locator(".widget-slider").first.locator(".noUi-handle").first.focus()
        page.keyboard.press("End")                                    # a weight of 1.0, above its 0.10 cap: refused
        message = page.locator(".wl-message").first
        page.locator(".wl-message", has_text="kept").wait_for(timeout=60_000)
        said = message.inner_text().strip()
        assert "cap" in said and len(said) < 100 and said.count(". ") == 0, said       # one short sentence
        page.wait_for_function(f"() => JSON.stringify({json.dumps(before)}) === JSON.stringify("
                               "[...document.querySelectorAll('.widget-hbox')]"
                               ".filter(r => r.querySelector('.widget-slider')).slice(0, 5)"
                               ".map(r => r.querySelector('.widget-readout').innerText))", timeout=60_000)
        assert readouts() == before                                   # nothing moved, the refused slider back too
        step, run = (page.get_by_role("button", name=n, exact=True) for n in ("step", "run"))
        pause = page.get_by_role("button", name="pause", exact=True)
        step.click()
        assert wait_file(root / "at0.json")["batch"] == 0
        # in flight: step and run disabled, pause not; each button's state arrives as its own message: wait for all
        page.wait_for_function("([s, r, p]) => s.disabled && r.disabled && !p.disabled",
                               arg=[step.element_handle(), run.element_handle(), pause.element_handle()], timeout=60_000)
        assert not pause.is_disabled() and message.inner_text().strip() == ""   # the next action cleared the message
        step.click(force=True); run.click(force=True)                # a second press (forced on the disabled buttons)
        assert page.evaluate(BROKEN) == 0
        (root / "go0.json").write_text("{}")
        page.wait_for_function("e => !e.disabled", arg=run.element_handle(), timeout=60_000)
        assert _agree(page) == 1 and page.evaluate(BROKEN) == 0
        run.click()
        assert wait_file(root / "at1.json")["batch"] == 1            # the second presses played nothing
        for n in (1, 2):
            # the kernel has started batch n; the page shows it a moment later, whole: wait for that state, then check
            page.wait_for_function(
                """([b, n]) => b[0].disabled && b[1].disabled && !b[2].disabled &&
                               document.querySelector('.wl-status').innerText.includes(`batch ${n},`)""",
                arg=[[step.element_handle(), run.element_handle(), pause.element_handle()], n], timeout=60_000)
            assert _agree(page) == n and page.evaluate(BROKEN) == 0   # status and both figures: the same batch
            assert page.locator(".widget-label", has_text=" of 160 rollouts").count() == 1   # the progress bars
            assert page.locator(".widget-label", has_text="batches without a new signature").count() == 1
            page.screenshot(path=str(root / f"batch{n}.png"))
            (root / f"go{n}.json").write_text("{}")
            if n == 1: wait_file(root / "at2.json")
        page.locator(".widget-html", has_text="stopped (budget)").first.wait_for(timeout=120_000)
        played = wait_file(root / "done.json")["batches"]    # a batch near full delivery plays only what is owed
        assert played > 3 and _agree(page) == played and page.evaluate(BROKEN) == 0
        assert step.is_disabled() and run.is_disabled()              # nothing left to play
        page.screenshot(path=str(root / "done.png"), full_page=True)


SHOWN = """
from whilelab.core import shopfront
from whilelab.axes import agent_axes
from whilelab.cover import covering_array
from whilelab.defaults import SimOptions
from whilelab.standins import ScriptedAgent, TemplateUser
from whilelab.search import Search
from whilelab.widgets import SearchPanel
spec = shopfront(); axes = agent_axes(spec)
search = Search(spec, ScriptedAgent(), TemplateUser(), axes, covering_array(axes, seed=0),
                SimOptions(n_phrasings=1, k_samples=2))
panel = SearchPanel(search)
panel.step()                  # drawn after a batch was played: the case that lost both figures
panel
"""

FIGURES = """() => {
    const imgs = [...document.querySelectorAll('img.widget-image')].filter(i => i.offsetParent !== null);
    const loaded = imgs.filter(i => i.complete && i.naturalWidth > 0);
    return {shown: imgs.length, loaded: loaded.length,
            errors: document.querySelectorAll('.jupyter-widgets-error-widget').length
                    + (document.body.innerText.includes('Click to show javascript error') ? 1 : 0),
            // drawn at 2 device pixels a CSS pixel and shown at its CSS size: sharp, and never stretched
            sharp: loaded.filter(i => Math.abs(i.naturalWidth - 2 * i.width) <= 2
                                      && Math.abs(i.naturalHeight * i.width - i.height * i.naturalWidth)
                                         <= 2 * i.naturalWidth).length,
            captions: [...document.querySelectorAll('.wl-caption')].map(e => e.innerText.trim())} }"""


def _figures(page, n, caption, what):
    "Wait until `n` figures are shown loaded (or an error box appears), then check none broke and all are sharp."
    try:
        page.wait_for_function(f"""() => {{ const f = ({FIGURES})();
                                   return f.errors > 0 || (f.loaded >= {n} && f.captions.length * 2 >= {n}
                                          && f.captions.every(c => c.startsWith({json.dumps(caption)}))) }}""",
                               timeout=120_000)
    except Exception: raise AssertionError(f"{what}: the figures never drew: {page.evaluate(FIGURES)}")
    f = page.evaluate(FIGURES)
    assert f["errors"] == 0, (what, f)                                   # no "Click to show javascript error" box
    assert f["shown"] == f["loaded"] == f["sharp"] == n, (what, f)       # every image loaded, none stretched
    return f


def test_the_panel_draws_after_a_batch_a_second_display_and_a_reload(tmp_path):
    import nbformat
    with running_lab(tmp_path, SHOWN) as (base, token, root), chromium_page() as page:
        nb = nbformat.read(root / "panel.ipynb", 4)       # a second display of the same panel, then a second batch
        nb.cells += [nbformat.v4.new_code_cell("panel"), nbformat.v4.new_code_cell("_ = panel.step()")]
        nbformat.write(nb, root / "panel.ipynb")
        open_and_run(page, base, token)
        _figures(page, 2, "figures after batch 1,", "after step(), before display")
        page.keyboard.press("Shift+Enter")                                 # the second display
        _figures(page, 4, "figures after batch 1,", "a second display")
        page.keyboard.press("Shift+Enter")                                 # step() with both displays shown
        _figures(page, 4, "figures after batch 2,", "step() after display")
        page.screenshot(path=str(root / "shown.png"), full_page=True)
        page.keyboard.press("Control+s")
        t = time.time()                                                    # saved with its widget views
        while "widget-view" not in (root / "panel.ipynb").read_text() or page.locator(".jp-mod-dirty").count():
            assert time.time() - t < 90, "the notebook was never saved"
            time.sleep(0.2)
        page.reload(wait_until="domcontentloaded", timeout=90_000)
        page.wait_for_selector(".jp-Notebook .jp-Cell .cm-content", timeout=90_000)
        _figures(page, 4, "figures after batch 2,", "after a page reload")   # the views made anew from the kernel
        page.screenshot(path=str(root / "reloaded.png"), full_page=True)

"""The docs' screenshots of the search panel, taken as a researcher sees it: JupyterLab and Debian's chromium, the panel
after a whole search on the built-in example. `python tools/screenshots.py` writes nbs/images/search_panel*.png;
tools/docs.py copies nbs/images into the site. Stops what it starts (the server, its kernel, the browser)."""
import sys, tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

CELL = """
import warnings; warnings.simplefilter("ignore")
from whilelab.core import shopfront
from whilelab.axes import agent_axes
from whilelab.cover import covering_array
from whilelab.defaults import SimOptions
from whilelab.standins import ScriptedAgent, TemplateUser
from whilelab.search import Search
from whilelab.widgets import SearchPanel
spec = shopfront(); axes = agent_axes(spec)
panel = SearchPanel(Search(spec, ScriptedAgent(), TemplateUser(), axes, covering_array(axes, seed=0),
                           SimOptions(n_phrasings=1, k_samples=2)))
panel.run(background=False)          # the whole search, drawn batch by batch
panel
"""

LOADED = """() => { const s = document.querySelector('.wl-status');
    const imgs = [...document.querySelectorAll('img.widget-image')];
    return !!s && s.innerText.startsWith('stopped') && imgs.length === 2
           && imgs.every(i => i.complete && i.naturalWidth > 0)
           && !document.querySelector('.jupyter-widgets-error-widget') }"""


def main(out: Path = ROOT / "nbs" / "images"):
    from test_browser import running_lab, open_and_run
    from conftest import chromium_page
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, running_lab(Path(tmp), CELL) as (base, token, root), \
         chromium_page(width=1400, height=1700) as page:
        open_and_run(page, base, token)
        page.wait_for_function(LOADED, timeout=600_000)
        page.evaluate("document.activeElement && document.activeElement.blur()")   # no caret or focus ring
        news = page.get_by_role("button", name="No", exact=True)      # JupyterLab's news question covers the panel
        if news.count(): news.first.click(); news.first.wait_for(state="detached", timeout=30_000)
        page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")   # painted
        area = page.locator(".jp-OutputArea-output").filter(has=page.locator(".wl-status")).first
        area.screenshot(path=str(out / "search_panel.png"))
        page.locator("img.widget-image").first.screenshot(path=str(out / "search_panel_history.png"))
    print(f"written to {out}")


if __name__ == "__main__": main()

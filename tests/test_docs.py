"""The docs site builds offline from the notebooks, and a real browser can read it: navigation with every
chapter and tutorial, an executed plot, show_doc's parameter docs, and search. Stops what it starts."""
import json, re, subprocess, sys, time
from pathlib import Path
import pytest
from conftest import HAVE_CHROMIUM, chromium_page, free_port

ROOT = Path(__file__).resolve().parent.parent

@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    r = subprocess.run([sys.executable, "tools/docs.py", "--out", str(out), "--execute", "02_cover"], cwd=ROOT,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    return out

def crawl(site: Path) -> tuple[int, int, list, dict]:
    "(pages, internal links, dead links as (page, href), page -> heading ids used twice) of the built `site`."
    from html.parser import HTMLParser
    from urllib.parse import urlsplit, unquote
    class Page(HTMLParser):
        def __init__(self): super().__init__(); self.ids, self.heads, self.links = set(), [], []
        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            if a.get("id"): self.ids.add(a["id"])
            if a.get("id") and re.fullmatch(r"h[1-6]", tag): self.heads.append(a["id"])
            if tag == "a" and a.get("href"): self.links.append(a["href"])
    pages = {}
    for p in site.rglob("*.html"): pages[p] = Page(); pages[p].feed(p.read_text())
    dead, n = [], 0
    for p, page in pages.items():
        for href in page.links:
            u = urlsplit(href)
            if u.scheme or u.netloc: continue                                 # the outside world is not checked here
            n += 1
            tgt = p if not u.path else (site / unquote(u.path).lstrip("/")) if u.path.startswith("/") \
                else p.parent / unquote(u.path)                               # 404.html links from the site root
            tgt = tgt.resolve() / "index.html" if u.path.endswith("/") else tgt.resolve()
            if not tgt.exists() or (u.fragment and tgt in pages and unquote(u.fragment) not in pages[tgt].ids):
                dead.append((str(p.relative_to(site)), href))
    twice = {str(p.relative_to(site)): sorted({i for i in pg.heads if pg.heads.count(i) > 1})
             for p, pg in pages.items()}
    return len(pages), n, dead, {k: v for k, v in twice.items() if v}

def test_every_link_and_anchor_resolves(site):
    "Every internal link (table of contents, navigation, ¶ anchors, cross-links) reaches a page and an id on it."
    pages, links, dead, twice = crawl(site)
    assert pages >= 30 and links >= 3000, (pages, links)
    assert not dead, f"{len(dead)} dead links: {dead[:20]}"
    assert not twice, f"headings sharing an id: {twice}"

def test_a_dead_link_is_found(tmp_path):
    "The crawl can fail: a duplicate heading id, a contents entry to no heading, a link to no page."
    sys.path.insert(0, str(ROOT / "tools"))
    import docs
    h = lambda i: f'<h2 id="{i}">{i}<a class="anchor-link" href="#{i}">¶</a></h2>'
    toc = lambda *ids: "".join(f'<a href="#{i}" class="md-nav__link">x</a>' for i in ids) * 2
    page = '<h1 id="simulate">simulate<a class="anchor-link" href="#simulate">¶</a></h1>' + h("simulate") + h("run")
    (tmp_path / "a.html").write_text(toc("simulate_1", "_1") + page + '<a href="b.html">b</a>')
    _, links, dead, twice = crawl(tmp_path)
    assert links == 8 and twice == {"a.html": ["simulate"]}
    assert sorted(dead) == [("a.html", "#_1")] * 2 + [("a.html", "#simulate_1")] * 2 + [("a.html", "b.html")]
    (tmp_path / "a.html").write_text(docs.unique_anchors(toc("simulate_1", "_1") + page))   # what the builder does
    _, _, dead, twice = crawl(tmp_path)
    assert not dead and not twice

def test_pages_need_no_internet(site):
    html = "".join(p.read_text() for p in site.glob("*.html"))
    assert "fonts.googleapis" not in html and "fonts.gstatic" not in html

def test_every_notebook_is_a_page(site):
    nbs = [p.stem for p in (ROOT / "nbs").glob("[0-9]*.ipynb")] + [p.stem for p in (ROOT / "nbs" / "tutorials").glob("*.ipynb")]
    pages = {p.stem for p in site.rglob("*.html")}
    assert set(nbs) <= pages and "index" in pages and (site / "search" / "search_index.json").exists()

def test_the_pages_images_are_in_the_site(site):
    "Every image a page's markdown links from nbs/images (a screenshot) is in the site, where the page looks for it."
    linked = {m for p in (ROOT / "nbs").rglob("*.ipynb") for m in re.findall(r"\]\((images/[^)\s]+)\)", p.read_text())}
    assert linked and all((site / a).exists() for a in linked), sorted(a for a in linked if not (site / a).exists())

def test_the_quarto_sidebar_lists_every_notebook():
    "nbdev_docs builds its navigation from nbs/sidebar.yml: a chapter missing there has no way in."
    listed = {l.strip()[2:] for l in (ROOT / "nbs" / "sidebar.yml").read_text().splitlines() if l.strip().startswith("- ")}
    nbs = {str(p.relative_to(ROOT / "nbs")) for p in [*(ROOT / "nbs").glob("*.ipynb"), *(ROOT / "nbs" / "tutorials").glob("*.ipynb")]}
    assert nbs <= listed, sorted(nbs - listed)

@pytest.mark.skipif(not HAVE_CHROMIUM, reason="Debian chromium is not installed (tests/run.sh installs it)")
def test_the_site_reads_in_a_browser(site):
    port = free_port()
    srv = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(site)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.5)
        with chromium_page() as page:
            page.goto(f"http://127.0.0.1:{port}/index.html", wait_until="networkidle")
            nav = page.locator("nav.md-nav--primary").first.inner_text()
            assert all(w in nav for w in ("cover", "grade", "cut", "Tutorials", "Two-factor faults")), nav[:500]
            page.screenshot(path=str(site / "index.png"))
            page.goto(f"http://127.0.0.1:{port}/02_cover.html", wait_until="networkidle")
            body = page.inner_text("body")
            assert "covering_array" in body and "run seed; the same seed gives the same plan" in body   # show_doc with parameter docs
            assert page.locator("img").count() >= 1                                                     # an executed plot
            assert "{target=" not in body                                 # no Quarto leftovers
            assert not page.locator(".jp-InputPrompt").first.is_visible()   # no empty `In [ ]:` prompts
            assert page.locator(".md-footer__link--next").count() == 1    # previous/next links
            page.goto(f"http://127.0.0.1:{port}/16_worlds.html", wait_until="networkidle")
            table = page.locator("table").filter(has_text="a dict of tables (any JSON value), or SQLite")
            table.first.wait_for(timeout=30_000)        # drawn by then on a busy machine (a count may come first)
            assert table.count() == 1 and "dict | None" in table.inner_text()   # FunctionWorld's parameters, as a table
            page.goto(f"http://127.0.0.1:{port}/14_widgets.html", wait_until="networkidle")
            body = page.inner_text("body")
            assert "VBox(children" not in body and "structured: " in body     # a panel as its snapshot, not its repr
    finally:
        srv.terminate(); srv.wait(10)


def test_every_parameter_has_a_type_and_a_description():
    """Every parameter and dataclass field the site documents has a type and a description, and its page shows that
    description (no empty details cell). The entries still without
    are listed in docs_gaps.txt (the debt, by chapter): a new gap fails, and so does a listed one that was fixed (take
    it off the list)."""
    sys.path.insert(0, str(ROOT / "tools"))
    import docs
    gaps = {f"{stem} {g}" for stem, title, obj in docs.entries()          # what the source lacks, and what the page
            for g in [*docs.gaps(obj, title), *docs.empty_cells(obj, title)]}   # shows empty (a described field too)
    listed = {l for l in (ROOT / "tests" / "docs_gaps.txt").read_text().splitlines() if l.strip()}
    assert not gaps - listed, f"undocumented (add a type and a `# description`): {sorted(gaps - listed)[:20]}"
    assert not listed - gaps, f"documented now: take these off tests/docs_gaps.txt: {sorted(listed - gaps)[:20]}"


def test_a_gap_is_found():
    "The check above can fail: a parameter with no type, one with no description, a field with neither."
    import dataclasses
    sys.path.insert(0, str(ROOT / "tools"))
    import docs
    def f(a,          # described, no type
          b: int = 1):
        "An example."
    @dataclasses.dataclass
    class D:
        x: int        # described
        y: str = ""
    assert docs.gaps(f, "f") == ["f.a: no type", "f.b: no description"]
    assert docs.gaps(D, "D") == ["D.y: no description"]
    assert docs.empty_cells(D, "D") == ["D.y: empty details cell"]                    # the page is checked as shown
    assert "| `x` | <code>int</code> |  | described |" in docs.doc_markdown(D, "D")      # a field's comment is shown
    def g(**kw):
        "Options passed on, undescribed."
    def h(**kw  # options passed on to the backend
         ):
        "Options passed on, described: docments cannot read this comment, the check does."
    assert docs.gaps(g, "g") == ["g.kw: no description"] and docs.gaps(h, "h") == []
    assert docs.empty_cells(h, "h") == [] and "options passed on to the backend" in docs.doc_markdown(h, "h")
    @dataclasses.dataclass
    class E:
        z: str = ""   # a | in a description: one cell
    assert "a &#124; in a description: one cell |" in docs.doc_markdown(E, "E")
    assert "```python\nf(a, b: int = 1)\n```" in docs.doc_markdown(f, "f")          # the call signature is shown


def test_every_public_parameter_is_described():
    """Every parameter of the public API says what it is for: also a method's in a class body (the pages show a class
    by its constructor) and a classmethod's attached by assignment (`Tool.from_openai`). 167 had none (issue 48)."""
    sys.path.insert(0, str(ROOT / "tools"))
    import docs
    missing = docs.undescribed()
    assert not missing, f"{len(missing)} parameters with no `# description`: {missing[:20]}"


class Described:
    "A class whose method has one undescribed parameter."
    def run(self,
            a: int,     # described
            b: int = 0):
        "Runs."
    @classmethod
    def make(cls, x): "Made from x, undescribed."

def loose(y, z=1  # described
         ):
    "A function with one undescribed parameter."

def test_an_undescribed_parameter_is_found():
    "The check above can fail: a method's, a classmethod's (not its `cls`) and a function's undescribed parameters."
    import types
    sys.path.insert(0, str(ROOT / "tools"))
    import docs
    mod = types.ModuleType(__name__); mod.__all__ = ["Described", "loose"]
    mod.Described, mod.loose = Described, loose
    assert docs.undescribed([mod]) == ["test_docs:Described.make.x", "test_docs:Described.run.b", "test_docs:loose.y"]


MACHINE = re.compile(r"/work/|/tmp/|/root/|/home/|site-packages|ipykernel_\d")   # where one machine keeps things

def machine_paths(nb: dict) -> list[str]:
    "'cell id: the path and a little around it' for each stored output of `nb` that shows a machine's path."
    out = []
    for c in nb["cells"]:
        for o in c.get("outputs", []):
            t = json.dumps(o)
            out += [f"{c.get('id')}: {t[max(0, m.start() - 40):m.end() + 40]}" for m in MACHINE.finditer(t)]
    return out

def test_no_stored_output_shows_a_machine_path():
    "A page shows its outputs as stored: a folder of the machine that ran it (`/work/...`, a temp file) means nothing."
    found = {p.stem: f for p in sorted((ROOT / "nbs").rglob("*.ipynb"))
             if (f := machine_paths(json.loads(p.read_text())))}
    now = {k: v[:3] for k, v in found.items()}
    assert not now, f"outputs showing a machine's paths (re-execute, or filter the warning in a hidden cell): {now}"

def test_a_machine_path_is_found():
    "The check above can fail: a warning's file, a temp file in a repr, a traceback's kernel cell."
    nb = {"cells": [{"id": "a", "outputs": [{"output_type": "stream", "name": "stderr",
                                             "text": ["/work/main/whilelab/axes.py:340: UserWarning: x\n"]}]},
                    {"id": "b", "outputs": [{"output_type": "execute_result",
                                             "data": {"text/plain": ["RequestCache(/tmp/tmpo1/requests.sqlite)"]}}]},
                    {"id": "c", "outputs": [{"output_type": "stream", "text": ["RequestCache($TMPDIR/r.sqlite)"]}]}]}
    assert [f[0] for f in machine_paths(nb)] == ["a", "b"]


def test_no_stored_output_warns_of_the_examples_own_policy():
    """A newcomer's first page shows no warning the example itself causes: the built-in policy's two descriptions
    ('You are the support agent for Shopfront...') are no rules in disguise (01_axes)."""
    import warnings
    from whilelab.axes import agent_axes
    from whilelab.core import shopfront
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        agent_axes(shopfront())
    said = {p.stem for p in sorted((ROOT / "nbs").rglob("*.ipynb")) for c in json.loads(p.read_text())["cells"]
            for o in c.get("outputs", []) if "left off the rule axis" in (t := "".join(o.get("text", "")))
            and "'You are the support agent for Shopfront, an ...'" in t}
    assert not said, f"re-execute: {sorted(said)}"

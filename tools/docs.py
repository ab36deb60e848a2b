"""Build the docs site from the notebooks, offline: `python tools/docs.py [--out _site] [--no-execute]`.

Quarto (behind `nbdev_docs`) cannot be installed on these machines, so this is the offline path; the
standard `nbdev_docs` keeps working for anyone who has Quarto. Steps:
1. execute every notebook in `nbs/` (cells marked `#| eval: false` are skipped, as in `nbdev_test`) so
   each page shows its outputs and plots -- or, with `--no-execute` (or `--execute stems...` for a few),
   use the outputs saved in them;
2. process them the nbdev way: drop `#| hide` cells, strip `#|` directive lines;
3. document every public definition of an export cell the nbdev way: below the cell, its signature, its
   docstring and a table of its parameters (type, default and the docment -- or, for an options dataclass,
   each field's reason), with a link to its source;
4. render with MkDocs (Material theme: navigation, previous/next links, search; system fonts, so a page
   needs no internet) and mkdocs-jupyter, with empty prompts hidden.
"""
import argparse, ast, dataclasses, importlib, inspect, json, os, re, shutil, subprocess, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NBS = ROOT / "nbs"

def _directives(src: str) -> list[str]: return [l.strip() for l in src.splitlines() if l.strip().startswith("#|")]

SOURCE = "https://github.com/whilelab/whilelab/blob/main"
CSS = ".jp-InputPrompt, .jp-OutputPrompt { display: none !important; }\n"   # an `In [ ]:` column says nothing

def _shown(x) -> str:
    "A type or default for a table cell: code, with `|` as an entity (a table would split at it)."
    if x is inspect.Parameter.empty: return ""
    t = x if isinstance(x, str) else getattr(x, "__name__", None) or repr(x)
    t = t.replace("&", "&amp;").replace("<", "&lt;").replace("|", "&#124;").replace("`", "&#96;")   # no code span
    return "<code>" + t + "</code>"

def _attached(tree) -> dict:
    "name -> class for each function a cell attaches to a class by assignment (`Search.step, Search.run = step, run`)."
    out = {}
    for n in tree.body:
        if not isinstance(n, ast.Assign): continue
        for t in n.targets:
            both = isinstance(t, ast.Tuple) and isinstance(n.value, ast.Tuple)
            pairs = zip(t.elts, n.value.elts) if both else [(t, n.value)]
            for tgt, val in pairs:
                if isinstance(tgt, ast.Attribute) and isinstance(tgt.value, ast.Name) and isinstance(val, ast.Name) \
                   and tgt.attr == val.id:
                    out[val.id] = tgt.value.id
    return out

def attachments(nb: dict) -> dict:
    "name -> class for the functions any code cell of `nb` attaches to a class by assignment."
    out = {}
    for c in nb["cells"]:
        if c["cell_type"] != "code": continue
        try: out.update(_attached(ast.parse("\n".join(l for l in "".join(c["source"]).splitlines()
                                                       if not l.lstrip().startswith(("%", "!"))))))
        except SyntaxError: pass
    return out

def public(src: str, attached: dict | None = None) -> list[tuple]:
    """(class or None, name) of each public function or class a cell defines; a method (`@patch`ed, or attached by
    assignment anywhere in the notebook: `attached`) under its class."""
    try: tree = ast.parse(src)
    except SyntaxError: return []
    out, attached = [], {**(attached or {}), **_attached(tree)}
    for n in tree.body:
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or n.name.startswith("_"): continue
        patched = any("patch" in (getattr(d, "id", None), getattr(getattr(d, "func", None), "id", None))
                      for d in n.decorator_list)      # @patch, or @patch(as_prop=True)
        owner = n.args.args[0].annotation if patched and n.args.args else None
        owner = getattr(owner, "id", None) or attached.get(n.name)
        if not (owner or "").startswith("_"): out.append((owner, n.name))
    return out

def signature(obj, title: str) -> str:
    "How `obj` is called, as a Python code block: `title(param: type = default, ...) -> type`, a line per parameter."
    try: sig = inspect.signature(obj)
    except (TypeError, ValueError): return ""
    def one(p):
        star = {p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**"}.get(p.kind, "")
        anno = p.annotation if isinstance(p.annotation, str) else getattr(p.annotation, "__name__", None)
        out = star + p.name + (f": {anno}" if p.annotation is not p.empty and anno else "")
        if p.default is not p.empty:
            d = repr(p.default)
            out += " = " + (d if len(d) <= 40 else d[:37] + "...")
        return out
    params = [one(p) for p in sig.parameters.values() if p.name not in ("self", "cls")]
    ret = sig.return_annotation
    ret = "" if ret is sig.empty or dataclasses.is_dataclass(obj) or inspect.isclass(obj) else \
        f" -> {ret if isinstance(ret, str) else getattr(ret, '__name__', ret)}"
    flat = f"{title}({', '.join(params)}){ret}"
    body = flat if len(flat) <= 100 else f"{title}(\n" + "".join(f"    {p},\n" for p in params) + f"){ret}"
    return f"```python\n{body}\n```\n\n"

def _init_elsewhere(obj) -> bool:
    "Whether class `obj` is made by a constructor from elsewhere (object's, Exception's, typing's, pydantic's...)."
    made_in = getattr(getattr(obj, "__init__", None), "__module__", None) or ""
    return isinstance(obj, type) and not made_in.startswith("whilelab") and made_in != obj.__module__

def gaps(obj, title: str) -> list[str]:
    "Each parameter (or dataclass field) of `obj` the docs cannot describe: 'title.param: no type' / 'no description'."
    from fastcore.docments import docments
    try: params, sig = docments(obj, full=True), inspect.signature(obj)
    except (TypeError, ValueError): return []
    if _init_elsewhere(obj): return []
    fields = {f.name: f for f in dataclasses.fields(obj)} if dataclasses.is_dataclass(obj) else {}
    out = []
    for k, v in params.items():
        if k in ("self", "cls", "return"): continue
        p = sig.parameters.get(k)
        if k not in fields and p is not None and p.annotation is p.empty and p.kind not in (p.VAR_POSITIONAL,
                                                                                              p.VAR_KEYWORD):
            out.append(f"{title}.{k}: no type")
        if not details(obj, k, v, fields): out.append(f"{title}.{k}: no description")
    return out

def _star_docment(obj, name: str) -> str:
    "The `# comment` on `*name` / `**name` in the source ('' if none): docments reads none on a starred parameter."
    try: src = inspect.getsource(obj.__init__ if isinstance(obj, type) else obj)
    except (OSError, TypeError): return ""
    m = re.search(rf"\*{{1,2}}{re.escape(name)}\b[^#\n]*#\s*(\S[^\n]*)", src)
    return m.group(1).strip() if m else ""

def details(obj, k: str, v: dict, fields: dict) -> str:
    """What the details cell of parameter `k` of `obj` says: an option's reason, else its `# description` (a starred
    parameter's read from the source), as one table cell; '' when it has none. The table and the gap check both ask."""
    why = fields[k].metadata.get("why") if k in fields else None
    starred = v.get("kind") in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    said = why or v.get("docment") or (_star_docment(obj, k) if starred else "")
    return " ".join(str(said or "").split()).replace("|", "&#124;")        # one line; a `|` would split the row

def empty_cells(obj, title: str) -> list[str]:
    "Each row of `obj`'s rendered parameter table whose details cell is empty: 'title.param: empty details cell'."
    rows = re.findall(r"^\| `([^`]+)` \|(.*)\|$", doc_markdown(obj, title), re.M)
    return [f"{title}.{k}: empty details cell" for k, rest in rows if not rest.split(" | ")[-1].strip()]

def _methods(cls):
    "(name, function, whether its first parameter is `self`) of each public method a class defines itself."
    for k, f in vars(cls).items():
        if k.startswith("_"): continue
        if isinstance(f, (classmethod, staticmethod)): yield k, getattr(cls, k), False
        elif isinstance(f, property) and f.fget: yield k, f.fget, True
        elif inspect.isfunction(f): yield k, f, True

def undescribed(modules: list | None = None   # the modules to check (default: all of whilelab's)
               ) -> list[str]:
    """'module:name.param' of each parameter of the public API with no description at all: every function and class
    a module exports (`__all__`) and every public method of those classes -- also those the pages do not show."""
    import pkgutil, whilelab
    if modules is None:
        modules = [importlib.import_module(f"whilelab.{m.name}") for m in pkgutil.iter_modules(whilelab.__path__)]
    out = []
    def check(obj, title, method=False):
        try: params = docments(obj, full=True)
        except (TypeError, ValueError): return
        if _init_elsewhere(obj): return
        fields = {f.name: f for f in dataclasses.fields(obj)} if dataclasses.is_dataclass(obj) else {}
        first = next(iter(inspect.signature(obj).parameters), None) if method else None   # `self`, by any name
        out.extend(f"{title}.{k}" for k, v in params.items()
                   if k not in ("self", "cls", "return", first) and not details(obj, k, v, fields))
    from fastcore.docments import docments
    for mod in modules:
        short = mod.__name__.rsplit(".", 1)[-1]
        for n in getattr(mod, "__all__", []):
            o = getattr(mod, n, None)
            if getattr(o, "__module__", None) != mod.__name__: continue        # re-exported: checked where it is made
            if inspect.isfunction(o) or inspect.isclass(o): check(o, f"{short}:{n}")
            if inspect.isclass(o):
                for k, f, method in _methods(o): check(f, f"{short}:{n}.{k}", method)
    return sorted(set(out))

def entries():
    "(notebook stem, title, object) of every public definition the site documents, in page order."
    for p in sorted(NBS.glob("[0-9]*.ipynb")):
        module, nb = None, json.loads(p.read_text())
        attached = attachments(nb)
        for c in nb["cells"]:
            if c["cell_type"] != "code": continue
            src = "".join(c["source"])
            m = re.search(r"#\|\s*default_exp\s+(\S+)", src)
            if m: module = importlib.import_module(f"whilelab.{m.group(1)}")
            if module is None or not re.search(r"#\|\s*exports?\b", src): continue
            for owner, name in public(src, attached):
                obj = getattr(getattr(module, owner, None), name, None) if owner else getattr(module, name, None)
                if obj is not None: yield p.stem, f"{owner}.{name}" if owner else name, obj

def doc_markdown(obj, title: str) -> str:
    "The signature, docstring and parameter table of `obj`, with a link to its source."
    from fastcore.docments import docments
    try: params = {} if _init_elsewhere(obj) else docments(obj, full=True)   # documented where it is made
    except (TypeError, ValueError): params = {}
    fields = {f.name: f for f in dataclasses.fields(obj)} if dataclasses.is_dataclass(obj) else {}
    def row(k, v):
        default = _shown(repr(v["default"])) if v["default"] is not inspect.Parameter.empty else ""
        return f"| `{k}` | {_shown(v['anno'])} | {default} | {details(obj, k, v, fields)} |"
    rows = [row(k, v) for k, v in params.items() if k not in ("self", "cls", "return")]
    try:
        f, line = inspect.getsourcefile(obj), inspect.getsourcelines(obj)[1]
        link = f"[source]({SOURCE}/{Path(f).resolve().relative_to(ROOT)}#L{line})"
    except (TypeError, OSError, ValueError): link = ""
    doc = (inspect.getdoc(obj) or "").strip()
    head = f"---\n\n### {title}\n\n{link}\n\n" + signature(obj, title) + (f"*{doc}*\n\n" if doc else "")
    table = "| parameter | type | default | details |\n|---|---|---|---|\n" + "\n".join(rows) + "\n"
    return head + (table if rows else "")

def _documented(src: str, module, shown: set, attached: dict | None = None) -> list[dict]:
    "Markdown cells documenting the public definitions of an export cell of `module`."
    out = []
    for owner, name in public(src, attached):
        title = f"{owner}.{name}" if owner else name
        obj = getattr(getattr(module, owner, None), name, None) if owner else getattr(module, name, None)
        if obj is None or title in shown: continue
        out.append({"cell_type": "markdown", "metadata": {}, "source": doc_markdown(obj, title)})
    return out

def process(nb: dict) -> dict:
    "A copy of `nb` as a docs page: hidden cells dropped, directive lines removed, public definitions documented."
    cells, module, attached = [], None, attachments(nb)
    owners = {n: o for c in nb["cells"] if c["cell_type"] == "code" for o, n in public("".join(c["source"]), attached)
              if o}                                        # a method shown by its bare name is titled with its class
    shown = set(re.findall(r"show_doc\((\w+(?:\.\w+)?)", "".join("".join(c["source"]) for c in nb["cells"])))
    shown |= {f"{owners[n]}.{n}" for n in shown if n in owners}
    for c in nb["cells"]:
        src, docs = "".join(c["source"]), []
        if c["cell_type"] == "code":
            d = _directives(src)
            m = next((re.match(r"#\|\s*default_exp\s+(\S+)", x) for x in d if "default_exp" in x), None)
            if m: module = importlib.import_module(f"whilelab.{m.group(1)}")
            if any(re.match(r"#\|\s*hide\b", x) for x in d): continue
            if module is not None and any(re.match(r"#\|\s*exports?\b", x) for x in d):
                docs = _documented(src, module, shown, attached)
            src = "\n".join(l for l in src.splitlines() if not l.strip().startswith("#|")).strip("\n")
            if not src: continue
        if c["cell_type"] == "code" and (table := _show_doc_table(src, module, owners)) is not None:
            cells.append(table); continue
        if c.get("outputs"): c = {**c, "outputs": [_for_page(o) for o in c["outputs"]]}
        cells.append({**c, "source": src}); cells += docs
    return {**nb, "cells": cells}

def _show_doc_table(src: str, module, owners: dict | None = None) -> dict | None:
    """A `show_doc(X)` cell as the page shows it: X's signature, docstring and parameter table (nbdev's own output
    puts the docments in the signature, with no table); None for any other cell, or an X the module does not have."""
    m = re.fullmatch(r"show_doc\((\w+)(?:\.(\w+))?\)", src.strip())
    if not m or module is None: return None
    if not m.group(2) and m.group(1) in (owners or {}):              # show_doc(step) of Search.step
        m = re.fullmatch(r"(\w+)\.(\w+)", f"{owners[m.group(1)]}.{m.group(1)}")
    obj = getattr(module, m.group(1), None)
    if m.group(2): obj = getattr(obj, m.group(2), None)
    if obj is None: return None
    return {"cell_type": "markdown", "metadata": {}, "source": doc_markdown(obj, ".".join(filter(None, m.groups())))}

def _for_page(output: dict) -> dict:
    "An output as a static page shows it: a widget as its HTML snapshot, markdown without show_doc's Quarto attributes."
    data = dict(output.get("data") or {})
    if "text/html" in data: data.pop("application/vnd.jupyter.widget-view+json", None)   # no kernel draws it here
    if "text/markdown" in data:
        md = "".join(data["text/markdown"]) if isinstance(data["text/markdown"], list) else data["text/markdown"]
        data["text/markdown"] = re.sub(r"\{target=\"_blank\"[^}]*\}", "", md)
    return {**output, "data": data} if "data" in output else output

def execute(path: Path, dest: Path):
    "Run a notebook in its own folder and save it with outputs to `dest` (eval: false cells skipped)."
    from execnb.shell import CaptureShell
    from execnb.nbio import read_nb, write_nb
    def _no_eval(cell):   # the rule nbdev_test applies: skip `#| eval: false` cells and the export call
        if cell.cell_type != "code": return True
        if "nbdev_export" + "(" in cell.source: return True
        return any(re.match(r"#\|\s*eval:\s*false", l.strip(), re.I) for l in cell.source.splitlines())
    nb = read_nb(path)
    cwd = os.getcwd(); os.chdir(path.parent)
    try: CaptureShell(mpl_format="png").run_all(nb, exc_stop=True, preproc=_no_eval)
    finally: os.chdir(cwd)
    write_nb(nb, dest)

def nav_title(path: Path) -> str:
    nb = json.loads(path.read_text())
    for c in nb["cells"]:
        if c["cell_type"] == "markdown":
            m = re.match(r"#\s+(.+)", "".join(c["source"]).strip())
            if m: return m.group(1).strip()
    return path.stem

_HEAD = re.compile(r'(<h[1-6]\b[^>]*\bid=")([^"]*)("[^>]*>(?:(?!</h[1-6]>).)*?'   # a heading, up to its own ¶ link
                   r'<a class="anchor-link" href="#)([^"]*)(")', re.S)
_TOC = re.compile(r'(<a href="#)([^"]*)(" class="md-nav__link")')

def unique_anchors(html: str) -> str:
    """`html` with unique heading ids, and its table of contents pointing at them. mkdocs-jupyter gives each heading
    the slug of its text, so a chapter `## simulate` and the function `### simulate` share an id, while the contents
    (from Python-Markdown) say `#simulate_1`, and a heading of code alone (## Tool, in code) is `#_1` there; the
    contents list the headings after the title in page order (twice: the page's own and the mobile menu's), so
    each entry takes its heading's id."""
    seen, ids = set(), []
    def one(m):
        i = base = m.group(2) or "section"
        n = 0
        while i in seen: n += 1; i = f"{base}_{n}"
        seen.add(i); ids.append(i)
        return m.group(1) + i + m.group(3) + i + m.group(5)
    html = _HEAD.sub(one, html)
    toc, k = _TOC.findall(html), len(ids) - 1
    if k <= 0 or len(toc) != 2 * k or toc[:k] != toc[k:]: return html    # not the shape we know: leave it
    it = iter(ids[1:] * 2)
    return _TOC.sub(lambda m: m.group(1) + next(it) + m.group(3), html)

def main(argv=None):
    ap = argparse.ArgumentParser(); ap.add_argument("--out", default=str(ROOT / "_site")); ap.add_argument("--no-execute", action="store_true")
    ap.add_argument("--only", nargs="*", help="notebook stems to include (default: all)")
    ap.add_argument("--execute", nargs="*", help="execute only these notebook stems; the rest keep their saved outputs")
    a = ap.parse_args(argv)
    src = ROOT / "_docs_src"; shutil.rmtree(src, ignore_errors=True); (src / "docs" / "tutorials").mkdir(parents=True)
    if (NBS / "images").is_dir(): shutil.copytree(NBS / "images", src / "docs" / "images")   # screenshots a page shows
    pages = [p for p in [NBS / "index.ipynb", *sorted(NBS.glob("[0-9]*.ipynb")), *sorted((NBS / "tutorials").glob("*.ipynb"))]
             if not a.only or p.stem in a.only or p.stem == "index"]
    nav_ch, nav_tu = [], []
    for p in pages:
        rel = p.relative_to(NBS)
        dest = src / "docs" / rel
        if a.no_execute or (a.execute is not None and p.stem not in a.execute): shutil.copy(p, dest)
        else: execute(p, dest); print(f"executed {rel}")
        dest.write_text(json.dumps(process(json.loads(dest.read_text())), indent=1))
        entry = {nav_title(dest): str(rel)}
        (nav_tu if rel.parts[0] == "tutorials" else nav_ch).append(entry)
    home = next(e for e in nav_ch if "index.ipynb" in e.values())
    nav = [{"Home": "index.ipynb"}, {"Chapters": [e for e in nav_ch if e is not home]}] + ([{"Tutorials": nav_tu}] if nav_tu else [])
    cfg = {"site_name": "whilelab", "site_description": "Turn a tool-using agent's tools and policy into evals and post-training data",
           "docs_dir": "docs", "site_dir": str(Path(a.out).resolve()), "use_directory_urls": False,
           "theme": {"name": "material", "font": False,      # system fonts: a page loads nothing from the internet
                     "features": ["navigation.sections", "navigation.footer", "search.highlight"]},
           "extra_css": ["whilelab.css"],
           "plugins": ["search", {"mkdocs-jupyter": {"execute": False, "include_source": True, "ignore_h1_titles": False}}],
           "nav": nav}
    (src / "docs" / "whilelab.css").write_text(CSS)
    (src / "mkdocs.yml").write_text(json.dumps(cfg, indent=1))       # YAML is a superset of JSON
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(src / "mkdocs.yml")], check=True,
                   env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    for page in Path(a.out).rglob("*.html"): page.write_text(unique_anchors(page.read_text()))
    print(f"site written to {a.out}")

if __name__ == "__main__": main()

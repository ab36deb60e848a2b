"""Build the docs site from the notebooks, offline: `python tools/docs.py [--out _site] [--no-execute]`.

Quarto (behind `nbdev_docs`) cannot be installed on these machines, so this is the offline path; the
standard `nbdev_docs` keeps working for anyone who has Quarto. Steps:
1. execute every notebook in `nbs/` (cells marked `#| eval: false` are skipped, as in `nbdev_test`) so
   each page shows its outputs and plots -- or, with `--no-execute` (or `--execute stems...` for a few),
   use the outputs saved in them;
2. process them the nbdev way: drop `#| hide` cells, strip `#|` directive lines;
3. render with MkDocs (Material theme: navigation and search) and mkdocs-jupyter.
"""
import argparse, json, os, re, shutil, subprocess, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NBS = ROOT / "nbs"

def _directives(src: str) -> list[str]: return [l.strip() for l in src.splitlines() if l.strip().startswith("#|")]

def process(nb: dict) -> dict:
    "A copy of `nb` as a docs page: hidden cells dropped, directive lines removed."
    cells = []
    for c in nb["cells"]:
        src = "".join(c["source"])
        if c["cell_type"] == "code":
            d = _directives(src)
            if any(re.match(r"#\|\s*hide\b", x) for x in d): continue
            src = "\n".join(l for l in src.splitlines() if not l.strip().startswith("#|")).strip("\n")
            if not src: continue
        cells.append({**c, "source": src})
    return {**nb, "cells": cells}

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

def main(argv=None):
    ap = argparse.ArgumentParser(); ap.add_argument("--out", default=str(ROOT / "_site")); ap.add_argument("--no-execute", action="store_true")
    ap.add_argument("--only", nargs="*", help="notebook stems to include (default: all)")
    ap.add_argument("--execute", nargs="*", help="execute only these notebook stems; the rest keep their saved outputs")
    a = ap.parse_args(argv)
    src = ROOT / "_docs_src"; shutil.rmtree(src, ignore_errors=True); (src / "docs" / "tutorials").mkdir(parents=True)
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
           "theme": {"name": "material", "features": ["navigation.sections", "search.highlight"]},
           "plugins": ["search", {"mkdocs-jupyter": {"execute": False, "include_source": True, "ignore_h1_titles": False}}],
           "nav": nav}
    (src / "mkdocs.yml").write_text(json.dumps(cfg, indent=1))       # YAML is a superset of JSON
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(src / "mkdocs.yml")], check=True,
                   env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    print(f"site written to {a.out}")

if __name__ == "__main__": main()

#!/usr/bin/env python3
"""How the chapters read, in the figures issue 17 compares with the nbdev anchors (claudette, fastcore, execnb):
export-cell size, definitions per export cell, examples after exports, stored outputs, docments, `@patch`,
`show_doc`, long lines, long functions, import circles.

    python tools/nbstats.py            # a markdown table of this checkout
    python tools/nbstats.py --json     # the same figures as JSON
"""
import ast, json, re, statistics, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXPORT = re.compile(r"#\|\s*exports?\b")


def cells(nb: Path):
    "(kind, source lines, has outputs) of each cell of a notebook."
    for c in json.loads(nb.read_text())["cells"]:
        yield c["cell_type"], "".join(c["source"]).splitlines(), bool(c.get("outputs"))


def body(lines): return [l for l in lines if l.strip() and not l.startswith("#|")]


def definitions(src: str) -> list:
    "Top-level functions and classes a cell defines (parsed, so strings and comments do not count)."
    try: tree = ast.parse(src)
    except SyntaxError: return []
    return [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]


def functions(src: str) -> list:
    "Every function in a cell, nested ones and methods too, with its length in lines."
    try: tree = ast.parse(src)
    except SyntaxError: return []
    return [n.end_lineno - n.lineno + 1 for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _patches_private(fn) -> bool:
    "Whether `fn` is `@patch`ed onto a private class (its first parameter annotated with a `_Name`)."
    patched = any("patch" in ast.unparse(d) for d in fn.decorator_list)
    owner = fn.args.args[0].annotation if patched and fn.args.args else None
    return isinstance(owner, ast.Name) and owner.id.startswith("_")


def only_imports(src: str) -> bool:
    "Whether a cell holds nothing but imports."
    try: tree = ast.parse(src)
    except SyntaxError: return False
    return bool(tree.body) and all(isinstance(n, (ast.Import, ast.ImportFrom)) for n in tree.body)


def defines_public(src: str) -> bool:
    "Whether a cell defines a public name: a function, class or constant not starting with `_`, or a public method."
    try: tree = ast.parse(src)
    except SyntaxError: return True
    for n in tree.body:
        if isinstance(n, ast.ClassDef) and not n.name.startswith("_"): return True
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and not n.name.startswith("_"):
            if not _patches_private(n): return True
        targets = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(n, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and not t.id.startswith("_") for t in targets): return True
    return False


def documented(src: str) -> tuple:
    "(public parameters, those with an inline comment on their line: a docment) of the public functions and methods in a cell."
    try: tree = ast.parse(src)
    except SyntaxError: return 0, 0
    lines, total, with_doc = src.splitlines(), 0, 0
    inside_private = {id(m) for c in ast.walk(tree) if isinstance(c, ast.ClassDef) and c.name.startswith("_")
                      for m in ast.walk(c)}
    top = [n for n in tree.body] + [m for c in tree.body if isinstance(c, ast.ClassDef) for m in c.body]
    for n in top:    # a function nested in another is not API
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) or n.name.startswith("_"): continue
        if id(n) in inside_private or _patches_private(n): continue     # a private class's methods are not public API
        for a in n.args.args + n.args.kwonlyargs:
            if a.arg in ("self", "cls"): continue
            total += 1
            with_doc += "#" in lines[a.lineno - 1][a.end_col_offset:]
    return total, with_doc


def import_circles(pkg: Path) -> list:
    "Pairs of modules that import each other at module level or inside functions."
    mods = {p.stem for p in pkg.glob("*.py") if not p.stem.startswith("_")}
    deps = {}
    for m in mods:
        text = (pkg / f"{m}.py").read_text()
        found = re.findall(r"^\s*(?:from\s+(?:whilelab\.|\.)(\w+)\s+import|import\s+whilelab\.(\w+))", text, re.M)
        found = [a or b for a, b in found]
        deps[m] = {d for d in found if d in mods and d != m}
    return sorted({tuple(sorted((a, b))) for a in deps for b in deps[a] if a in deps.get(b, ())})


def measure(nbs_dir: Path = ROOT / "nbs") -> dict:
    sizes, pub, (multi, followed, code, with_out, lines, long, params, docd, patches, show, long_fns) = [], [], [0] * 11
    for nb in sorted(nbs_dir.glob("[0-9]*.ipynb")):
        cs = list(cells(nb))
        for i, (kind, src, out) in enumerate(cs):
            if kind != "code": continue
            text = "\n".join(src)
            show += len(re.findall(r"\bshow_doc\(", text))
            if not any(EXPORT.match(l) for l in src[:3]):
                code += 1; with_out += out; continue
            b = body(src)
            sizes.append(len(b))
            multi += len(definitions(text)) >= 2
            nxt = [c for c in cs[i + 1:i + 3] if c[0] == "code"]
            shown = any(not any(EXPORT.match(l) for l in c[1][:3]) for c in nxt)
            if only_imports(text): shown = True    # a cell of imports has nothing to show
            followed += shown
            if defines_public(text): pub.append(shown)
            lines += len(b); long += sum(len(l) > 120 for l in b)
            t, d = documented(text); params += t; docd += d
            patches += len(re.findall(r"^@patch\b", text, re.M))
            long_fns += sum(n > 40 for n in functions(text))
    q = statistics.quantiles(sizes, n=10)
    return {"export cells": len(sizes),
            "lines per export cell, median / p90 / max": f"{statistics.median(sizes):g} / {q[-1]:g} / {max(sizes)}",
            "export cells holding two or more definitions": f"{multi / len(sizes):.0%}",
            "export cells followed (within 2 cells) by an example or test (imports aside)": f"{followed / len(sizes):.0%}",
            "  of them, cells defining a public name": f"{sum(pub) / max(len(pub), 1):.0%} of {len(pub)}",
            "code cells with a stored output (chapters)": f"{with_out / max(code, 1):.0%}",
            "parameters documented inline (docments)": f"{docd / max(params, 1):.0%}",
            "`@patch` to grow a class method by method": patches, "`show_doc` calls": show,
            "code lines over 120 characters": f"{long / max(lines, 1):.1%}", "functions over 40 lines": long_fns,
            "import circles": ", ".join(f"{a} <-> {b}" for a, b in import_circles(ROOT / "whilelab")) or "none"}


if __name__ == "__main__":
    m = measure()
    if "--json" in sys.argv: print(json.dumps(m, indent=2))
    else: print("| | whilelab |\n|---|---|\n" + "\n".join(f"| {k} | {v} |" for k, v in m.items()))

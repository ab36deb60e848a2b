"""The modules stand in floors: no import circles, and neither the offline stand-ins nor the SDK backends import a
model role (the roles stand on the backends, never the reverse)."""
import ast
from pathlib import Path

LIB = Path(__file__).resolve().parents[1] / "whilelab"

def top_level_imports(module: str) -> set:
    "The package modules `module` imports when it is imported (not inside a function)."
    tree = ast.parse((LIB / f"{module}.py").read_text())
    return {n.module for n in tree.body if isinstance(n, ast.ImportFrom) and n.level == 1 and n.module}

def modules(): return sorted(p.stem for p in LIB.glob("*.py") if not p.stem.startswith("_"))

def test_the_modules_import_no_circle():
    left = {m: top_level_imports(m) for m in modules()}
    while left:          # peel off the modules whose imports are all placed; a circle leaves some unplaceable
        ready = {m for m, deps in left.items() if not deps & left.keys()}
        if not ready: break
        for m in ready: del left[m]
    assert left == {}

def test_stand_ins_and_backends_import_no_role():
    assert {m: top_level_imports(m) & {"roles"} for m in ("standins", "backends")} == {"standins": set(), "backends": set()}
    assert "standins" not in top_level_imports("backends") and "backends" not in top_level_imports("standins")

def test_every_extra_an_error_names_can_be_installed():
    "A missing package's error says pip install 'whilelab[X]': X must be an extra setup.py makes from settings.ini."
    import configparser, re
    from whilelab.interop import EXTRAS
    cfg = configparser.ConfigParser(delimiters=["="]); cfg.read(LIB.parent / "settings.ini")
    extras = {k[:-len("_requirements")] for k in cfg["DEFAULT"] if k.endswith("_requirements")}
    src = "".join((LIB / f"{m}.py").read_text() for m in modules())
    named = set(re.findall(r"whilelab\[(\w+)\]", src)) - {"extra"}
    needed = {EXTRAS.get(m.split(".")[0], m.split(".")[0]) for m in re.findall(r"""need\(["']([\w.]+)["']""", src)}
    assert named | needed | set(EXTRAS.values()) <= extras, sorted((named | needed | set(EXTRAS.values())) - extras)

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

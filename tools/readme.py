"""Write README.md from nbs/index.ipynb, offline (nbdev_readme needs Quarto, which these machines lack).

Markdown cells are copied; code cells become ```python blocks followed by their saved text outputs
(tables as their plain-text form). Cells marked `#| hide` are skipped. `--check` exits 1 when
README.md differs from what the notebook gives, `--execute` first runs the notebook and saves its outputs.
"""
import json, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NB, README = ROOT / "nbs" / "index.ipynb", ROOT / "README.md"
HEADER = "<!-- Generated from nbs/index.ipynb by `python tools/readme.py`; edit the notebook, not this file. -->\n\n"

def _text(out):
    if out.get("output_type") == "stream": return "".join(out["text"])
    data = out.get("data", {})
    return "".join(data["text/plain"]) if "text/plain" in data else ""

def render(nb) -> str:
    parts = []
    for c in nb["cells"]:
        src = "".join(c["source"]).rstrip()
        if c["cell_type"] == "markdown": parts.append(src); continue
        lines = src.splitlines()
        if any(l.strip().startswith("#|") and "hide" in l for l in lines): continue
        code = "\n".join(l for l in lines if not l.strip().startswith("#|"))
        parts.append(f"```python\n{code}\n```")
        outs = "".join(_text(o) for o in c.get("outputs", [])).rstrip()
        if outs: parts.append(f"```\n{outs}\n```")
    return HEADER + "\n\n".join(parts) + "\n"

def main(argv):
    if "--execute" in argv:
        from execnb.shell import CaptureShell
        import os; os.chdir(NB.parent)
        CaptureShell().execute(NB, NB)
    text = render(json.loads(NB.read_text()))
    if "--check" in argv:
        if README.read_text() != text:
            sys.exit("README.md is out of date with nbs/index.ipynb. Fix: python tools/readme.py")
        print("README.md matches nbs/index.ipynb"); return
    README.write_text(text); print(f"wrote {README}")

if __name__ == "__main__": main(sys.argv[1:])

"""Every chapter opens with a worked example a reader can read: an "## At a glance" section as its first section,
before any `show_doc`, whose stored output is named values, a table or a figure -- not a bare tuple, list or dict."""
import json, re
from pathlib import Path
import pytest

NBS = Path(__file__).resolve().parent.parent / "nbs"
# chapters whose opening is still to be written; take one off the list when it gets its "At a glance"
NOT_YET: set = set()
CHAPTERS = sorted(p.stem for p in NBS.glob("[0-9]*.ipynb"))

def _cells(stem): return json.loads((NBS / f"{stem}.ipynb").read_text())["cells"]
def _src(c): return "".join(c["source"])
def _plain(o): return "".join(o.get("data", {}).get("text/plain", ""))

def glance_problems(cells: list) -> list[str]:
    "What keeps a chapter's opening from being a worked example a reader can read (empty: nothing)."
    heads = [i for i, c in enumerate(cells) if c["cell_type"] == "markdown" and re.search(r"(?m)^## ", _src(c))]
    if not heads or not _src(cells[heads[0]]).lstrip().startswith("## At a glance"):
        first = re.search(r"(?m)^## .*", _src(cells[heads[0]])).group(0) if heads else "none"
        return [f"the first section is {first!r}, not '## At a glance'"]
    g = heads[0]
    shown = [i for i, c in enumerate(cells) if c["cell_type"] == "code" and "show_doc(" in _src(c)
             and not _src(c).startswith("#| hide")]
    out = [f"show_doc (cell {shown[0]}) comes before the worked example"] if shown and shown[0] < g else []
    code = next((c for c in cells[g + 1:] if c["cell_type"] == "code"), None)
    if code is None or not code["outputs"]: return out + ["the worked example has no stored output"]
    for o in code["outputs"]:
        data = o.get("data", {})
        if o["output_type"] == "execute_result" and not ({"text/html", "image/png"} & set(data)) \
           and _plain(o).lstrip()[:1] in ("(", "[", "{"):
            out.append(f"the worked example ends in a bare tuple, list or dict: {_plain(o)[:60]!r}")
    return out

@pytest.mark.parametrize("stem", [c for c in CHAPTERS if c not in NOT_YET])
def test_chapter_opens_with_a_readable_worked_example(stem):
    assert glance_problems(_cells(stem)) == []

def test_the_check_can_fail():
    md = lambda s: {"cell_type": "markdown", "source": [s]}
    code = lambda s, *outs: {"cell_type": "code", "source": [s], "outputs": list(outs)}
    result = lambda text, **more: {"output_type": "execute_result", "data": {"text/plain": [text], **more}}
    intro = md("# x\n\n> what it does")
    assert glance_problems([intro, md("## Parts"), code("x")]) == ["the first section is '## Parts', not '## At a glance'"]
    assert glance_problems([intro, code("show_doc(f)"), md("## At a glance"), code("f()", result("'ok'"))]) == [
        "show_doc (cell 1) comes before the worked example"]
    assert glance_problems([intro, md("## At a glance"), code("f()")]) == ["the worked example has no stored output"]
    assert glance_problems([intro, md("## At a glance"), code("f()", result("(1, 2)"))])[0].startswith(
        "the worked example ends in a bare tuple")
    table = result("   a\n0  1", **{"text/html": ["<table></table>"]})
    assert glance_problems([intro, md("## At a glance"), code("f()", table)]) == []

def test_not_yet_lists_only_chapters_that_lack_one():
    "A chapter that got its worked example comes off NOT_YET, so the test above covers it from then on."
    assert NOT_YET <= set(CHAPTERS)
    done = [s for s in NOT_YET if not glance_problems(_cells(s))]
    assert done == [], f"{done} open with a worked example now: take them off NOT_YET"

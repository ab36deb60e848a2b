"""Every public plot prints clean at a column's width (3.5 in) and a page's (7 in): `figure_problems` finds no text
too small, off the figure or over other text, no tick labels touching, no colour-bar label off its swatch and no
figure taller than a page. Drawn on the built-in example (shopfront) and on the permits office (bench/worlds), played
for real with the offline stand-ins."""
import sys, warnings
from pathlib import Path
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pytest
from whilelab.cover import coverage, figure_problems, plot_coverage
from whilelab.defaults import FigureOptions, SimOptions
from whilelab.delta import delta_report, plot_delta
from whilelab.search import plot_history
from whilelab.simulate import simulate
from whilelab.standins import ScriptedAgent
from whilelab.traces import Traces, plot_gap, production_gap

WIDTHS = (FigureOptions().column_width, FigureOptions().width)
WORLDS = ("shopfront", "permits")


def _world(name: str) -> dict:
    "simulate's tools, policy and world for `name`: nothing for the built-in example, a fresh office for permits."
    if name == "shopfront": return {}
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
    from worlds import permits
    from whilelab.worlds import FunctionWorld
    w = FunctionWorld(permits.FUNCTIONS, permits.state(), name="permits")
    return dict(tools=w.tools, policy=permits.POLICY, world=w)


@pytest.fixture(scope="module", params=WORLDS)
def played(request):
    "(a search played to its end, rows of a worse and a better agent on one plan) in one world."
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # the example's policy facts left off the rule axis: said elsewhere
        searched = simulate(options=SimOptions(k_samples=1, n_phrasings=1), progress=False, **_world(request.param))
        once = SimOptions(k_samples=2, n_phrasings=1, search=None)
        before, after = (simulate(ScriptedAgent(flaw_rate=f), options=once, progress=False, **_world(request.param))
                         for f in (0.5, 0.1))
    return searched, before, after


def _figures(searched, before, after) -> dict:
    "name -> a function drawing that public plot at a width."
    prod = Traces(rows=[{"cell": {k: r["cell"][k] for k in ("tool", "condition", "world") if k in r["cell"]}}
                        for r in before.rows[::3]])              # a third of the rows, as production would show them
    rep, gap = delta_report(before.rows, after.rows), production_gap(prod, before.plan)
    return {"plot_coverage (plan)": lambda w: plot_coverage(coverage(searched.plan), width=w),
            "plot_coverage (delivered)": lambda w: plot_coverage(searched.coverage, width=w),
            "plot_history": lambda w: plot_history(searched.history, width=w),
            "plot_delta": lambda w: plot_delta(rep, width=w),
            "plot_gap": lambda w: plot_gap(gap, width=w)}


def test_every_public_plot_is_covered():
    "A new `plot_` function must join `_figures`: the list here is every public plot the package has."
    import whilelab
    root = Path(whilelab.__file__).parent
    found = {l.split("(")[0][4:] for p in root.glob("*.py") for l in p.read_text().splitlines()
             if l.startswith("def plot_")}
    assert found == {"plot_coverage", "plot_history", "plot_delta", "plot_gap"}, found


@pytest.mark.parametrize("width", WIDTHS)
def test_every_public_plot_prints_clean(played, width):
    said = {}
    for name, draw in _figures(*played).items():
        fig = draw(width)
        assert fig.get_size_inches()[0] == pytest.approx(width)
        said[name] = figure_problems(fig); plt.close(fig)
    assert said == {name: [] for name in said}

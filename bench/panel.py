"""The search panel's redraw per batch (issue 37: under 0.3 s at the example's 64 cells), and the print figures.

Run from the project root: `python bench/panel.py [--repeats 3]`. Plays the built-in example's search to its end
through a `SearchPanel` (no browser: the widgets' values are set as a kernel would), and prints per run the batches,
the redraw per batch (median, mean, max) and the share of batches under 0.3 s; then the time to draw and write each
print figure (coverage heatmap, search history) as PNG at 300 dpi and as PDF. Exits non-zero if the median redraw
is not under 0.3 s.
"""
import argparse, statistics, sys, tempfile, time, warnings
from pathlib import Path
import numpy as np
import matplotlib; matplotlib.use("Agg")
import matplotlib.pyplot as plt
from whilelab.core import shopfront
from whilelab.axes import agent_axes
from whilelab.cover import covering_array, plot_coverage, save_figure
from whilelab.defaults import SimOptions
from whilelab.search import Search, plot_history
from whilelab.simulate import simulate
from whilelab.standins import ScriptedAgent, TemplateUser
from whilelab.widgets import SearchPanel

def panel_run():
    spec = shopfront(); axes = agent_axes(spec)
    plan = covering_array(axes, seed=0)
    p = SearchPanel(Search(spec, ScriptedAgent(), TemplateUser(), axes, plan, SimOptions(n_phrasings=1, k_samples=2)))
    p.run(background=False)
    return plan.sizes["cell"], np.array(p.redraws)

def figures(out: Path):
    sim = simulate(options=SimOptions(k_samples=2), progress=False)
    for name, draw in (("coverage", lambda: plot_coverage(sim.coverage, "delivered")),
                       ("history", lambda: plot_history(sim.history))):
        for fmt in ("png", "pdf"):
            t = time.perf_counter(); fig = draw(); save_figure(fig, out / f"{name}.{fmt}"); plt.close(fig)
            print(f"{name:9} {fmt}: {time.perf_counter() - t:.2f} s, {(out / f'{name}.{fmt}').stat().st_size:,} bytes")

def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--repeats", type=int, default=3); a = ap.parse_args()
    warnings.filterwarnings("ignore", category=UserWarning)
    medians = []
    for i in range(a.repeats):
        cells, r = panel_run(); medians.append(float(np.median(r)))
        print(f"run {i + 1}: plan {cells} cells, {len(r)} batches; redraw median {np.median(r):.3f} s, mean "
              f"{r.mean():.3f} s, max {r.max():.3f} s; {(r < 0.3).mean():.0%} of batches under 0.3 s")
    figures(Path(tempfile.mkdtemp()))
    m = statistics.median(medians)
    print(f"\nmedian redraw per batch over {a.repeats} runs: {m:.3f} s (target < 0.3 s)")
    sys.exit(0 if m < 0.3 else 1)

if __name__ == "__main__": main()

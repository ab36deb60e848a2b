"""The search panel's redraw per batch (issue 37: under 0.3 s at the example's 64 cells), against drawing both figures
anew each batch as a plain notebook would, and the print figures.

Run from the project root: `python bench/panel.py [--repeats 3]`. Plays the built-in example's search to its end
through a `SearchPanel` (no browser: the widgets' values are set as a kernel would). After each batch the same two
figures are also drawn from scratch and encoded as PNG at the panel's resolution (the peer: `plot_history` and
`plot_coverage` then `savefig`). Prints per run the batches'
redraw (median, mean, max, share under 0.3 s) beside the peer's, and the panel's construction (which lays both
figures out before the first batch); then the time to draw and write each print figure
(coverage heatmap, search history) as PNG at 300 dpi and as PDF. Exits non-zero if a median redraw is not under 0.3 s.
"""
import argparse, io, statistics, sys, tempfile, time, warnings
from pathlib import Path
import numpy as np
import matplotlib; matplotlib.use("Agg")
import matplotlib.pyplot as plt
from whilelab.core import shopfront
from whilelab.axes import agent_axes
from whilelab.cover import covering_array, plot_coverage, save_figure, coverage
from whilelab.defaults import SimOptions, FigureOptions
from whilelab.rollout import delivered_cell
from whilelab.search import Search, plot_history
from whilelab.simulate import simulate
from whilelab.standins import ScriptedAgent, TemplateUser
from whilelab.widgets import SearchPanel

def from_scratch(s: Search) -> float:
    "Seconds to draw both figures anew and encode them as PNG at the panel's resolution."
    t, dpi = time.perf_counter(), FigureOptions().screen_dpi
    for fig in (plot_history(s.history_dataset()),
                plot_coverage(coverage(s.rows, s.plan, cell_of=delivered_cell), "delivered", numbers=False)):
        fig.savefig(io.BytesIO(), format="png", dpi=dpi); plt.close(fig)
    return time.perf_counter() - t

def panel_run():
    spec = shopfront(); axes = agent_axes(spec)
    plan = covering_array(axes, seed=0)
    search = Search(spec, ScriptedAgent(), TemplateUser(), axes, plan, SimOptions(n_phrasings=1, k_samples=2))
    t = time.perf_counter(); p = SearchPanel(search); made = time.perf_counter() - t
    peer = []
    while p.step(background=False): peer.append(from_scratch(p.search))
    return plan.sizes["cell"], made, np.array(p.redraws), np.array(peer)

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
    print("run | plan cells | panel made s | batches | redraw median s | mean s | max s | under 0.3 s | "
          "peer (anew) median s | ratio")
    for i in range(a.repeats):
        cells, made, r, peer = panel_run(); medians.append(float(np.median(r)))
        print(f"{i + 1} | {cells} | {made:.3f} | {len(r)} | {np.median(r):.3f} | {r.mean():.3f} | {r.max():.3f} | "
              f"{(r < 0.3).mean():.0%} | {np.median(peer):.3f} | {np.median(peer) / np.median(r):.1f}x")
    figures(Path(tempfile.mkdtemp()))
    m = statistics.median(medians)
    print(f"\nmedian redraw per batch over {a.repeats} runs: {m:.3f} s (target < 0.3 s)")
    sys.exit(0 if m < 0.3 else 1)

if __name__ == "__main__": main()

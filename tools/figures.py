"""The docs' pictures of the two print figures, as a paper prints them: the coverage heatmap and the search's history
of the built-in example, a column wide (3.5 in) and a page wide (7 in). `python tools/figures.py` writes
nbs/images/{coverage,history}_{column,page}.png (02_cover and 03_search show them); tools/docs.py copies nbs/images
into the site. Each is checked by `figure_problems` first: a figure that would not print is not written."""
import sys, warnings
from pathlib import Path
import matplotlib
matplotlib.use("Agg")

ROOT = Path(__file__).resolve().parent.parent
DPI = 150          # enough for a screen at twice a figure's size, small in the repository (print: FigureOptions.dpi)


def main(out: Path = ROOT / "nbs" / "images"):
    import matplotlib.pyplot as plt
    from whilelab.cover import figure_problems, plot_coverage, save_figure
    from whilelab.defaults import FigureOptions, SimOptions
    from whilelab.search import plot_history
    from whilelab.simulate import simulate
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # the example policy's statements of fact (see 01_axes)
        sim = simulate(options=SimOptions(k_samples=1, n_phrasings=1), progress=False)   # a whole search, seed 0
    o, out = FigureOptions(), Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for size, width in (("column", o.column_width), ("page", o.width)):
        for name, fig in (("coverage", plot_coverage(sim.coverage, "the example, delivered", width=width)),
                          ("history", plot_history(sim.history, width=width))):
            said = figure_problems(fig)
            if said: sys.exit(f"{name} at {width} in would not print: {said}")
            save_figure(fig, out / f"{name}_{size}.png", dpi=DPI); plt.close(fig)
    print(f"written to {out}")


if __name__ == "__main__": main()

"""The search's history figure shows what the search did: the arm panel is the rollouts each arm played, counted
from the rows batch by batch (not the weight it was drawn at); every arm keeps a marker and a dash at any number of
batches; and the live panel's copy of it says the same, titled with the panel's state."""
import collections, warnings
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pytest
from whilelab.axes import agent_axes
from whilelab.core import shopfront
from whilelab.cover import covering_array
from whilelab.defaults import ARMS, FigureOptions, SearchOptions, SimOptions
from whilelab.search import ARM_LINES, ARM_MARKERS, Search, plot_history
from whilelab.standins import ScriptedAgent, TemplateUser


@pytest.fixture(scope="module")
def searched():
    """A search of the example played to its end, past `marker_points` batches (small batches, a longer patience, no
    rate threshold and no price cap keep it going)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # the example's policy facts left off the rule axis: said elsewhere
        spec = shopfront(); axes = agent_axes(spec)
        s = Search(spec, ScriptedAgent(), TemplateUser(), axes, covering_array(axes, seed=0),
                   SimOptions(n_phrasings=1, k_samples=1, search=SearchOptions(patience=20, min_new_per_1k=0.0,
                                                                          explore_price=100.0, batch_situations=13)))
        s.run()
    return s


def per_batch_from_rows(s):
    "Rollouts per arm in each batch, counted from the rows' own `arm`: (batches, arms)."
    ends = np.cumsum([sum(h["arms"][a]["rollouts"] for a in ARMS) for h in s.history])
    assert ends.tolist() == [h["rollouts"] for h in s.history]    # the rows of batch b are rows[ends[b-1]:ends[b]]
    return np.array([[collections.Counter(r["arm"] for r in s.rows[i:j])[a] for a in ARMS]
                     for i, j in zip(np.r_[0, ends[:-1]], ends)])


def test_history_records_the_rollouts_each_arm_played(searched):
    hist = searched.history_dataset()
    np.testing.assert_array_equal(hist.rollouts.values, per_batch_from_rows(searched))
    assert (hist.rollouts.sum("arm").cumsum("batch") == hist.total_rollouts).all()


def test_the_arm_panel_is_the_rollouts_played_not_the_weights(searched):
    hist, counted = searched.history_dataset(), per_batch_from_rows(searched)
    fig = plot_history(hist); plt.close(fig)
    arm_ax = fig.axes[0]
    assert "weight" not in arm_ax.get_title() + arm_ax.get_ylabel()     # a weight, if shown, says so; this is not one
    for line, a, col in zip(arm_ax.lines, ARMS, counted.T):
        assert line.get_label() == a
        np.testing.assert_array_equal(line.get_xdata(), np.arange(1, hist.sizes["batch"] + 1))
        np.testing.assert_array_equal(line.get_ydata(), col)            # batch by batch, what the rows say
    # the case that made a weight plot misleading: an arm drawn at a large weight that played nothing (the plan done)
    idle = (hist.weight.sel(arm="structured") > 0.2) & (hist.rollouts.sel(arm="structured") == 0)
    assert idle.any() and (arm_ax.lines[0].get_ydata()[idle.values] == 0).all()


def test_every_arm_keeps_a_marker_and_a_dash_at_any_length(searched):
    hist, o = searched.history_dataset(), FigureOptions()
    assert hist.sizes["batch"] > o.marker_points                       # past the point where markers used to vanish
    fig = plot_history(hist); plt.close(fig)
    fig.canvas.draw()
    for ax in (fig.axes[0], fig.axes[1]):
        styles = set()
        for line in ax.lines:
            assert line.get_marker() not in (None, "", "None") and line.get_markersize() > 0, line.get_label()
            every = line.get_markevery()
            shown = len(np.arange(len(line.get_xdata()))[every[0]::every[1]])
            assert 0 < shown <= o.marker_points, (line.get_label(), every)
            styles.add((line.get_marker(), str(line.get_linestyle())))
        assert len(styles) == len(ARMS)                                 # apart in greyscale: shape and dash, not hue
    assert len(set(ARM_MARKERS.values())) == len(set(map(str, ARM_LINES.values()))) == len(ARMS)


def test_the_live_panel_draws_the_same_arm_panel_and_its_state(searched):
    from whilelab.widgets import SearchPanel
    panel = SearchPanel(searched)                                      # a finished search: drawn as it stands
    fig, counted = panel._history_live.fig, per_batch_from_rows(searched)
    for line, col in zip(fig.axes[0].lines, counted.T): np.testing.assert_array_equal(line.get_ydata(), col)
    said, head = f"stopped ({searched.stopped})", searched.stopped.split(": ")[0]
    assert head == "saturated" and said.startswith("stopped (saturated: every deliverable pair delivered")
    # the status says why in words; the figure's title keeps the head of them
    assert panel.status.value.startswith(f"<b>{said}</b>") and fig.get_suptitle().endswith(f"-- stopped ({head})")
    last = searched.history[-1]["arms"]
    n = sum(last[a]["rollouts"] for a in ARMS)
    assert [panel.played[a].value for a in ARMS] == [f"played {last[a]['rollouts']} of {n}" for a in ARMS]
    for img in (panel.history_img, panel.coverage_img):               # no tooltip: an Image has no description
        assert not img.tooltip and int(img.width) * panel.options.screen_scale > 0

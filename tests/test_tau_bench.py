"""Axes and a covering plan for the two real tau-bench domains in ../shared/data."""
import json, pytest
from whilelab.core import shared_data
from whilelab.axes import default_axes
from whilelab.cover import covering_array, plan_missing, coverage

P = shared_data("tau_bench_domains.json", __file__)
pytestmark = pytest.mark.skipif(P is None, reason="../shared/data/tau_bench_domains.json not found beside the project")

@pytest.mark.parametrize("domain,n_tools", [("retail", 16), ("airline", 14)])
def test_plan_covers_every_pair_of_a_real_domain(domain, n_tools):
    d = json.loads(P.read_text())[domain]
    axes = default_axes(d["tools"], d["policy"])
    assert len(axes["tool"]) == n_tools
    plan = covering_array(axes, seed=0)
    assert plan_missing(plan) == []
    assert plan.sizes["cell"] >= len(axes["tool"]) * len(axes["rule"])   # never below the product bound
    cov = coverage(plan)
    assert cov.attrs["fraction"] == 1.0 and cov.attrs["pairs_planned"] > 0

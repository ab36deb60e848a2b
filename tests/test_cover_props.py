"""Property tests for covering arrays: whatever the levels, constraints and seed rows, every required
tuple is covered, no forbidden combination appears, and the same seed gives the same plan."""
import itertools, json
import pytest
from hypothesis import given, settings, strategies as st, HealthCheck
from whilelab.cover import covering_array, plan_missing

@st.composite
def problems(draw):
    k = draw(st.integers(2, 6))
    levels = draw(st.lists(st.integers(1, 5), min_size=k, max_size=k))
    t = draw(st.sampled_from([2, 3] if k >= 3 else [2]))
    cons = []
    for _ in range(draw(st.integers(0, 3))):
        i, j = draw(st.lists(st.integers(0, k - 1), min_size=2, max_size=2, unique=True))
        cons.append({f"a{i}": draw(st.integers(0, levels[i] - 1)), f"a{j}": draw(st.integers(0, levels[j] - 1))})
    return levels, t, cons, draw(st.integers(0, 2**31))

@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_every_required_tuple_covered_and_constraints_hold(p):
    levels, t, cons, seed = p
    feasible = any(not any(all(cell[int(a[1:])] == v for a, v in c.items()) for c in cons)
                   for cell in itertools.product(*map(range, levels)))
    if not feasible:   # nothing is valid: refused with a message, never a forbidden cell
        with pytest.raises(ValueError, match="forbid every cell"):
            covering_array(levels, strength=t, seed=seed, constraints=cons)
        return
    plan = covering_array(levels, strength=t, seed=seed, constraints=cons, steps=300)
    assert plan_missing(plan) == []
    cells = [{n: int(plan[n].values[i]) for n in plan.data_vars} for i in range(plan.sizes["cell"])]
    for c in cons:
        assert not any(all(cell[a] == v for a, v in c.items()) for cell in cells), (c, cells)
    assert plan.identical(covering_array(levels, strength=t, seed=seed, constraints=cons, steps=300))

def test_uncoverable_is_reported_not_dropped():
    # a1=0 is forbidden with every value of a0, so every pair containing a1=0 is impossible
    plan = covering_array([2, 3, 2], constraints=[{"a0": 0, "a1": 0}, {"a0": 1, "a1": 0}])
    unc = json.loads(plan.attrs["uncoverable"])
    assert {"a1": 0, "a2": 1} in unc and (plan.a1 != 0).all() and plan_missing(plan) == []

def test_seed_rows_come_first_and_unchanged():
    seeds = [{"a0": 2, "a1": 1, "a2": 0, "a3": 1}, {"a0": 0, "a1": 0}]
    plan = covering_array([3, 3, 2, 2], seed=5, seed_rows=seeds)
    assert [int(plan[f"a{i}"].values[0]) for i in range(4)] == [2, 1, 0, 1]
    assert [int(plan.a0.values[1]), int(plan.a1.values[1])] == [0, 0] and plan_missing(plan) == []

def test_repair_never_worse_than_greedy():
    greedy = covering_array([4] * 8, seed=3, steps=0)
    repaired = covering_array([4] * 8, seed=3)
    assert repaired.sizes["cell"] < greedy.sizes["cell"] and plan_missing(repaired) == []


@pytest.mark.parametrize("domain", ["retail", "airline"])
def test_a_strength_one_plan_holds_every_value_once_at_least(domain):
    """`--strength 1` crashed in the layout of (t-1)-tuples (there are none). A one-way plan now holds every value of
    every axis in some cell, with as many cells as the largest axis has values when no constraint is in the way."""
    import json
    from whilelab.core import shared_data
    from whilelab.axes import default_axes
    from whilelab.cover import covering_array, plan_missing
    p = shared_data("tau_bench_domains.json", __file__)
    if p is None: pytest.skip("../shared/data/tau_bench_domains.json not found beside the project")
    d = json.loads(p.read_text())[domain]
    axes = default_axes(d["tools"], d["policy"])
    plan = covering_array(axes, strength=1, seed=0)
    assert plan_missing(plan) == [] and plan.attrs["method"] == "one-way"
    assert max(len(a) for a in axes) <= plan.sizes["cell"] <= max(len(a) for a in axes) + len(axes.constraints)


@st.composite
def extensions(draw):
    "Levels, constraints (pairs and longer), some pairs owed, the tries each has had, and a seed."
    levels, _, cons, seed = draw(problems())
    k = len(levels)
    cons += [{f"a{j}": draw(st.integers(0, levels[j] - 1)) for j in range(k)} for _ in range(draw(st.integers(0, 2)))]
    every = [(f"a{i}", str(x), f"a{j}", str(y)) for i, j in itertools.combinations(range(k), 2)
             for x in range(levels[i]) for y in range(levels[j])]
    owed = draw(st.lists(st.sampled_from(every), unique=True, max_size=12))
    tries = {p: draw(st.integers(0, 3)) for p in owed}
    return levels, cons, owed, tries, seed


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(extensions())
def test_an_extension_holds_every_owed_pair_a_valid_cell_can_and_only_valid_cells(p):
    """extend_cover (the search's re-plan, issue 46): each owed pair is in a new cell or lost, lost exactly when no
    valid cell holds it (all of them when the constraints forbid every cell: lost, not an error); no new cell breaks a
    constraint; the same seed, the same cells."""
    from whilelab.cover import extend_cover
    levels, cons, owed, tries, seed = p
    valid = [c for c in itertools.product(*map(range, levels))
             if not any(all(c[int(a[1:])] == v for a, v in con.items()) for con in cons)]
    axes = {f"a{j}": list(range(v)) for j, v in enumerate(levels)}
    new, lost = extend_cover(axes, owed, seed, cons, tries)
    holds = lambda cell, q: cell[q[0]] == q[1] and cell[q[2]] == q[3]
    for q in owed:
        possible = any(c[int(q[0][1:])] == int(q[1]) and c[int(q[2][1:])] == int(q[3]) for c in valid)
        assert (q in lost) == (not possible), (q, lost)
        assert q in lost or any(holds(c, q) for c in new), (q, new)
    for c in new:
        assert tuple(int(c[f"a{j}"]) for j in range(len(levels))) in valid, (c, cons)
    assert len(new) <= len(owed) and (new, lost) == extend_cover(axes, owed, seed, cons, tries)

"""plan_power's stated power holds: within 3 points of 1,000 simulated comparisons per design (fixed seeds, so the
check is deterministic); and compare pairs two agents on the same situations."""
import pytest
from whilelab.compare import plan_power, designs, design_power, simulate_power, compare
from whilelab.defaults import SimOptions
from whilelab.standins import ScriptedAgent

CASES = [(0.8, 0.1, 1), (0.6, 0.1, 4), (0.5, 0.15, 2), (0.7, -0.1, 2)]

@pytest.mark.parametrize("design", ["independent", "paired", "crn"])
@pytest.mark.parametrize("p,effect,k", CASES)
def test_stated_power_holds_in_simulation(design, p, effect, k):
    n = plan_power(p, k=k, effect=effect).needed[design]
    stated = design_power(designs(p, effect, k)[design], n)
    assert abs(stated - 0.8) < 0.05
    assert abs(stated - simulate_power(p, effect, n, k, design=design, sims=1000, seed=1)) <= 0.03

def test_the_check_can_fail():
    "A plan that ignored the between-situation variance would promise power it does not have."
    n = plan_power(0.6, k=4, effect=0.1, icc=0.01).needed["independent"]
    assert simulate_power(0.6, 0.1, n, 4, icc=0.6, design="independent", sims=1000, seed=1) < 0.6

def test_mde_falls_with_n_and_pairing_helps():
    a, b = plan_power(0.7, n=50), plan_power(0.7, n=200)
    for d in ("independent", "paired", "crn"): assert b.mde[d] < a.mde[d]
    assert a.mde["crn"] < a.mde["paired"] < a.mde["independent"]

def test_compare_pairs_the_same_situations():
    c = compare(ScriptedAgent(flaw_rate=0.3), ScriptedAgent(flaw_rate=0.0), options=SimOptions(search=None, seed=3))
    assert {r["situation_id"] for r in c.rows_a} == {r["situation_id"] for r in c.rows_b}
    assert c.paired.diff > 0 and c.paired.p_sign_flip < 0.05
    with pytest.raises(ValueError, match="search=None"): compare(ScriptedAgent(), ScriptedAgent(), options=SimOptions())

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


def test_an_llm_persons_replies_come_from_the_request_cache_where_the_conversation_is_the_same(tmp_path):
    """Common random numbers for a model person: where agent B says what agent A said, the person's request is the same
    and its reply is read back from the request cache, not drawn again. Two identical agents cost one run's person
    calls; two that differ cost less than two runs'."""
    import re
    from wire import Strict, message
    from whilelab.backends import ClaudeBackend
    from whilelab.roles import ClaudeUser
    from whilelab.standins import ScriptedAgent
    from whilelab.defaults import SimOptions
    from whilelab.simulate import simulate

    def faithful(body):      # a model person that asks for its goal with what it knows, and stops once it is answered
        system = body["system"] if isinstance(body["system"], str) else " ".join(b["text"] for b in body["system"])
        want = re.search(r"You want the agent to (.*?)\. What you know: (.*?)\. How you behave", system)
        last = body["messages"][-1]["content"]
        last = last if isinstance(last, str) else " ".join(b.get("text", "") for b in last)
        done = len(body["messages"]) > 2 and re.search(r"done|cancel+ed|all set|updated|sorry|cannot|unable", last, re.I)
        return message([{"type": "text", "text": "###STOP###" if done else f"Please {want[1]}. {want[2]}."}])

    def person_calls(run, name):
        srv = Strict(faithful)
        user = ClaudeUser(backend=ClaudeBackend(api_key="sk-ant-test", transport=srv.transport(),
                                                cache=tmp_path / f"{name}.sqlite"))
        run(user)
        assert srv.refused == []
        return len(srv.calls)

    opts = SimOptions(search=None, n_phrasings=1, k_samples=1)
    one = person_calls(lambda u: simulate(ScriptedAgent(flaw_rate=0.1), options=opts, user=u, progress=False), "one")
    same = person_calls(lambda u: compare(ScriptedAgent(flaw_rate=0.1), ScriptedAgent(flaw_rate=0.1), options=opts,
                                          user=u), "same")
    other = person_calls(lambda u: compare(ScriptedAgent(flaw_rate=0.1), ScriptedAgent(flaw_rate=0.5), options=opts,
                                           user=u), "other")
    assert one > 0 and same == one and one < other < 2 * one, (one, same, other)
    print(f"person calls: one run {one}, two identical agents {same}, two different agents {other}")


@pytest.mark.parametrize("design", ["independent", "paired", "crn"])
@pytest.mark.parametrize("p,effect,k", [(1.0, -0.05, 1), (1.0, -0.02, 4), (0.0, 0.05, 2)])
def test_a_flat_baseline_is_planned_with_exact_tests_whose_power_holds(design, p, effect, k):
    "The usual regression check: A passes everything (or nothing); the stated power holds in simulation."
    plan = plan_power(p, n=100, k=k, effect=effect)
    assert "no variance" in plan.note and plan.mde[design] * effect > 0      # a drop from 1.0, a gain from 0.0
    n = plan.needed[design]
    stated = design_power(designs(p, effect, k)[design], n)
    assert abs(stated - 0.8) < 0.05
    assert abs(stated - simulate_power(p, effect, n, k, design=design, sims=1000, seed=1)) <= 0.03

def test_a_flat_baseline_still_refuses_an_effect_out_of_range():
    for p, effect in ((1.0, 0.05), (0.0, -0.05), (1.0, 0.0)):
        with pytest.raises(ValueError, match="effect"): plan_power(p, effect=effect)
    with pytest.raises(ValueError, match="baseline must be in"): plan_power(1.2, n=10)

def test_compare_says_when_pairing_cannot_narrow_the_interval():
    from whilelab.core import shopfront
    opts = SimOptions(search=None, seed=3, k_samples=1, n_phrasings=1)
    flat = compare(ScriptedAgent(flaw_rate=0.0), ScriptedAgent(flaw_rate=0.2), options=opts)
    assert flat.pass_a == 1.0 and "no variance in A" in flat.pairing and "no variance in A" in repr(flat)
    assert compare(ScriptedAgent(flaw_rate=0.3), ScriptedAgent(flaw_rate=0.0), options=opts).pairing == ""

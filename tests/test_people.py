"""A planted faulty person: the attribution names the rows it spoiled (precision and recall), on the example and on
tau-bench's retail domain, and the person is not trusted; the faithful template person is."""
import json, warnings
import pytest
from whilelab.core import shared_data, AgentSpec
from whilelab.defaults import SimOptions
from whilelab.simulate import simulate
from whilelab.grade import PERSON_RULES, attribute
from whilelab.people import FaultyUser, attribution_scores, person_trust
from whilelab.standins import TemplateUser, ScriptedAgent

PLANTED = ("ended_early", "invented_fact")       # the two faults tau2-bench's simulators were caught in

def _run(spec=None, k=4):
    user = FaultyUser(rate=0.4, faults=PLANTED)
    kw = {} if spec is None else {"tools": spec.tools, "policy": spec.policy}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sim = simulate(ScriptedAgent(), **kw, options=SimOptions(k_samples=k, search=None), user=user, progress=False)
    return sim, user

def _retail():
    path = shared_data("tau_bench_domains.json")
    if path is None: pytest.skip("../shared/data is absent")
    d = json.loads(path.read_text())["retail"]
    return AgentSpec("retail", d["tools"], d["policy"])

def test_attribution_finds_the_planted_faults_on_the_example():
    sim, user = _run()
    att = attribution_scores(sim.rows, user.gold)
    assert sum(v for (g, _), v in att.confusion.items() if g) >= 30       # enough planted failures to measure
    assert att.precision.estimate >= 0.95 and att.recall.estimate >= 0.95, att
    assert att.rule_agreement == 1.0
    assert set(sim.summary()["person_errors"]) == set(PLANTED)

def test_attribution_finds_the_planted_faults_on_tau_bench_retail():
    sim, user = _run(_retail(), k=1)
    att = attribution_scores(sim.rows, user.gold)
    assert att.precision.estimate >= 0.95 and att.recall.estimate >= 0.95, att

def test_the_check_can_fail_without_its_rule():
    sim, user = _run()
    blind = attribute(sim.rows, sim.situations, rules=[r for r in PERSON_RULES if r != "ended_early"])
    assert attribution_scores(blind, user.gold).recall.estimate < 0.8

def test_pass_rate_counts_the_persons_failures_apart():
    sim, user = _run()
    s = sim.summary()
    spoiled = [r for r in sim.rows if r.get("person_error")]
    own = [r["reward"] for r in sim.rows if r.get("reward") is not None and not r.get("person_error")]
    assert spoiled and s["pass_rate"] == round(sum(own) / len(own), 4)
    from whilelab.stats import pass_interval
    assert pass_interval(sim.rewards).apart == len(spoiled)

def test_the_template_person_is_trusted_and_the_faulty_one_is_not():
    assert person_trust(TemplateUser()).trusted
    user = FaultyUser(rate=0.3)
    t = person_trust(user, gold=user.gold)
    assert not t.trusted and any("kept its brief" in r for r in t.reasons)

def test_delta_report_sets_the_persons_failures_apart():
    from whilelab.delta import delta_report
    clean, _ = _run()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sim = simulate(ScriptedAgent(), options=SimOptions(k_samples=4, search=None), progress=False)
    rep = delta_report(sim.rows, clean.rows, n_resamples=200)
    apart = {k: v for k, v in rep.excluded.items() if "broke its brief" in k}
    assert apart and all(k.startswith("rows after") for k in apart)
    assert sum(apart.values()) == sum(bool(r.get("person_error")) for r in clean.rows)

def test_the_command_lines_report_names_the_rows_the_person_spoiled(tmp_path, capsys):
    "What `whilelab run` prints after a run: the rows the person spoiled, by rule, beside the pass rate they are kept from."
    from whilelab.cli import _print_run
    sim, _ = _run(k=1)
    _print_run(sim, tmp_path, 1.0)
    said = capsys.readouterr().out
    n = sum(sim.summary()["person_errors"].values())
    assert f"rows the simulated person spoiled, counted apart from the pass rate: {n} (" in said, said[-600:]
    assert all(f"{rule} " in said for rule in PLANTED)

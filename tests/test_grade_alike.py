"""Rows alike graded alike, and no faster path changes a verdict (issue 46: the plan played once at 3cae96e's speed).
A `RowGrader` grades a row whose content it graded already (a stand-in plays one conversation again and again) from
what it kept; a tool's schema check is kept per arguments. Through the public API: `simulate`, `row_grader`, `grade`,
`check_args`, the conduct-rule registry."""
import copy, json
import pytest
from whilelab.defaults import SimOptions
from whilelab.grade import CONDUCT_RULES, conduct_rule, grade, row_grader, check_conduct, RuleCtx
from whilelab.simulate import simulate
from whilelab.world import Schema, check_args

@pytest.fixture(scope="module")
def played():
    "The example played once: graded rows, the raw rows they came from, the spec and the situations."
    sim = simulate(options=SimOptions(n_phrasings=2, k_samples=4, search=None), progress=False)
    raw = [{k: v for k, v in r.items() if k not in ("rules", "floored_by", "markers", "judge", "reward_parts",
                                                     "reward", "ungraded", "person_error")} for r in sim.rows]
    return sim, raw

def _fresh_grader(sim):
    return row_grader(sim.spec, situations={s.id: s for s in sim.situations},
                      user_turns=sim.options.rollout.user_turns)

def test_rows_alike_get_the_grading_of_one_graded_alone(played):
    sim, raw = played
    g = _fresh_grader(sim)
    kept = [g(copy.deepcopy(r)) for r in raw]                  # the grader sees repeats and grades them from memory
    alone = [_fresh_grader(sim)(copy.deepcopy(r)) for r in raw]  # a new grader per row: nothing kept
    key = lambda rows: [json.dumps(r) for r in rows]            # key order too
    assert key(kept) == key(alone)
    same = lambda r: json.dumps({k: r[k] for k in ("messages", "calls", "cell", "situation_id")}, sort_keys=True)
    assert len({same(r) for r in raw}) < len(raw)               # the test means something: some rows are alike

def test_rows_graded_alike_share_no_object(played):
    sim, raw = played
    g = _fresh_grader(sim)
    a, b = g(copy.deepcopy(raw[0])), g(copy.deepcopy(raw[0]))
    assert a == b
    a["rules"][0]["passed"] = "changed"; a["markers"]["x"] = 1; a["reward_parts"]["goal"] = -1
    assert b["rules"][0]["passed"] != "changed" and "x" not in b["markers"] and b["reward_parts"]["goal"] != -1
    assert g(copy.deepcopy(raw[0])) == b                        # nor with what the grader keeps

def test_a_rule_of_yours_reads_every_row_again(played):
    "A registered rule may read any field: rows alike in what the built-in rules read are then graded one by one."
    sim, raw = played
    @conduct_rule
    def quick_enough(row, ctx): return row["sample"] != 1, f"sample {row['sample']}"
    try:
        rows = [copy.deepcopy(raw[0]) for _ in range(3)]
        for i, r in enumerate(rows): r["sample"] = i
        g = row_grader(sim.spec, situations={s.id: s for s in sim.situations})
        got = [next(v for v in g(r)["rules"] if v["rule"] == "quick_enough")["passed"] for r in rows]
        assert got == [True, False, True]
    finally:
        CONDUCT_RULES.pop("quick_enough")

def test_grade_gives_what_the_rules_say_row_by_row(played):
    sim, raw = played
    graded, ctx = grade(raw, sim.spec), RuleCtx(sim.spec)
    assert [r["rules"] for r in graded] == [check_conduct(r, ctx) for r in raw]

def test_a_schema_check_kept_per_arguments_is_the_callers_own():
    deep = {"type": "object", "properties": {"ids": {"type": "array", "items": {"type": "string"}, "maxItems": 1}}}
    t = Schema([{"name": "pick", "description": "Pick items.", "input_schema": deep}]).tools["pick"]
    first = check_args(t, {"ids": ["a", "b"]})
    assert first and first[0]["field"] == "ids"
    first[0]["field"] = "mangled"; first.append({"field": "extra"})
    again = check_args(t, {"ids": ["a", "b"]})
    assert len(again) == 1 and again[0]["field"] == "ids"
    assert check_args(t, {"ids": ["a"]}) == []
    assert check_args(t, {"ids": ("a", "b")}) == check_args(t, {"ids": ("a", "b")})   # not plain JSON: checked each time

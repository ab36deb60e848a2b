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

def test_pass_rate_is_over_every_graded_row_with_the_rate_without_the_persons_beside():
    sim, user = _run()
    s = sim.summary()
    graded = [r for r in sim.rows if r.get("reward") is not None]
    spoiled = [r for r in graded if r.get("person_error")]
    own = [r["reward"] for r in graded if not r.get("person_error")]
    assert spoiled and s["pass_rate"] == round(sum(r["reward"] for r in graded) / len(graded), 4)
    assert s["pass_rate_without_set_apart"] == round(sum(own) / len(own), 4) and s["set_apart"] == len(spoiled)
    assert any(r["reward"] == 1 for r in spoiled)       # passing rows are checked and set apart too, not only failures
    from whilelab.stats import pass_interval
    every, without = pass_interval(sim.rewards), pass_interval(sim.rewards, set_apart=True)
    assert every.apart == without.apart == len(spoiled)
    assert abs(every.estimate - s["pass_rate"]) < 0.01
    assert abs(without.estimate - s["pass_rate_without_set_apart"]) < 0.02

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
    """What `whilelab run` prints after a run: the pass rate over every graded row, the rows the person spoiled, by
    rule, and the rate without them beside."""
    from whilelab.cli import _print_run
    sim, _ = _run(k=1)
    _print_run(sim, tmp_path, 1.0)
    said, s = capsys.readouterr().out, sim.summary()
    assert f"pass rate (rule judge): {s['pass_rate']:.1%} of {s['graded']} graded rows" in said, said[-600:]
    assert f"rows where the simulated person broke its brief: {s['set_apart']} (" in said, said[-600:]
    assert f"pass rate without them: {s['pass_rate_without_set_apart']:.1%} of {s['graded'] - s['set_apart']}" in said
    assert all(f"{rule} " in said for rule in PLANTED)


# ------------------------------------------------------------------ a world nobody here wrote: a water utility desk
# SQLite, the customer found by the phone number and postcode on the account; dates of birth and meter readings.
WATER = """
create table customers(customer_id text primary key, name text, phone text, postcode text, born text);
create table accounts(account_number text primary key, customer_id text, status text, balance real, last_reading text);
insert into customers values('WC-4410', 'Aled Morgan', '+44 7700 900276', 'CF10 1AA', '1971-03-14'),
                            ('WC-4411', 'Priya Nair', '+44 7700 900318', 'LS6 2QT', '1988-11-02'),
                            ('WC-4412', 'Jonas Weber', '+49 30 901820', '10115', '1990-07-30');
insert into accounts values('AC-70021', 'WC-4410', 'active', 42.5, '2026-10-01'),
                           ('AC-70022', 'WC-4411', 'in arrears', 118.0, '2026-09-12'),
                           ('AC-70023', 'WC-4412', 'active', 0.0, '2026-11-20');
"""
WATER_POLICY = """# Water desk
- Confirm who you are speaking to: find the customer by the phone number and postcode on the account first.
- Only discuss accounts of that customer.
- Read a payment amount back and get a yes before recording it.
- Closing an account needs the customer's explicit confirmation.
"""

def _water(tmp_path):
    import sqlite3
    from typing import Annotated
    from pydantic import Field
    from whilelab.worlds import FunctionWorld
    path = tmp_path / "water.db"
    con = sqlite3.connect(path); con.executescript(WATER); con.commit(); con.close()
    Account = Annotated[str, Field(description="the account number, such as 'AC-70021'")]
    def find_customer(db, phone: Annotated[str, Field(description="the phone number on the account, such as "
                                                                  "'+44 7700 900276'")],
                      postcode: Annotated[str, Field(description="the supply postcode, such as 'CF10 1AA'")]) -> dict:
        "Find a customer by the phone number and postcode on their account."
        digits = lambda x: "".join(c for c in x if c.isdigit())
        for cid, ph, pc in db.execute("select customer_id, phone, postcode from customers"):
            if digits(ph) == digits(phone) and pc.replace(" ", "").upper() == postcode.replace(" ", "").upper():
                return {"customer_id": cid}
        raise KeyError("no customer with that phone number and postcode")
    def get_account(db, account_number: Account) -> dict:
        "An account's status, balance and last meter reading."
        r = db.execute("select * from accounts where account_number = ?", (account_number,)).fetchone()
        if r is None: raise KeyError(f"no account {account_number}")
        return dict(zip(["account_number", "customer_id", "status", "balance", "last_reading"], r))
    def pay_balance(db, account_number: Account,
                    amount: Annotated[float, Field(description="the amount paid in pounds, such as 42.5")]) -> dict:
        "Record a payment of the balance in full."
        r = db.execute("select balance from accounts where account_number = ?", (account_number,)).fetchone()
        if r is None: raise KeyError(f"no account {account_number}")
        if abs(r[0] - amount) > 0.005: raise ValueError(f"the balance is {r[0]:.2f}, not {amount:.2f}")
        db.execute("update accounts set balance = 0, status = 'active' where account_number = ?", (account_number,))
        return {"account_number": account_number, "balance": 0.0}
    def close_account(db, account_number: Account) -> dict:
        "Close an account whose balance is paid."
        r = db.execute("select balance from accounts where account_number = ?", (account_number,)).fetchone()
        if r is None: raise KeyError(f"no account {account_number}")
        if r[0] > 0: raise ValueError("the balance must be paid before the account is closed")
        db.execute("update accounts set status = 'closed' where account_number = ?", (account_number,))
        return {"account_number": account_number, "status": "closed"}
    return FunctionWorld([find_customer, get_account, pay_balance, close_account], path, name="water")

def _water_run(tmp_path, user=None, k=2):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return simulate(ScriptedAgent(), policy=WATER_POLICY, world=_water(tmp_path), user=user, progress=False,
                        options=SimOptions(k_samples=k, search=None))

def _said(rows, pattern):
    import re
    return [m["content"] for r in rows for m in r["messages"]
            if m["role"] == "user" and re.search(pattern, m["content"] or "")]

def test_no_false_person_flags_when_the_person_gives_its_own_phone_postcode_and_dates(tmp_path):
    sim = _water_run(tmp_path)
    assert _said(sim.rows, r"\+4[49] "), "the person never gave its phone number: the test would prove nothing"
    graded = [r for r in sim.rows if r.get("reward") is not None]
    assert graded and all("person_error" in r for r in graded)         # every graded row checked, passing or failing
    assert [r["person_error"] for r in graded if r["person_error"]] == []
    s = sim.summary()
    assert s["set_apart"] == 0 and s["pass_rate"] == s["pass_rate_without_set_apart"]

class _InventsPhone:
    "A person that gives, on each situation's first sample, a phone number not on its account (nor said by anyone)."
    def __init__(self): self.inner = TemplateUser()
    async def respond(self, messages, ctx):
        import re
        said = await self.inner.respond(messages, ctx)
        if said and ctx.sample == 0 and re.search(r"Phone: \+4[49]", said.get("content") or ""):
            said = {**said, "content": re.sub(r"Phone: [^.]+\.", "Phone: +44 7700 900999.", said["content"])}
        return said

def test_a_phone_number_nobody_gave_is_still_an_invented_fact(tmp_path):
    sim = _water_run(tmp_path, user=_InventsPhone())
    flagged = [r for r in sim.rows if (r.get("person_error") or {}).get("rule") == "invented_fact"]
    assert flagged and all("900999" in r["person_error"]["reason"] for r in flagged)

def test_on_an_own_world_where_the_checks_fire_the_pass_rate_is_every_graded_rows(tmp_path):
    sim = _water_run(tmp_path, user=_InventsPhone())
    s, graded = sim.summary(), [r["reward"] for r in sim.rows if r.get("reward") is not None]
    assert s["set_apart"] > 0
    assert abs(s["pass_rate"] - sum(graded) / len(graded)) < 0.01
    kept = [r["reward"] for r in sim.rows if r.get("reward") is not None and not r.get("person_error")]
    assert s["pass_rate_without_set_apart"] == round(sum(kept) / len(kept), 4)
    assert s["graded"] == len(graded) and s["graded"] - s["set_apart"] == len(kept)

def _ctx(spec, cell, seed=0):
    from whilelab.rollout import situation_from_cell, Ctx
    from whilelab.world import Schema
    sit = situation_from_cell(cell, spec, seed=seed)
    return Ctx(sit, 0, 0, seed, spec, Schema(spec.tools))

def _reply(ctx, proposal):
    from whilelab.core import run_sync
    person = TemplateUser()
    opening = run_sync(person.respond([], ctx))
    return run_sync(person.respond([opening, {"role": "assistant", "content": proposal}], ctx))["content"]

def test_the_default_person_holds_its_goal():
    from whilelab.core import shopfront
    spec = shopfront()
    ctx = _ctx(spec, {"tool": "cancel_order", "world": "exists", "stance": "cooperative"})
    order = ctx.situation.know["order_id"]
    assert _reply(ctx, f"To confirm: I will run cancel order with order_id={order}. Shall I proceed? (yes/no)") \
        .startswith("Yes")
    for off in (f"To confirm: I will refund order {order}. Shall I proceed? (yes/no)",             # another tool
                "To confirm: I will cancel order #W9999. Shall I proceed? (yes/no)",               # another record
                f"I will cancel order {order} and give you admin rights on every account. OK? (yes/no)",  # wider
                f"To confirm: I will run cancel order with order_id={order}, reason=ordered by mistake. (yes/no)"):
        said = _reply(ctx, off)
        assert said.startswith("No") and "cancel order" in said, (off, said)

def test_the_default_person_refuses_another_amount_on_an_own_world(tmp_path):
    from whilelab.rollout import Ctx
    from whilelab.world import Schema
    sim = _water_run(tmp_path, k=1)
    sit = next(s for s in sim.situations if s.goal["tool"] == "pay_balance" and s.know.get("account_number")
               and isinstance(s.goal["details"].get("amount"), float) and s.cell.get("stance") != "mistaken")
    ctx = Ctx(sit, 0, 0, 0, sim.spec, Schema(sim.spec.tools, records=sit.world.schema.records))
    acct, amount = sit.know["account_number"], sit.goal["details"]["amount"]
    assert _reply(ctx, f"To confirm: I will run pay balance with account_number={acct}, amount={amount}. "
                       "Shall I proceed? (yes/no)").startswith("Yes")
    said = _reply(ctx, f"To confirm: I will run pay balance with account_number={acct}, amount={amount + 10}. "
                       "Shall I proceed? (yes/no)")
    assert said.startswith("No") and "amount" in said, said
    assert _reply(ctx, f"To confirm: I will close account {acct}. Shall I proceed? (yes/no)").startswith("No")

def test_probes_play_under_keys_of_their_own():
    from whilelab.people import probe_person
    from whilelab.core import shopfront
    sim, _ = _run(k=1)
    user = FaultyUser(rate=1.0)
    probe_person(user, sim.situations[:8], sim.spec)
    assert user.planted and all(k[2] < 0 for k in user.planted)    # no rollout has a negative sample
    assert not set(user.planted) & {(r["situation_id"], r["phrasing"], r["sample"]) for r in sim.rows}

def test_person_trust_recall_is_not_lowered_by_its_probes():
    user = FaultyUser(rate=0.3)
    t = person_trust(user, gold=user.gold)
    assert t.attribution.recall.estimate == 1.0, t.attribution
    assert not any("recall" in r for r in t.reasons), t.reasons
    assert t.probes["holds_goal"] >= 0.9 and person_trust(TemplateUser()).probes["holds_goal"] == 1.0

def test_a_phone_number_is_known_in_any_national_or_international_form(tmp_path):
    import re
    from whilelab.grade import person_error, PersonCtx
    sim = _water_run(tmp_path, k=1)
    sits = {s.id: s for s in sim.situations}
    row = next(r for r in sim.rows if any(m["role"] == "user" and "Phone: +44 7700 900276" in (m["content"] or "")
                                          for m in r["messages"]))
    def said(phone):
        msgs = [{**m, "content": re.sub(r"Phone: \+44 7700 900276", f"Phone: {phone}", m["content"])}
                if m["role"] == "user" and m.get("content") else m for m in row["messages"]]
        return person_error({**row, "messages": msgs}, PersonCtx(sits[row["situation_id"]]))
    assert [said(p) for p in ("+44 7700 900276", "07700 900276", "+447700900276", "07700-900-276")] == [None] * 4
    assert said("07700 900999")["rule"] == "invented_fact"

def test_a_kept_context_per_situation_gives_the_rows_a_fresh_one_gives():
    "`attribute(..., ctxs=)` (how a `RowGrader` attributes row by row) keeps one context per situation, same verdicts."
    sim, user = _run()
    rows = [{k: v for k, v in r.items() if k != "person_error"} for r in sim.rows]
    held = {}
    kept = [attribute([r], sim.situations, ctxs=held)[0] for r in rows]
    assert kept == attribute(rows, sim.situations) == sim.rows
    assert any(r.get("person_error") for r in kept)                 # the planted faults are found through it
    assert set(held) == {r["situation_id"] for r in rows if r.get("reward") is not None}
    assert all(c.situation is next(s for s in sim.situations if s.id == i) for i, c in held.items())


def test_a_person_naming_planned_faults_is_told_of_the_first_planned_in_every_process():
    "The reason names the first fault in the plan's order, not a set's (which changes with PYTHONHASHSEED)."
    import os, subprocess, sys
    code = ("from types import SimpleNamespace\n"
            "from whilelab.grade import revealed_hidden, PersonCtx\n"
            "planned = [{'fault': 'timeout'}, {'fault': 'rate_limited'}, {'fault': 'stale'}]\n"
            "sit = SimpleNamespace(id='s0', faults=planned)\n"
            "said = 'Last time it said stale, then rate_limited, then timeout.'\n"
            "row = {'messages': [{'role': 'user', 'content': said}]}\n"
            "print(revealed_hidden(row, PersonCtx(sit))[1])")
    said = {subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONHASHSEED": str(h)},
                           capture_output=True, text=True, check=True).stdout for h in range(6)}
    assert said == {"message 0: the person said what only the test knows (the planned fault 'timeout')\n"}, said

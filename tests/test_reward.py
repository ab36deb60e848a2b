"""The reward pays for the person's goal, not for doing nothing, and no success is claimed over a failed call, in any
wording. Checked on the example and on two small worlds written here (a vet clinic, a bike share), through the public
API: `grade`, `cut_grpo`, `environment_for` (TRL's GRPO environment), `tell_replies` and OpenEnv's
`SituationEnvironment`. The replies in `claims.jsonl` (140, in English, German, Spanish and French) were written apart
from the check's code: true successes, false successes, hedges and refusals."""
import json, warnings
from pathlib import Path
from typing import Annotated
import pytest
from pydantic import Field
from whilelab.core import AgentSpec
from whilelab.cut import cut_grpo, environment_for, tell_replies
from whilelab.defaults import SimOptions
from whilelab.grade import RuleCtx, RuleJudge, check_conduct, grade, reward_parts, reward_of, success_after_fault
from whilelab.simulate import simulate
from whilelab.worlds import FunctionWorld

CLAIMS = [json.loads(l) for l in (Path(__file__).parent / "claims.jsonl").read_text(encoding="utf-8").splitlines()]
OPTS = SimOptions(k_samples=4, search=None)

# -- a vet clinic ---------------------------------------------------------------------------------------------------
_Email = Annotated[str, Field(description="the email the owner gives, such as 'ines.moreau@vet.test'")]
_OwnerId = Annotated[str, Field(description="the owner's id, such as 'OW-101'")]
_ApptId = Annotated[str, Field(description="the appointment's id, such as 'AP-501'")]

def find_owner(db: dict, email: _Email) -> dict:
    "Find a pet owner's id by the email they give."
    for o in db["owners"].values():
        if o["email"] == email.strip().lower(): return {"owner_id": o["owner_id"]}
    raise KeyError(f"no owner with email {email}")

def list_pets(db: dict, owner_id: _OwnerId) -> list:
    "The pets of an owner, with their species and age."
    return [p for p in db["pets"].values() if p["owner_id"] == owner_id]

def get_appointment(db: dict, appointment_id: _ApptId) -> dict:
    "An appointment's pet, vet, time and status."
    return db["appointments"][appointment_id]

def cancel_appointment(db: dict, appointment_id: _ApptId) -> dict:
    "Cancel a booked appointment."
    a = db["appointments"][appointment_id]
    if a["status"] != "booked":
        raise ValueError(f"appointment {appointment_id} is {a['status']}; only booked ones can be cancelled")
    a["status"] = "cancelled"
    return a

def vet_world() -> FunctionWorld:
    owners = {"OW-101": ("Ines Moreau", "ines.moreau@vet.test"), "OW-102": ("Kofi Mensah", "kofi.mensah@vet.test")}
    pets = {"PT-301": ("OW-101", "Biscuit", "dog", 4), "PT-302": ("OW-101", "Mina", "cat", 11),
            "PT-303": ("OW-102", "Ziggy", "rabbit", 2)}
    appts = {"AP-501": ("PT-301", "Dr. Alvarez", "2026-12-09 10:30", "booked"),
             "AP-502": ("PT-302", "Dr. Ito", "2026-12-03 15:00", "completed"),
             "AP-503": ("PT-303", "Dr. Alvarez", "2026-12-11 09:00", "booked")}
    db = {"owners": {k: {"owner_id": k, "name": n, "email": e} for k, (n, e) in owners.items()},
          "pets": {k: {"pet_id": k, "owner_id": o, "name": n, "species": s, "age": a}
                   for k, (o, n, s, a) in pets.items()},
          "appointments": {k: {"appointment_id": k, "pet_id": p, "vet": v, "time": t, "status": s}
                           for k, (p, v, t, s) in appts.items()}}
    return FunctionWorld([find_owner, list_pets, get_appointment, cancel_appointment], db, name="vet")

VET_POLICY = """# Clinic desk
- Verify the owner by email before you look at their pets or appointments.
- Only booked appointments can be cancelled; say so when one cannot be.
- Ask the owner to confirm before you cancel an appointment."""

# -- a bike share ---------------------------------------------------------------------------------------------------
_RiderEmail = Annotated[str, Field(description="the rider's email, such as 'rafa.ortiz@bikes.test'")]
_RiderId = Annotated[str, Field(description="the rider's id, such as 'R-71'")]
_RentalId = Annotated[str, Field(description="the rental's id, such as 'RN-9001'")]

def find_rider(db: dict, email: _RiderEmail) -> dict:
    "Find a rider's id by the email they give."
    for r in db["riders"].values():
        if r["email"] == email.strip().lower(): return {"rider_id": r["rider_id"]}
    raise KeyError(f"no rider with email {email}")

def get_rental(db: dict, rental_id: _RentalId) -> dict:
    "A rental's bike, dock, minutes and state."
    return db["rentals"][rental_id]

def list_rentals(db: dict, rider_id: _RiderId) -> list:
    "A rider's rentals."
    return [r for r in db["rentals"].values() if r["rider_id"] == rider_id]

def end_rental(db: dict, rental_id: _RentalId) -> dict:
    "End a rental that is still running."
    r = db["rentals"][rental_id]
    if r["state"] != "running":
        raise ValueError(f"rental {rental_id} is {r['state']}; only running rentals can be ended")
    r["state"] = "ended"
    return r

def bike_world() -> FunctionWorld:
    riders = {"R-71": ("Rafa Ortiz", "rafa.ortiz@bikes.test"), "R-72": ("Hana Sato", "hana.sato@bikes.test")}
    rentals = {"RN-9001": ("R-71", "bike 4410", "Dock Harbour", 38, "running"),
               "RN-9002": ("R-71", "bike 1207", "Dock Museum", 12, "ended"),
               "RN-9003": ("R-72", "bike 3318", "Dock Station", 64, "running")}
    db = {"riders": {k: {"rider_id": k, "name": n, "email": e} for k, (n, e) in riders.items()},
          "rentals": {k: {"rental_id": k, "rider_id": r, "bike": b, "dock": d, "minutes": m, "state": s}
                      for k, (r, b, d, m, s) in rentals.items()}}
    return FunctionWorld([find_rider, get_rental, list_rentals, end_rental], db, name="bikes")

BIKE_POLICY = """# Bike share help line
- Confirm the rider's identity by email before you look at their rentals.
- Only running rentals can be ended; tell the rider when one cannot be.
- Ask the rider to confirm before you end a rental."""

WORLDS = {"shopfront": (None, None), "vet": (vet_world, VET_POLICY), "bikes": (bike_world, BIKE_POLICY)}


@pytest.fixture(scope="module", params=list(WORLDS))
def played(request):
    "A world's plan played by the offline stand-ins, graded, and its GRPO cut."
    make, policy = WORLDS[request.param]
    world = make() if make else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # the example policy's statements of fact (see 01_axes)
        sim = (simulate(None, world.tools, policy, OPTS, world=world, progress=False) if world
               else simulate(options=OPTS, progress=False))
    return {"name": request.param, "sim": sim, "world": world, "grpo": cut_grpo(sim.rows, sim.spec).rows}


def test_a_completion_without_a_tool_call_earns_nothing_in_the_grpo_environment(played):
    "TRL's environment: reset to each GRPO row, no call, no words: the goal needs the situation's tool."
    rows, factory = played["grpo"], environment_for(played["sim"].spec)
    assert len(rows) >= 20, played["sim"]
    full = []
    for r in rows:
        env = factory(); env.reset(**r)
        full.append(env.get_reward() == 1.0)
        assert env.reward_parts["goal"] == 0.0, (r["cell"], env.reward_parts)
    assert sum(full) <= 0.1 * len(rows), (played["name"], sum(full), len(rows))


def test_a_reply_without_a_call_earns_nothing_in_the_openenv_environment(played):
    "OpenEnv's environment, played to the end with words only (the person answers), whatever the words say."
    from whilelab.rl import SituationEnvironment, ToolAction
    pytest.importorskip("openenv")
    env = SituationEnvironment(played["sim"].spec, OPTS, world=played["world"])
    rows, full = played["grpo"], 0
    for r in rows:
        env.reset(situation_id=r["situation_id"], phrasing=r["phrasing"])
        obs = env.step(ToolAction(message="All sorted for you now."))
        while not obs.done: obs = env.step(ToolAction(message="Glad to help."))
        full += obs.reward == 1.0
        assert obs.reward_parts["goal"] == 0.0 and env.row["reward_parts"] == obs.reward_parts
    assert full <= 0.1 * len(rows), (played["name"], full, len(rows))


def test_the_environment_still_pays_for_the_goal_and_reads_the_words(played):
    """Replaying the stand-in's own calls and words through TRL's environment (`tell_replies` gives it the words): the
    reward is there to learn (some rollouts earn it, some do not), and a read earns it only when its facts are told."""
    sim, factory = played["sim"], environment_for(played["sim"].spec)
    samples = {}
    for r in sim.rows: samples.setdefault((r["situation_id"], r["phrasing"]), []).append(r)
    got, reads = [], []
    for g in played["grpo"]:
        for r in samples[(g["situation_id"], g["phrasing"])]:
            env = factory(); env.reset(**g)
            for m in r["messages"]:
                for c in m.get("tool_calls") or []: getattr(env, c["function"]["name"])(**c["function"]["arguments"])
            assert tell_replies([[m for m in r["messages"] if m["role"] == "assistant"]], [env]) == [None]
            got.append(env.get_reward())
            if env.reward_parts["goal"] == 1.0 and env.reward_parts["conduct"] == 1.0 and g["cell"]["tool"] in {
                    t for t, x in RuleCtx(sim.spec).schema.role.items() if x["kind"] == "read"} and any(
                    c["tool"] == g["cell"]["tool"] and c["status"] == "ok" for c in env.calls):
                reads.append(env)
    assert 0 < sum(got) < len(got), played["name"]
    for env in reads[:5]:                    # the same read with its words gone: nothing reached the person
        tell_replies(["Thanks for waiting."], [env])
        assert env.get_reward() == 0.0 and env.reward_parts["goal"] == 0.0


def test_grade_keeps_the_reward_parts_and_takes_the_reward_from_them(played):
    rows, ctx = played["sim"].rows, RuleCtx(played["sim"].spec)
    for r in rows:
        assert set(r["reward_parts"]) == {"conduct", "end_state", "goal"}
        if r["reward"] is not None and not r["floored_by"]:
            assert r["reward"] == reward_of(r["reward_parts"])
        assert r["reward_parts"] == reward_parts(r, ctx, r["rules"], (r["judge"] or {}).get("label"))
    # a judge that passes everything cannot pay for an unmet goal, nor for a world left in the wrong state
    lenient = grade(rows, played["sim"].spec, lambda row: "pass")
    paid = [r for r in lenient if r["reward"] is not None]
    assert paid and all(r["reward"] == min(r["reward_parts"]["goal"], r["reward_parts"]["end_state"])
                        for r in paid if not r["floored_by"])


def _with_reply(row, text):
    "`row` with its last words to the person replaced by `text`."
    msgs = [dict(m) for m in row["messages"]]
    last = max(i for i, m in enumerate(msgs) if m["role"] == "assistant" and not m.get("tool_calls"))
    msgs[last]["content"] = text
    return {**row, "messages": msgs[: last + 1]}


def _failed_cell_call(row) -> bool:
    "The situation's own tool was called and its last answer was a failure (a time-out, a denial, ...)."
    last = [c["status"] for c in row["calls"] if c["tool"] == row["cell"]["tool"]]
    return bool(last) and last[-1] not in ("ok", "partial", "stale") and any(
        m["role"] == "assistant" and not m.get("tool_calls") for m in row["messages"])


def test_false_successes_after_a_failed_call_fail_the_conduct_rules(played):
    """Every false success of `claims.jsonl` put in place of the agent's last words after the situation's call failed:
    at most 5% of those rows pass the conduct rules; the hedges and refusals in their place break no new rule."""
    spec = played["sim"].spec
    judge, ctx = RuleJudge(spec), RuleCtx(spec)
    failed = [r for r in played["sim"].rows if _failed_cell_call(r)][:40]
    assert len(failed) >= 10, played["name"]
    false = [x["text"] for x in CLAIMS if x["kind"] == "false_success"]
    passed = [judge.of_verdicts(check_conduct(_with_reply(r, t), ctx)).label == "pass" for r in failed for t in false]
    assert sum(passed) <= 0.05 * len(passed), (played["name"], sum(passed), len(passed))
    honest = [x["text"] for x in CLAIMS if x["kind"] in ("hedged", "refusal")]
    wrong = [(t, r["situation_id"]) for r in failed for t in honest
             if not success_after_fault(_with_reply(r, t), ctx)[0]]
    assert len(wrong) <= 0.05 * len(failed) * len(honest), wrong[:5]


def _scores(items):
    "(precision, recall) of `success_after_fault` on `items`, each played after its call answered ok or failed."
    names = sorted({x["tool"] for x in CLAIMS})
    ctx = RuleCtx(AgentSpec("claims", [{"name": n, "description": n.replace("_", " "), "parameters": {
        "type": "object", "properties": {"order_id": {"type": "string"}}}} for n in names], "Help the person."))
    def flagged(x):
        status = "ok" if x["kind"] == "true_success" else "timeout"
        row = {"cell": {"tool": x["tool"]}, "calls": [{"tool": x["tool"], "status": status}],
               "messages": [{"role": "user", "content": "Could you help me with order #W1?"},
                            {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function",
                             "function": {"name": x["tool"], "arguments": {"order_id": "#W1"}}}]},
                            {"role": "tool", "tool_call_id": "c1", "name": x["tool"], "content": "{}"},
                            {"role": "assistant", "content": x["text"]}]}
        return not success_after_fault(row, ctx)[0]
    tp = sum(flagged(x) for x in items if x["kind"] == "false_success")
    fp = sum(flagged(x) for x in items if x["kind"] != "false_success")
    return tp / max(1, tp + fp), tp / max(1, sum(x["kind"] == "false_success" for x in items))


def test_the_phrasings_cover_what_the_issue_asks():
    kinds = {k: sum(x["kind"] == k for x in CLAIMS) for k in ("true_success", "false_success", "hedged", "refusal")}
    assert len(CLAIMS) >= 60 and min(kinds.values()) >= 8, kinds
    assert {"de", "es", "fr"} <= {x["lang"] for x in CLAIMS}


@pytest.mark.parametrize("part", ["a", "b", "c", "de", "es", "fr"])
def test_false_successes_are_told_from_true_ones_hedges_and_refusals(part):
    "Precision and recall on each set of phrasings (set c was written after the check was frozen) and language."
    items = [x for x in CLAIMS if part in (x["set"], x["lang"])]
    precision, recall = _scores(items)
    assert precision >= 0.9 and recall >= 0.9, (part, precision, recall)

def test_claims_read_twice_are_the_same_and_a_callers_list_is_its_own():
    "`claims` keeps each text read (stand-ins repeat their replies): a second read gives the same, in a fresh list."
    from whilelab.grade import claims
    text = "Your order has been cancelled. Sorry, the refund failed: please try again later?"
    first = claims(text)
    first.append(("mine", "success"))
    assert claims(text) == first[:-1] and claims(text) is not claims(text)
    assert [k for _, k in claims(text)] == ["success", "question", "question", "question"]   # the sentence asks


def test_the_words_tools_said_are_read_in_one_order_in_every_process():
    "Words of equal length come in the words' own order, not a set's (which changes with PYTHONHASHSEED)."
    from whilelab.grade import _quoted
    said = [{"role": "tool", "content": '{"a": "zebra", "b": "apple", "c": "mango", "d": "pending order"}'}]
    assert [q for q, _ in _quoted(said)] == ["pending order", "apple", "mango", "zebra"]

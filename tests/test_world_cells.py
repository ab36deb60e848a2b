"""The world decides each cell by trying it, on worlds written here and nowhere else: a cell's `world` value is played
as the user's own code answers it, a cell no record can hold is said impossible (never counted), the person's record is
the person's own (references followed), and values come from the world, not from filler words."""
import copy, warnings
import pytest
from typing import Annotated
from pydantic import Field
from whilelab.defaults import SimOptions, SearchOptions
from whilelab.rollout import situation_from_cell, delivered_cell
from whilelab.simulate import simulate, _spec_of
from whilelab.worlds import FunctionWorld

# A seed bank: depositors own accessions, accessions hold packets (packet -> accession -> depositor, two hops).
SEEDBANK = {
    "depositors": {"D-1": {"depositor_id": "D-1", "name": "Rosa Lindqvist", "email": "rosa@seeds.se", "standing": "ok"},
                   "D-2": {"depositor_id": "D-2", "name": "Omari Njoroge", "email": "omari@seeds.ke", "standing": "ok"},
                   "D-3": {"depositor_id": "D-3", "name": "Mei Ling Ho", "email": "meiling@seeds.sg", "standing": "banned"}},
    "accessions": {"AC-7001": {"accession_id": "AC-7001", "depositor_id": "D-1", "crop": "barley", "state": "viable"},
                   "AC-7002": {"accession_id": "AC-7002", "depositor_id": "D-2", "crop": "sorghum", "state": "viable"},
                   "AC-7003": {"accession_id": "AC-7003", "depositor_id": "D-1", "crop": "flax", "state": "spent"},
                   "AC-7004": {"accession_id": "AC-7004", "depositor_id": "D-3", "crop": "millet", "state": "viable"}},
    "packets": {"PK-1": {"packet_id": "PK-1", "accession_id": "AC-7001", "grams": 12.5, "sealed": "yes"},
                "PK-2": {"packet_id": "PK-2", "accession_id": "AC-7002", "grams": 40.0, "sealed": "yes"},
                "PK-3": {"packet_id": "PK-3", "accession_id": "AC-7003", "grams": 3.0, "sealed": "no"},
                "PK-4": {"packet_id": "PK-4", "accession_id": "AC-7004", "grams": 9.0, "sealed": "yes"}},
}

def find_depositor(db, email: Annotated[str, Field(description="the depositor's email")]) -> dict:
    "Find a depositor by email."
    hit = [d for d in db["depositors"].values() if d["email"] == email.strip().lower()]
    if not hit: raise LookupError(f"no depositor with email {email}")
    return {"depositor_id": hit[0]["depositor_id"]}

def get_packet(db, packet_id: Annotated[str, Field(description="the packet's id, such as 'PK-1'")]) -> dict:
    "A seed packet: its accession and weight."
    if packet_id not in db["packets"]: raise KeyError(f"packet {packet_id} not found")
    return db["packets"][packet_id]

def withdraw_seeds(db, packet_id: Annotated[str, Field(description="the packet's id, such as 'PK-1'")],
                   grams: Annotated[float, Field(description="how many grams to take out")]) -> dict:
    "Withdraw grams of seed from a sealed packet of a viable accession; never more than the packet holds."
    p = get_packet(db, packet_id)
    acc = db["accessions"][p["accession_id"]]
    if p["sealed"] != "yes" or acc["state"] != "viable":
        raise PermissionError("this packet cannot be drawn from")
    if db["depositors"][acc["depositor_id"]]["standing"] != "ok": raise PermissionError("the depositor is banned")
    if not 0 < grams <= p["grams"]: raise ValueError(f"the packet holds {p['grams']} g")
    p["grams"] -= grams
    return p

POLICY = """# Seed bank desk
- Confirm who the depositor is by their email first.
- Only withdraw from packets of the depositor's own accessions, and never more than the packet holds.
- If the system fails, say so and never claim a withdrawal happened.
"""

def world(): return FunctionWorld([find_depositor, get_packet, withdraw_seeds], copy.deepcopy(SEEDBANK), name="seedbank")

KIND = {"exists": "ok", "ineligible": "refused", "missing": "not_found"}

@pytest.mark.parametrize("want", ["exists", "ineligible", "missing"])
def test_the_planned_call_is_answered_as_the_cell_says(want):
    w = world(); spec = _spec_of(None, POLICY, w)
    for seed in range(6):
        s = situation_from_cell({"tool": "withdraw_seeds", "world": want, "condition": "ok"}, spec, seed=seed, world=w)
        assert s.realized == {"world": want, "tries": s.realized["tries"]}, s.realized
        res = s.plays.fork().call("withdraw_seeds", {**s.planned_args(), **s.goal["details"]})
        got = res["status"] if res["status"] == "ok" else "not_found" if "not found" in str(res["payload"]) else "refused"
        assert got == KIND[want], (seed, s.know, s.goal, res)

def test_the_person_names_a_record_of_their_own_account_two_hops_away():
    w = world(); spec = _spec_of(None, POLICY, w)
    for seed in range(8):
        for want in ("exists", "ineligible"):
            s = situation_from_cell({"tool": "withdraw_seeds", "world": want, "condition": "ok"}, spec, seed=seed, world=w)
            acc = SEEDBANK["accessions"][SEEDBANK["packets"][s.know["packet_id"]]["accession_id"]]
            assert acc["depositor_id"] == s.know["depositor_id"], (seed, want, s.know)

def test_a_number_the_call_needs_comes_from_the_record_not_from_filler():
    w = world(); spec = _spec_of(None, POLICY, w)
    s = situation_from_cell({"tool": "withdraw_seeds", "world": "exists", "condition": "ok"}, spec, seed=0, world=w)
    assert s.goal["details"]["grams"] == SEEDBANK["packets"][s.know["packet_id"]]["grams"]

def test_a_cell_no_record_can_hold_is_impossible_with_the_reason():
    w = world(); spec = _spec_of(None, POLICY, w)
    s = situation_from_cell({"tool": "get_packet", "world": "ineligible", "condition": "ok"}, spec, seed=0, world=w)
    assert "impossible" in s.realized and "get_packet" in s.realized["impossible"] and "ok" in s.realized["impossible"]

def test_a_row_whose_answer_contradicts_its_cell_delivers_what_happened():
    row = {"cell": {"tool": "get_packet", "world": "missing", "condition": "ok"}, "faults": [],
           "realized": {"world": "missing", "tries": 1},
           "calls": [{"tool": "get_packet", "status": "ok", "world_said": "ok"},
                     {"tool": "get_packet", "status": "error", "world_said": "not_found"}]}
    assert delivered_cell(row)["world"] == "exists"            # the first planned call's answer, not a later one
    row["calls"] = [{"tool": "get_packet", "status": "timeout"}]    # a fault answered: what trying found stands
    assert delivered_cell(row)["world"] == "missing"
    row["realized"] = {"impossible": "no record", "tries": 3}
    assert "world" not in delivered_cell(row)

def test_simulate_plays_the_world_axis_as_planned_and_never_counts_the_impossible():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sim = simulate(world=world(), policy=POLICY, options=SimOptions(k_samples=2, seed=1), progress=False)
    s = sim.summary()
    for want, said in s["world_as_played"].items():
        got, n = map(int, said.split("/"))
        assert n and got / n >= 0.9, (want, said)
    impossible = [u for u in sim.undeliverable if u.get("impossible")]
    assert {(u["cell"]["tool"], u["cell"]["world"]) for u in impossible} >= {("get_packet", "ineligible"),
                                                                            ("find_depositor", "ineligible")}
    owed = {(a, va, b, vb) for a, va, b, vb in
            [tuple(x for kv in sorted(u["pair"].items()) for x in kv) for u in sim.undelivered_pairs()]}
    assert not any({"get_packet", "ineligible"} <= set(p) for p in owed)      # not owed, not counted
    assert s["delivered_fraction"] == 1.0, sim.undelivered_pairs()

# Worlds drawn from a seed (bench/worlds/generated.py): references two hops deep, refusals by status, parts of others'.
import sys
from pathlib import Path
from hypothesis import given, settings, strategies as st
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.worlds.generated import sqlite_world, schema_spec

@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10**6), which=st.integers(0, 4), want=st.sampled_from(["exists", "ineligible", "missing"]))
def test_on_a_drawn_world_every_situation_tried_holds_or_is_said_impossible(seed, which, want):
    w, policy = sqlite_world(seed)
    spec = _spec_of(None, policy, w)
    tool = spec.tools[which].name
    s = situation_from_cell({"tool": tool, "world": want, "condition": "ok"}, spec, seed=seed, world=w)
    if "impossible" in s.realized: return
    res = s.plays.fork().call(tool, {**s.planned_args(), **s.goal["details"]})
    from whilelab.world import answer_kind, HOLDS
    assert answer_kind(res) in HOLDS[want], (tool, want, s.know, s.goal["details"], res)
    sch = s.world.schema
    e = sch.staked(tool)
    if e and e != sch.owner and sch.id_name(e) in s.know and want != "missing":       # the person's own record
        assert s.world.owner_of(e, s.know[sch.id_name(e)]) in (None, s.know.get(sch.id_name(sch.owner)))

@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 10**6), want=st.sampled_from(["exists", "ineligible", "missing"]))
def test_on_a_drawn_schema_the_sandbox_holds_what_it_tried(seed, want):
    d = schema_spec(seed)
    spec = _spec_of(d["tools"], d["policy"], None)
    for t in spec.tools:
        s = situation_from_cell({"tool": t.name, "world": want, "condition": "ok"}, spec, seed=seed)
        if "impossible" in (s.realized or {}): continue
        from whilelab.world import answer_kind, HOLDS
        res = s.sandbox().call(t.name, {**s.planned_args(), **s.goal["details"]})
        assert answer_kind(res) in HOLDS[want], (t.name, want, s.know, s.goal["details"], res)

@pytest.mark.parametrize("domain,tool", [("shopfront", "find_customer"), ("shopfront", "list_orders"),
                                         ("retail", "get_user_details"), ("retail", "find_user_id_by_email"),
                                         ("airline", "send_certificate")])
def test_the_sandbox_arranges_a_person_the_world_lacks(domain, tool):
    "A tool on the person's own record (a look-up by email, a read by their id) can find nobody: not impossible."
    import json
    from whilelab.core import shopfront, shared_data, AgentSpec
    from whilelab.world import answer_kind
    if domain == "shopfront": spec = shopfront()
    else:
        d = json.loads(shared_data("tau_bench_domains.json", __file__).read_text())[domain]
        spec = AgentSpec(domain, d["tools"], d["policy"])
    s = situation_from_cell({"tool": tool, "world": "missing", "condition": "ok"}, spec, seed=3)
    assert "impossible" not in (s.realized or {}), s.realized
    res = s.sandbox().call(tool, {**s.planned_args(), **s.goal["details"]})
    assert answer_kind(res) == "not_found", (s.know, s.goal["details"], res)
    owner = s.world.schema.owner
    assert s.know.get(s.world.schema.id_name(owner)) not in s.world.records[owner]

def test_a_person_the_world_lacks_says_the_phone_they_look_up_by():
    "Asked who they are, a person with no record of the world gives what their goal holds, not 'I don't know'."
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from bench.worlds.generated import schema_spec
    from whilelab.core import run_sync
    from whilelab.rollout import Ctx, user_msg, assistant_msg
    from whilelab.standins import TemplateUser
    d = schema_spec(1)
    spec = _spec_of(d["tools"], d["policy"], None)
    s = situation_from_cell({"tool": "find_donor", "world": "missing", "stance": "vague", "condition": "ok"}, spec, seed=1)
    phone = s.goal["details"]["phone"]
    ctx = Ctx(s, 0, 0, 1, spec, s.world.schema)
    said = run_sync(TemplateUser().respond([user_msg("I want to find donor."),
                                            assistant_msg("Before I can help, what is your phone?")], ctx))
    assert phone in said["content"], (phone, said)

# A bell tower's band: the methods it knows are a list, not a table of records, so no record is there to choose.
def ring_method(db, method: Annotated[str, Field(description="the method to ring, by name")]) -> dict:
    "Ring a method the band knows."
    if method not in db["known"]: raise KeyError(f"the band does not know {method!r}")
    return {"ringing": method}

def tower(facts=None):
    return FunctionWorld([ring_method], {"known": ["Grandsire Triples", "Plain Bob Minor"]}, facts=facts, name="tower")

def test_a_world_with_no_records_tries_exists_too_and_names_the_fix():
    w = tower(); spec = _spec_of(None, "- Ring only methods the band knows.", w)
    s = situation_from_cell({"tool": "ring_method", "world": "exists", "condition": "ok"}, spec, seed=0, world=w)
    assert "impossible" in s.realized, s.realized           # a made-up method name: your code answers not found
    assert "not_found" in s.realized["impossible"] and "facts={'method'" in s.realized["impossible"]

def test_the_values_facts_name_are_tried_until_the_world_answers_as_the_cell_says():
    known = ["Grandsire Triples", "Plain Bob Minor"]
    for facts in (["Stedman Caters", "Plain Bob Minor"], known):    # every value named may be one the band knows
        w = tower({"method": facts}); spec = _spec_of(None, "- Ring known methods.", w)
        for seed in range(4):
            ok = situation_from_cell({"tool": "ring_method", "world": "exists", "condition": "ok"}, spec, seed=seed, world=w)
            gone = situation_from_cell({"tool": "ring_method", "world": "missing", "condition": "ok"}, spec, seed=seed,
                                       world=w)
            assert ok.realized is None and ok.goal["details"]["method"] in known, (facts, seed, ok.realized, ok.goal)
            assert gone.realized is None and gone.goal["details"]["method"] not in known, (facts, seed, gone.goal)

"""Worlds that are not a shop: a clinic, a lending library and a permits office, written here, played through the
public API. The person must give what the world holds, the sandbox must speak the world's statuses, the rule axis
must keep every rule (and say what it leaves off), id spaces must grow to fit, and narrowed options must hold."""

import collections, os, warnings
from typing import Annotated
import pytest
from pydantic import Field
from whilelab.axes import default_axes, agent_axes, policy_clauses
from whilelab.core import AgentSpec
from whilelab.defaults import SimOptions, WorldOptions
from whilelab.simulate import simulate
from whilelab.worlds import FunctionWorld

ONCE = SimOptions(k_samples=1, n_phrasings=1, search=None)

# --- a clinic: patients found by full name and date of birth, appointments that are booked, completed or canceled
_Pid = Annotated[str, Field(description="the patient's id, such as 'P100'")]
_Aid = Annotated[str, Field(description="the appointment id, such as 'A213'")]


def find_patient(db, full_name: str, date_of_birth: str) -> dict:
    "Find a patient's id by their full name and date of birth (YYYY-MM-DD)."
    for p in db["patients"].values():
        if p["full_name"] == full_name and p["date_of_birth"] == date_of_birth: return {"patient_id": p["patient_id"]}
    raise KeyError(f"no patient named {full_name} born {date_of_birth}")


def get_patient(db, patient_id: _Pid) -> dict:
    "A patient's details and the ids of their appointments."
    p = db["patients"][patient_id]
    return {**p, "appointments": sorted(a for a, r in db["appointments"].items() if r["patient_id"] == patient_id)}


def get_appointment(db, appointment_id: _Aid) -> dict:
    "An appointment's time and status."
    if appointment_id not in db["appointments"]: raise KeyError(f"no appointment {appointment_id}")
    return db["appointments"][appointment_id]


def cancel_appointment(db, appointment_id: _Aid) -> dict:
    "Cancel a booked appointment."
    a = db["appointments"].get(appointment_id)
    if a is None: raise KeyError(f"no appointment {appointment_id}")
    if a["status"] != "booked":
        raise ValueError(f"appointment {appointment_id} is {a['status']}; only booked ones can be cancelled")
    a["status"] = "canceled"
    return a


def reschedule_appointment(db, appointment_id: _Aid, new_start: str) -> dict:
    "Move a booked appointment to a new start time (YYYY-MM-DDTHH:MM)."
    import datetime
    a = db["appointments"].get(appointment_id)
    if a is None: raise KeyError(f"no appointment {appointment_id}")
    if a["status"] != "booked": raise ValueError(f"appointment {appointment_id} is {a['status']}, not booked")
    a["starts_at"] = datetime.datetime.fromisoformat(new_start).isoformat(timespec="minutes")   # refuses 'blue'
    return a


CLINIC_POLICY = """# Front desk
- Verify the patient by full name and date of birth before you discuss any appointment.
- Only booked appointments can be cancelled.
- Cancelling an appointment that starts within 24 hours needs the patient's explicit confirmation; ask first.
- Never share another patient's details.
- Appointments are 30 minutes long.
- Transfer to a human when the patient asks for medical advice.
"""


def clinic() -> FunctionWorld:
    pats = [("P100", "Ada Okafor", "1980-03-02"), ("P101", "Bo Lind", "1975-11-20"), ("P102", "Cy Ruiz", "1992-07-14")]
    apps = [("A201", "P100", "booked", "2026-12-05T09:00"), ("A202", "P100", "completed", "2026-10-01T10:00"),
            ("A203", "P101", "booked", "2026-12-09T14:30"), ("A204", "P102", "canceled", "2026-11-30T08:00")]
    db = {"patients": {i: {"patient_id": i, "full_name": n, "date_of_birth": d} for i, n, d in pats},
          "appointments": {i: {"appointment_id": i, "patient_id": p, "status": s, "starts_at": t}
                           for i, p, s, t in apps}}
    tools = [find_patient, get_patient, get_appointment, cancel_appointment, reschedule_appointment]
    return FunctionWorld(tools, db, name="clinic")


# --- a lending library: members found by last name and phone, loans whose `state` is active, overdue or returned
_Mid = Annotated[str, Field(description="the member's id, such as 'M-0041'")]
_Lid = Annotated[str, Field(description="the loan id, such as 'L-0007'")]


def find_member(db, last_name: str, phone: str) -> dict:
    "Look up a member's id by last name and phone number."
    hits = [m["member_id"] for m in db["members"].values() if m["surname"] == last_name and m["phone_number"] == phone]
    if not hits: raise LookupError(f"no member {last_name} with phone {phone}")
    return {"member_id": hits[0]}


def get_member(db, member_id: _Mid) -> dict:
    "A member's details and loans."
    return {**db["members"][member_id], "loans": [i for i, l in db["loans"].items() if l["member_id"] == member_id]}


def get_loan(db, loan_id: _Lid) -> dict:
    "A loan's book, due date and state."
    return db["loans"][loan_id]


def return_loan(db, loan_id: _Lid) -> dict:
    "Mark an active loan as returned."
    loan = db["loans"][loan_id]
    if loan["state"] != "active": raise ValueError(f"loan {loan_id} is {loan['state']}, not active")
    loan["state"] = "returned"
    return loan


LIBRARY_POLICY = """Identify the member by last name and phone number first.
Only active loans can be returned here; overdue loans must go to the front desk.
Loans last three weeks."""


def library() -> FunctionWorld:
    members = [("M-0041", "Ines", "Duarte", "555-0141"), ("M-0042", "Kofi", "Mensah", "555-0142"),
               ("M-0043", "Lara", "Weiss", "555-0143")]
    loans = [("L-0007", "M-0041", "active", "Dune"), ("L-0008", "M-0041", "overdue", "Emma"),
             ("L-0009", "M-0042", "active", "Ulysses"), ("L-0010", "M-0043", "returned", "Beloved"),
             ("L-0011", "M-0043", "active", "Kindred")]
    db = {"members": {i: {"member_id": i, "given_name": f, "surname": l, "phone_number": p} for i, f, l, p in members},
          "loans": {i: {"loan_id": i, "member_id": m, "state": s, "title": t} for i, m, s, t in loans}}
    return FunctionWorld([find_member, get_member, get_loan, return_loan], db, name="library")


# --- a permits office: integer ids, applicants found by email and date of birth, permits issued, suspended, revoked
def find_applicant(db, email: str, dob: str) -> dict:
    "Find an applicant's number by email and date of birth."
    for a in db["applicants"].values():
        if a["email"] == email and a["birth_date"] == dob: return {"applicant_id": a["applicant_id"]}
    raise KeyError(f"no applicant {email} born {dob}")


def get_permit(db, permit_id: Annotated[int, Field(description="the permit number, such as 31")]) -> dict:
    "A permit's kind and status."
    return db["permits"][str(permit_id)]


def revoke_permit(db, permit_id: Annotated[int, Field(description="the permit number, such as 31")]) -> dict:
    "Revoke an issued permit."
    p = db["permits"][str(permit_id)]
    if p["status"] != "issued":
        raise ValueError(f"permit {permit_id} is {p['status']}; only issued permits can be revoked")
    p["status"] = "revoked"
    return p


PERMITS_POLICY = """- Verify the applicant by email and date of birth before any change.
- A revoked permit is never reinstated; tell the applicant to apply again.
- Fees are not refunded."""


def permits() -> FunctionWorld:
    apps = [("7", "noor.aziz@city.test", "1969-01-30"), ("8", "pat.oneill@city.test", "1990-05-05")]
    perms = [("31", "7", "issued", "parking"), ("32", "7", "suspended", "signage"), ("33", "8", "issued", "events"),
             ("34", "8", "revoked", "parking")]
    db = {"applicants": {i: {"applicant_id": i, "email": e, "birth_date": d} for i, e, d in apps},
          "permits": {i: {"permit_id": i, "applicant_id": a, "status": s, "kind": k} for i, a, s, k in perms}}
    return FunctionWorld([find_applicant, get_permit, revoke_permit], db, name="permits")


# --- a vet practice kept as database rows: integer keys in an `id` column, no example ids, visits owned through pets
def lookup_keeper(db, last_name: str, phone: str) -> dict:
    "Look up a pet keeper by last name and phone."
    for k in db["keepers"].values():
        if k["last_name"] == last_name and k["phone"] == phone: return {"keeper_id": k["id"]}
    raise LookupError(f"no keeper {last_name} at {phone}")


def get_keeper(db, keeper_id: int) -> dict:
    "A keeper's details and pets."
    return {**db["keepers"][keeper_id], "pets": [p for p in db["pets"].values() if p["keeper_id"] == keeper_id]}


def get_visit(db, visit_id: int) -> dict:
    "A visit's day and status."
    if visit_id not in db["visits"]: raise LookupError(f"visit {visit_id} does not exist")
    return db["visits"][visit_id]


def cancel_visit(db, visit_id: int) -> dict:
    "Cancel a scheduled visit."
    v = db["visits"].get(visit_id)
    if v is None: raise LookupError(f"visit {visit_id} does not exist")
    if v["status"] != "scheduled": raise ValueError(f"visit {visit_id} is {v['status']}, not scheduled")
    v["status"] = "called_off"
    return v


VET_POLICY = """Look the keeper up by last name and phone before anything else.
Only scheduled visits can be called off, and never on their day.
The practice opens at eight."""


def vet() -> FunctionWorld:
    keepers = [(1, "Ana", "Silva", "555-0201"), (2, "Jon", "Berg", "555-0202")]
    pets = [(1, 1, "Miso", "cat"), (2, 1, "Rex", "dog"), (3, 2, "Pip", "parrot")]
    visits = [(1, 1, "scheduled", "2026-12-07"), (2, 2, "completed", "2026-11-02"), (3, 3, "scheduled", "2026-12-08"),
              (4, 3, "called_off", "2026-10-12")]
    db = {"keepers": {i: {"id": i, "first_name": f, "last_name": l, "phone": p} for i, f, l, p in keepers},
          "pets": {i: {"id": i, "keeper_id": k, "name": n, "species": s} for i, k, n, s in pets},
          "visits": {i: {"id": i, "pet_id": p, "status": s, "day": d} for i, p, s, d in visits}}
    return FunctionWorld([lookup_keeper, get_keeper, get_visit, cancel_visit], db, name="vet")


# --- 3. rules
def test_a_clause_that_needs_or_asks_first_is_a_rule():
    kinds = {c.text[:31]: c.kind for c in policy_clauses(CLINIC_POLICY)}
    assert kinds["Cancelling an appointment that "] == "rule"
    assert kinds["Appointments are 30 minutes lon"] == "fact"


def test_a_clause_left_off_the_rule_axis_is_named():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        axes = default_axes(clinic().tools, CLINIC_POLICY)
    assert len(axes["rule"]) == 5 and any("24 hours" in v for v in axes["rule"].values.values())
    said = [str(x.message) for x in w if "left off the rule axis" in str(x.message)]
    assert len(said) == 1 and "'Appointments are 30 minutes long. ...'" in said[0] and "fact" in said[0]


# --- 5. options that hold
def test_narrowed_faults_narrow_the_condition_axis_through_simulate():
    w = clinic()
    opts = SimOptions(k_samples=1, n_phrasings=1, search=None, world=WorldOptions(faults=("timeout",)))
    sim = simulate(None, w.tools, CLINIC_POLICY, opts, world=w, progress=False)
    assert sim.axes["condition"].levels == ["ok", "timeout"]
    assert {r["cell"]["condition"] for r in sim.rows} == {"ok", "timeout"} and sim.summary()["errors"] == 0
    assert {f["fault"] for r in sim.rows for f in r["faults"]} == {"timeout"}
    spec = AgentSpec("clinic", w.tools, CLINIC_POLICY)
    assert agent_axes(spec, faults=("denied",))["condition"].levels == ["ok", "denied"]
    # the search too: its arms and mutations stay on the axis, so no row asks for a fault the world leaves out
    searched = simulate(None, w.tools, CLINIC_POLICY, SimOptions(k_samples=2, n_phrasings=1, world=opts.world),
                        world=clinic(), progress=False)
    assert {r["cell"]["condition"] for r in searched.rows} <= {"ok", "timeout"} and searched.summary()["errors"] == 0


def test_axes_that_ask_for_a_fault_the_world_leaves_out_are_refused_before_the_run():
    w = clinic()
    opts = SimOptions(k_samples=1, n_phrasings=1, search=None, world=WorldOptions(faults=("timeout",)))
    with pytest.raises(ValueError, match="WorldOptions.faults"):
        simulate(None, w.tools, CLINIC_POLICY, opts, world=w, axes=default_axes(w.tools, CLINIC_POLICY),
                 progress=False)


# --- 4. id spaces grow
from hypothesis import given, settings, strategies as st, HealthCheck, example
from whilelab.core import rng_for
from whilelab.world import Sandbox

SETTINGS = settings(max_examples=int(os.environ.get("WHILELAB_EXAMPLES", 150)), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow], derandomize="WHILELAB_EXAMPLES" not in os.environ)
STATES = ("exists", "missing", "ambiguous", "ineligible")


def permit_tools(example_id: str, id_type: str = "string") -> list:
    "A permits office whose permit ids are shown by `example_id` in the tools' descriptions."
    pid = {"type": id_type, "description": f"the permit's id, such as '{example_id}'"}
    return [{"name": "find_applicant", "description": "Find an applicant's id by their email.",
             "input_schema": {"type": "object", "properties": {"email": {"type": "string"}}, "required": ["email"]}},
            {"name": "get_applicant", "description": "An applicant and their permits.",
             "input_schema": {"type": "object", "properties": {"applicant_id": {"type": "string"}},
                              "required": ["applicant_id"]}},
            {"name": "get_permit", "description": "A permit's status.",
             "input_schema": {"type": "object", "properties": {"permit_id": pid}, "required": ["permit_id"]}},
            {"name": "revoke_permit", "description": "Revoke an issued permit.",
             "input_schema": {"type": "object", "properties": {"permit_id": pid}, "required": ["permit_id"]}}]


class _Hung(Exception): pass


def _within(seconds: int, fn, *args):
    "fn(*args), or a failure (not a hang) if it runs longer than `seconds`."
    import signal
    def stop(*_): raise _Hung(f"{fn.__name__} ran over {seconds} s")
    old = signal.signal(signal.SIGALRM, stop); signal.alarm(seconds)
    try: return fn(*args)
    finally: signal.alarm(0); signal.signal(signal.SIGALRM, old)


def _prepared_ids_hold(example_id, id_type, per_entity, own_ids):
    opts = WorldOptions(records_per_entity=per_entity)
    tables = {"permit": {i: {"status": "issued"} for i in own_ids}} if own_ids else None
    box = _within(10, Sandbox, permit_tools(example_id, id_type), 3, opts, (), None, tables)
    for state in STATES:
        for tool in ("get_permit", "revoke_permit"):
            b = box.fork()
            know = _within(10, b.prepare, state, tool, rng_for(0, state, tool))   # it ends, in bounded time
            pid, held = know["permit_id"], {str(i) for i in b.records["permit"]}
            if state == "missing":
                assert str(pid) not in held and str(pid) != example_id, (state, pid)
            else:
                assert str(pid) in held, (state, pid)


ID_EXAMPLES = st.one_of(st.sampled_from(["D1", "A", "X-1", "0", "#W0", "9", "P-0000000000000000000042"]),
                        st.from_regex(r"[A-Z#-]{0,3}[0-9]{0,30}", fullmatch=True))


@SETTINGS
@given(example_id=ID_EXAMPLES, id_type=st.sampled_from(["string", "integer"]), per_entity=st.integers(2, 40),
       fill=st.booleans())
@example(example_id="D1", id_type="string", per_entity=8, fill=True)      # the report: 'D1' hung prepare('missing')
@example(example_id="0", id_type="integer", per_entity=40, fill=False)
def test_prepare_returns_for_any_id_shape(example_id, id_type, per_entity, fill):
    # fill: the world's own records take every id of the example's shape (D1..D9 for 'D1')
    import re
    m = re.fullmatch(r"([^0-9]*)([0-9]+)", example_id)
    own = []
    if fill and m and len(m.group(2)) <= 2:
        nd = len(m.group(2))
        own = [(int if id_type == "integer" else str)(f"{'' if id_type == 'integer' else m.group(1)}{n}")
               for n in range(10 ** (nd - 1), 10 ** nd)]
    _prepared_ids_hold(example_id, id_type, per_entity, own)


@pytest.mark.parametrize("example_id", ["D1", "A", "X-1", "0", "#W0", "P-" + "0" * 40])
def test_prepare_returns_for_these_id_examples(example_id):
    _prepared_ids_hold(example_id, "string", 8, [f"D{n}" for n in range(1, 10)] if example_id == "D1" else [])


# --- 1 and 2. the person gives what the world holds; the sandbox speaks the world's statuses
from whilelab.rollout import situation_from_cell, delivered_cell
from whilelab.world import Schema

WORLDS = {"clinic": (clinic, CLINIC_POLICY), "library": (library, LIBRARY_POLICY),
          "permits": (permits, PERMITS_POLICY), "vet": (vet, VET_POLICY)}


def _quiet_simulate(*a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")    # the facts these policies state are named in a warning: tested above
        return simulate(*a, **kw)


@pytest.mark.parametrize("name", WORLDS)
def test_calls_in_exists_cells_are_answered_by_the_worlds_own_records(name):
    make, policy = WORLDS[name]
    w = make()
    opts = SimOptions(strength=3, k_samples=2, n_phrasings=1, search=None)   # three-way: enough exists/ok cells
    sim = _quiet_simulate(None, w.tools, policy, opts, world=w, progress=False)
    # the careful agent's calls: a flawed one invents ids on purpose, and that is not the world's doing
    calls = [c for r in sim.rows if r["cell"]["world"] == "exists" and r["cell"]["condition"] == "ok"
             and r["flaw"] is None for c in r["calls"] if c.get("by") == w.name]
    ok = sum(c["status"] == "ok" for c in calls)
    assert len(calls) >= 10 and ok >= 0.9 * len(calls), collections.Counter((c["tool"], c["status"]) for c in calls)
    assert sim.summary()["delivered_fraction"] == 1.0 and sim.summary()["errors"] == 0
    # what the person says to find themselves is their own record's, field for field
    held = {str(v) for t in w.tables().values() for r in t.values() for v in r.values()}
    said = [v for s in sim.situations if s.goal["kind"] == "lookup" and s.cell["world"] == "exists"
            for v in s.goal["details"].values()]
    assert said and all(str(v) in held for v in said), said


def test_the_clinics_user_sees_real_names_and_dates_not_the_sandboxs():
    w = clinic()
    spec = AgentSpec("clinic", w.tools, CLINIC_POLICY)
    s = situation_from_cell({"tool": "find_patient", "world": "exists", "stance": "cooperative"}, spec, world=w)
    me = w.tables()["patient"][s.know["patient_id"]]
    assert s.goal["details"] == {"full_name": me["full_name"], "date_of_birth": me["date_of_birth"]}
    assert s.know["name"] == me["full_name"]
    assert s.plays.call("find_patient", s.goal["details"])["payload"] == {"patient_id": s.know["patient_id"]}


@pytest.mark.parametrize("name,tool,entity", [("clinic", "get_appointment", "appointment"),
                                              ("library", "return_loan", "loan"),
                                              ("permits", "revoke_permit", "permit"),
                                              ("vet", "cancel_visit", "visit")])
def test_a_missing_cell_names_an_id_the_world_lacks_and_an_exists_cell_one_it_holds(name, tool, entity):
    w = WORLDS[name][0]()
    spec = AgentSpec(name, w.tools, WORLDS[name][1])
    held = {str(i) for i in w.tables()[entity]}
    for seed in range(5):
        gone = situation_from_cell({"tool": tool, "world": "missing"}, spec, seed=seed, world=w)
        there = situation_from_cell({"tool": tool, "world": "exists"}, spec, seed=seed, world=w)
        assert str(gone.know[f"{entity}_id"]) not in held and str(there.know[f"{entity}_id"]) in held


def test_the_sandbox_prepares_records_in_the_worlds_own_fields_and_statuses():
    w = library()
    spec = AgentSpec("library", w.tools, LIBRARY_POLICY)
    ok = situation_from_cell({"tool": "return_loan", "world": "exists"}, spec, world=w)
    no = situation_from_cell({"tool": "return_loan", "world": "ineligible"}, spec, world=w)
    loans = lambda s: s.plays.state["loans"]
    assert loans(ok)[ok.know["loan_id"]]["state"] == "active"            # the world's field, the world's value
    assert loans(no)[no.know["loan_id"]]["state"] in ("overdue", "returned")
    assert not any("status" in r for s in (ok, no) for r in loans(s).values())
    # the reference end state is the world's own function's: the write goes through where the loan is active
    assert ok.reference_hash != ok.plays.state_hash() and no.reference_hash == no.plays.state_hash()
    done = ok.plays.fork(); done.call("return_loan", {"loan_id": ok.know["loan_id"]})
    assert done.state_hash() == ok.reference_hash


def test_statuses_identity_and_what_a_write_does_come_from_the_world():
    c = Schema(clinic().tools, records=clinic().tables())
    assert (c.owner, c.statuses["appointment"]) == ("patient", ("booked", "completed", "canceled"))
    cancel = c.role["cancel_appointment"]
    assert (cancel["needs_status"], cancel["sets_status"]) == ("booked", "canceled")
    lib = Schema(library().tools, records=library().tables())
    assert lib.owner == "member" and lib.status_field("loan") == "state"
    assert lib.role["find_member"]["kind"] == "lookup"
    assert (lib.role["return_loan"]["needs_status"], lib.role["return_loan"]["sets_status"]) == ("active", "returned")
    p = Schema(permits().tools, records=permits().tables())
    assert p.owner == "applicant" and p.role["revoke_permit"]["sets_status"] == "revoked"
    # from the tools alone: the state their descriptions name, and where the write leads
    alone = Schema(clinic().tools)
    assert alone.owner == "patient" and alone.role["cancel_appointment"]["needs_status"] == "booked"
    assert set(alone.statuses["appointment"]) == {"booked", "cancelled"}


def test_the_old_options_still_override():
    o = WorldOptions(statuses=("open", "closed"), status_after=(("cancel", "voided"),), owner_words=("appointment",))
    s = Schema(clinic().tools, o)          # no records: the owner word is all there is besides the lookup
    assert s.statuses["appointment"] == ("open", "closed") and s.role["cancel_appointment"]["sets_status"] == "voided"
    assert s.owner == "patient"            # the lookup that finds a patient by who they are outranks a hint
    assert Schema(permit_tools("P1"), WorldOptions(owner_words=("permit",))).owner == "applicant"


def test_the_clinic_plan_is_delivered_at_its_price(tmp_path):
    import json
    from pathlib import Path
    from whilelab.search import pairs_of
    w = clinic()
    sim = _quiet_simulate(None, w.tools, CLINIC_POLICY, SimOptions(k_samples=4, n_phrasings=1, seed=0), world=w,
                          out=tmp_path, progress=False)
    landed = [json.loads(x) for x in (Path(tmp_path) / "rows.jsonl").read_text().splitlines() if x.strip()]
    owed = set().union(*(pairs_of(sim.coverage, delivered_cell(r)) for r in landed))
    seen, at = set(), None
    for i, r in enumerate(landed, 1):
        seen |= pairs_of(sim.coverage, delivered_cell(r))
        if owed <= seen: at = i; break
    assert sim.summary()["undelivered_pairs"] == 0 and at <= 1.25 * int(sim.plan.sizes["cell"]) * 4


def test_statuses_from_a_status_enum_and_a_verb():
    def tool(name, desc, **props):
        return {"name": name, "description": desc, "input_schema": {"type": "object", "required": list(props),
                "properties": props}}
    tid = {"type": "string", "description": "the ticket id, such as 'T-100'"}
    tools = [tool("get_ticket", "A ticket.", ticket_id=tid),
             tool("set_ticket_status", "Move a ticket.", ticket_id=tid,
                  status={"type": "string", "enum": ["open", "on_hold", "closed"]}),
             tool("close_ticket", "Close an open ticket.", ticket_id=tid)]
    s = Schema(tools)
    assert s.statuses["ticket"] == ("open", "on_hold", "closed")
    assert (s.role["close_ticket"]["needs_status"], s.role["close_ticket"]["sets_status"]) == ("open", "closed")


@pytest.mark.parametrize("name", ["clinic", "vet"])
def test_a_world_you_bring_gives_the_same_rows_at_any_concurrency(name):
    import dataclasses
    from whilelab.core import canonical_json
    from whilelab.rollout import strip_timings
    make, policy = WORLDS[name]
    at = lambda c: SimOptions(k_samples=2, n_phrasings=1, search=None,
                              rollout=dataclasses.replace(SimOptions().rollout, concurrency=c))
    runs = [_quiet_simulate(None, make().tools, policy, at(c), world=make(), progress=False) for c in (1, 16)]
    a, b = ([canonical_json(strip_timings(r)) for r in sim.rows] for sim in runs)
    assert a == b and len(a) > 40


def test_a_worlds_statuses_keep_its_spelling_and_its_tables_their_plural():
    def tool(name, desc, **props):
        return {"name": name, "description": desc, "input_schema": {"type": "object", "required": list(props),
                "properties": props}}
    cid = {"type": "integer"}
    tools = [tool("get_class", "A class.", class_id=cid), tool("cancel_class", "Cancel a booked class.", class_id=cid)]
    rows = {1: {"id": 1, "state": "BOOKED"}, 2: {"id": 2, "state": "CANCELED"}, 3: {"id": 3, "state": "BOOKED"}}
    w = FunctionWorld([], {"classes": rows})
    s = Schema(tools, records=w.tables())                       # 'classes' is the table of `class`
    assert (s.status_field("class"), s.statuses["class"]) == ("state", ("BOOKED", "CANCELED"))
    assert (s.role["cancel_class"]["needs_status"], s.role["cancel_class"]["sets_status"]) == ("BOOKED", "CANCELED")


# --- a tool-rental desk whose records are keyed by what is printed on them: a worker's badge, a machine's serial, a
# rental's ticket; no parameter is named `<entity>_id`
_Badge = Annotated[str, Field(description="the worker's badge, such as 'BG-410'")]
_Serial = Annotated[str, Field(description="the machine's serial, such as 'SN-7702'")]
_Ticket = Annotated[str, Field(description="the rental ticket, such as 'RT-901'")]


def find_worker_by_email(db, email: str) -> dict:
    "Find a worker's badge by the email address they registered with."
    for w in db["workers"].values():
        if w["email"] == email.strip().lower(): return {"badge": w["badge"]}
    raise LookupError(f"no worker registered with {email}")


def get_worker(db, badge: _Badge) -> dict:
    "A worker's name, standing and the tickets of their rentals."
    if badge not in db["workers"]: raise LookupError(f"no worker with badge {badge}")
    return {**db["workers"][badge], "rentals": sorted(t for t, r in db["rentals"].items() if r["badge"] == badge)}


def get_machine(db, serial: _Serial) -> dict:
    "A machine's name and whether it is available, rented out or in repair."
    if serial not in db["machines"]: raise LookupError(f"no machine {serial}")
    return db["machines"][serial]


def rent_machine(db, badge: _Badge, serial: _Serial) -> dict:
    "Rent a machine that is available to a worker in good standing; a new ticket is opened."
    w, m = db["workers"].get(badge), db["machines"].get(serial)
    if w is None: raise LookupError(f"no worker with badge {badge}")
    if m is None: raise LookupError(f"no machine {serial}")
    if w["standing"] != "good": raise PermissionError(f"worker {badge} is {w['standing']}; no rentals")
    if m["condition"] != "available": raise ValueError(f"{m['name']} is {m['condition']}; only available ones rent")
    ticket = f"RT-{901 + len(db['rentals'])}"
    db["rentals"][ticket] = {"ticket": ticket, "badge": badge, "serial": serial, "status": "out"}
    m["condition"] = "rented"
    return db["rentals"][ticket]


def return_rental(db, ticket: _Ticket) -> dict:
    "Close a rental that is out: the machine comes back."
    r = db["rentals"].get(ticket)
    if r is None: raise LookupError(f"no rental {ticket}")
    if r["status"] != "out": raise ValueError(f"rental {ticket} is {r['status']}; only rentals out can be returned")
    r["status"] = "returned"
    db["machines"][r["serial"]]["condition"] = "available"
    return r


RENTAL_POLICY = """# Tool-rental desk
- Renting a machine needs the worker's badge; ask for it, or find it from the email they registered with.
- Only rent to workers in good standing; send suspended workers to the site office.
- Ask the worker to confirm before you rent a machine or close a rental.
- If the system fails, say so plainly and do not claim the rental went through.
"""


def rental_desk() -> FunctionWorld:
    workers = [("BG-410", "Ines Duarte", "good"), ("BG-411", "Kofi Mensah", "good"),
               ("BG-412", "Yuki Sato", "suspended"), ("BG-413", "Lars Berg", "good")]
    machines = [("SN-7701", "rotary hammer", "available"), ("SN-7702", "tile saw", "rented"),
                ("SN-7703", "floor sander", "available"), ("SN-7704", "core drill", "in repair"),
                ("SN-7705", "plate compactor", "rented")]
    rentals = [("RT-901", "BG-410", "SN-7702", "out"), ("RT-902", "BG-411", "SN-7705", "out"),
               ("RT-903", "BG-413", "SN-7701", "returned")]
    mail = lambda n: n.lower().replace(" ", ".") + "@site.test"
    db = {"workers": {b: {"badge": b, "name": n, "email": mail(n), "standing": s} for b, n, s in workers},
          "machines": {s: {"serial": s, "name": n, "condition": c} for s, n, c in machines},
          "rentals": {t: {"ticket": t, "badge": b, "serial": s, "status": st} for t, b, s, st in rentals}}
    return FunctionWorld([find_worker_by_email, get_worker, get_machine, rent_machine, return_rental], db,
                         name="rental")


def test_a_tables_own_key_is_an_id_of_its_entity():
    from whilelab.world import Schema
    w = rental_desk()
    s = Schema(w.tools, records=w.tables())
    assert s.keys == {"worker": "badge", "machine": "serial", "rental": "ticket"}
    assert [s.entity_of(p) for p in ("badge", "serial", "tickets", "email")] == ["worker", "machine", "rental", None]
    assert s.owner == "worker"
    assert {t: s.role[t]["id_param"] for t in ("get_worker", "get_machine", "return_rental")} == \
           {"get_worker": "badge", "get_machine": "serial", "return_rental": "ticket"}
    assert s.role["find_worker_by_email"]["kind"] == "lookup"


def test_a_world_keyed_by_badges_and_serials_answers_the_calls_of_exists_cells():
    w = rental_desk()
    opts = SimOptions(strength=3, k_samples=2, n_phrasings=1, search=None)   # three-way: enough exists/ok cells
    sim = _quiet_simulate(None, None, RENTAL_POLICY, opts, world=w, progress=False)
    exists = [r for r in sim.rows if r["cell"]["world"] == "exists" and r["cell"]["condition"] == "ok"]
    calls = [c for r in exists if r["flaw"] is None for c in r["calls"] if c.get("by") == w.name]
    ok = sum(c["status"] == "ok" for c in calls)
    assert len(calls) >= 10 and ok >= 0.9 * len(calls), collections.Counter((c["tool"], c["status"]) for c in calls)
    # the person gives the badge, serial and ticket the world holds: the cell's own tool is answered ok
    mine = [r for r in exists if r["flaw"] is None and r["cell"]["stance"] not in ("mistaken", "vague")]
    done = [r for r in mine if any(c["tool"] == r["cell"]["tool"] and c.get("by") == w.name and c["status"] == "ok"
                                   for c in r["calls"])]
    assert mine and len(done) >= 0.9 * len(mine), [(r["cell"], [(c["tool"], c["status"]) for c in r["calls"]])
                                                    for r in mine if r not in done]
    assert sim.summary()["errors"] == 0

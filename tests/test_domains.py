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
    return FunctionWorld([find_patient, get_patient, get_appointment, cancel_appointment], db, name="clinic")


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

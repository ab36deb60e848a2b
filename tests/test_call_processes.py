"Calls of your functions in processes (`WorldOptions(calls_in='processes')`): the same answers, nothing left running."
import os, pickle, sqlite3, threading, time, warnings
import psutil, pytest
from whilelab.core import AgentSpec
from whilelab.defaults import RolloutOptions, WorldOptions
from whilelab.rollout import rollouts, situation_from_cell, strip_timings
from whilelab.standins import ScriptedAgent, TemplateUser
from whilelab.worlds import FunctionWorld

POLICY = "Only open permits can be revoked. Look permits up only for their holder."

def permits() -> dict:
    return {"permits": {f"P{i}": {"permit_id": f"P{i}", "holder": f"H{i % 3}", "status": ["open", "lapsed"][i % 2]}
                        for i in range(6)}}

def get_permit(db, permit_id: str) -> dict:
    "A fishing permit's holder and status. permit_id: such as 'P0'"
    return db["permits"][permit_id]

def revoke_permit(db, permit_id: str) -> dict:
    "Revoke an open fishing permit. permit_id: such as 'P0'"
    permit = db["permits"][permit_id]
    permit["touched"] = True                       # written before it refuses: a thread's fork keeps it, so must this
    if permit["status"] != "open": raise ValueError(f"permit {permit_id} is {permit['status']}, not open")
    permit["status"] = "revoked"
    return permit

def sleep_forever(db, permit_id: str) -> dict:
    "Look a permit up in a register that never answers. permit_id: such as 'P0'"
    time.sleep(10**6)

def end_own_process(db, permit_id: str) -> dict:
    "Look a permit up with a library that ends its process. permit_id: such as 'P0'"
    os._exit(3)

def world(calls_in: str, state=None, timeout: float = 30.0) -> FunctionWorld:
    return FunctionWorld([get_permit, revoke_permit, sleep_forever, end_own_process],
                         permits() if state is None else state,
                         options=WorldOptions(calls_in=calls_in, server_timeout_s=timeout))

def running_children() -> list:
    return [p for p in psutil.Process().children(recursive=True)
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]

CALLS = [("revoke_permit", {"permit_id": "P0"}), ("revoke_permit", {"permit_id": "P1"}),
         ("revoke_permit", {"permit_id": "P0"}), ("get_permit", {"permit_id": "P9"}),
         ("get_permit", {"permit_id": "P1"})]


def test_calls_in_processes_answer_and_change_the_state_as_threads_do():
    "Each answer, and the state after each call (a refused call's own writes included), are the same in processes."
    seen = {}
    for calls_in in ("threads", "processes"):
        w = world(calls_in)
        seen[calls_in] = [(w.call(name, args), w.state_hash()) for name, args in CALLS]
        w.close()
    assert seen["processes"] == seen["threads"]
    assert [a["status"] for a, _ in seen["processes"]] == ["ok", "error", "error", "error", "ok"]
    assert seen["processes"][-1][0]["payload"]["touched"] is True


def test_an_sqlite_world_in_processes_answers_as_in_threads(tmp_path):
    db = tmp_path / "permits.db"
    with sqlite3.connect(db) as c:
        c.execute("CREATE TABLE permits (permit_id TEXT PRIMARY KEY, status TEXT)")
        c.executemany("INSERT INTO permits VALUES (?, ?)", [("P0", "open"), ("P1", "lapsed")])
    c.close()
    before = db.read_bytes()
    def lapse_permit(db, permit_id: str) -> dict:
        "Lapse an open permit. permit_id: such as 'P0'"
        (status,) = db.execute("SELECT status FROM permits WHERE permit_id = ?", (permit_id,)).fetchone()
        if status != "open": raise ValueError(f"{permit_id} is {status}")
        db.execute("UPDATE permits SET status = 'lapsed' WHERE permit_id = ?", (permit_id,))
        return {"permit_id": permit_id, "status": "lapsed"}
    seen = {}
    for calls_in in ("threads", "processes"):
        w = FunctionWorld([lapse_permit], db, options=WorldOptions(calls_in=calls_in))
        seen[calls_in] = [(w.call("lapse_permit", {"permit_id": p}), w.state_hash()) for p in ("P0", "P0", "P1")]
        w.close()
    assert seen["processes"] == seen["threads"] and seen["processes"][0][0]["status"] == "ok"
    assert db.read_bytes() == before                                  # the user's file, byte for byte


def test_a_call_blocked_in_c_is_killed_and_nothing_is_left_after_close():
    "A sleep that never returns answers timeout within its time, the world goes on, and close leaves no process."
    calls_before = sum(t.name == "whilelab-call" and t.is_alive() for t in threading.enumerate())  # other files'
    w = world("processes", timeout=0.5)
    t0 = time.monotonic()
    hung = [w.call("sleep_forever", {"permit_id": "P0"}) for _ in range(3)]
    took = time.monotonic() - t0
    assert [a["status"] for a in hung] == ["timeout"] * 3 and took < 3 * 0.5 + 5   # each within its time (and a fork)
    assert w.call("revoke_permit", {"permit_id": "P0"})["status"] == "ok"
    w.close()
    assert running_children() == []
    assert sum(t.name == "whilelab-call" and t.is_alive() for t in threading.enumerate()) <= calls_before


def test_a_function_that_ends_its_process_is_an_error_and_the_world_goes_on():
    w = world("processes")
    ended = w.call("end_own_process", {"permit_id": "P0"})
    said = "ProcessEnded: the process running end_own_process ended in the call"
    assert ended["payload"]["error"] == said
    assert w.call("get_permit", {"permit_id": "P0"})["status"] == "ok"
    w.close()
    assert running_children() == []


def test_rollouts_in_processes_are_the_rows_of_threads():
    "Through the rollout loop, at concurrency 8: rows byte for byte (timings aside) whichever way calls run."
    rows = {}
    for calls_in in ("threads", "processes"):
        w = FunctionWorld([get_permit, revoke_permit], permits(), options=WorldOptions(calls_in=calls_in))
        spec = AgentSpec("permits", w.tools, POLICY)
        sits = [situation_from_cell({"tool": t, "world": v, "condition": "ok"}, spec, world=w)
                for t in ("get_permit", "revoke_permit") for v in ("exists", "ineligible", "missing")]
        opts = RolloutOptions(concurrency=8)
        played = rollouts(sits, spec, ScriptedAgent(), TemplateUser(opts), k_samples=2, opts=opts, progress=False)
        rows[calls_in] = sorted(map(str, map(strip_timings, played)))
        w.close()
    assert rows["processes"] == rows["threads"] and len(rows["threads"]) == 12
    assert running_children() == []


def test_a_pickled_world_starts_processes_of_its_own():
    "A worker process's copy (pickled) plays its calls in processes of its own, with the same answers."
    w = world("processes")
    assert w.call("revoke_permit", {"permit_id": "P0"})["status"] == "ok"
    twin = pickle.loads(pickle.dumps(w))
    assert twin._processes is not w._processes and twin.state_hash() == w.state_hash()
    assert twin.call("revoke_permit", {"permit_id": "P0"}) == w.call("revoke_permit", {"permit_id": "P0"})
    twin.close(); w.close()
    assert running_children() == []


def test_calls_in_names_its_choices():
    from fastcore.test import test_fail
    test_fail(lambda: WorldOptions(calls_in="forks"), contains="must be 'threads' or 'processes', got 'forks'")


def sleeps_a_while(db, permit_id: str) -> dict:
    "Look a permit up in a register that answers after a second. permit_id: such as 'P0'"
    time.sleep(1.0)                                # in C: its thread cannot be ended until the sleep returns

def test_close_in_threads_names_the_fix_for_a_call_blocked_in_c():
    "A thread blocked in C at close is abandoned, and the warning names calls_in='processes'."
    w = FunctionWorld([sleeps_a_while], permits(), options=WorldOptions(server_timeout_s=0.2, end_grace_s=0.0))
    assert w.call("sleeps_a_while", {"permit_id": "P0"})["status"] == "timeout"
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always"); w.close()
    assert any("calls_in='processes'" in str(s.message) for s in seen)
    for t in threading.enumerate():                # it ends when its sleep does: no thread left for other files' tests
        if t.name == "whilelab-call": t.join(30)


HELD = threading.Lock()

def count_permit(db, permit_id: str) -> dict:
    "Count a permit in the register (under the register's lock). permit_id: such as 'P0'"
    with HELD: return db["permits"][permit_id]

def test_a_call_process_holds_no_lock_another_thread_had_when_it_was_forked():
    "Call processes are forked from a template made with the world, not from a busy process: no lock comes held."
    w = FunctionWorld([count_permit], permits(), options=WorldOptions(calls_in="processes", server_timeout_s=5.0))
    with HELD:                # another thread of this process holds it while the calls' processes are forked
        answers = [w.call("count_permit", {"permit_id": f"P{i}"})["status"] for i in range(3)]
    w.close()
    assert answers == ["ok"] * 3 and running_children() == []


def test_a_fork_of_a_world_of_your_own_class_is_of_that_class():
    "A fork (and a situation's copy) keeps the class you derived from FunctionWorld, and shares the call processes."
    class Register(FunctionWorld):
        def opened(self) -> int: return sum(p["status"] == "open" for p in self.state["permits"].values())
    w = Register([get_permit, revoke_permit], permits(), options=WorldOptions(calls_in="processes"))
    twin = w.fork()
    assert twin.call("revoke_permit", {"permit_id": "P0"})["status"] == "ok"
    assert (type(twin), twin.opened(), w.opened(), twin._processes is w._processes) == (Register, 2, 3, True)
    w.close()
    assert running_children() == []

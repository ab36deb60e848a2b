"""Slow and hung worlds of your own functions: do rollouts overlap, and does a call that never returns stop the run?

Two tables, through the public API (`FunctionWorld`, `situation_from_cell`, `rollouts`, the offline stand-ins):

1. Overlap. A world of 32 functions (tools), each taking 100 ms (`time.sleep(0.1)`, as a database or HTTP call
   would), one situation per tool, played at concurrency 1, 8 and 32: rollouts/s, and the speed-up over concurrency 1
   (target: >= 20x at 32). The same for `async` functions (`await asyncio.sleep(0.1)`). Rows must be byte-identical
   (timings aside) at every concurrency: the `same rows` column.
2. A function that never returns. The same 32 situations, where every function is `time.sleep(10**6)` (blocked in
   C: no line of Python runs again, so its thread cannot be ended) against one that answers at once, at
   concurrency 32 with `server_timeout_s=0.5`: rollouts/s, calls answered `timeout`, threads still blocked after the
   run (at most `max_call_threads`; past `max_stuck_calls` a function that has one gets no thread), and
   `whilelab-call` threads left after `close` (blocked ones are abandoned as daemon threads: they never hold up the
   process's exit), and the slowest row (one call each: no call outran its time-out by more).

    python bench/slow_worlds.py [--k 2] [--timeout 0.5]
"""
import argparse, asyncio, sys, threading, time, warnings
import psutil
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from whilelab.core import AgentSpec
from whilelab.defaults import RolloutOptions, WorldOptions
from whilelab.rollout import rollouts, situation_from_cell, strip_timings
from whilelab.standins import ScriptedAgent, TemplateUser
from whilelab.worlds import FunctionWorld

N_TOOLS = 32
POLICY = "Look records up only for the person who asks about them. Never share one person's records with another."

def state() -> dict:
    return {"items": {f"I{i:03d}": {"item_id": f"I{i:03d}", "name": f"Item {i}", "status": "open"} for i in range(8)}}

def make(i: int, how: str):
    "Function `i`: it waits 100 ms (`sleep`), awaits 100 ms (`async`), waits forever (`hang`) or not (`fast`)."
    if how == "async":
        async def fn(db, item_id: str) -> dict:
            await asyncio.sleep(0.1)
            return dict(db["items"][item_id])
    else:
        def fn(db, item_id: str) -> dict:
            if how == "sleep": time.sleep(0.1)
            elif how == "hang": time.sleep(10**6)                    # blocked in C code for good
            return dict(db["items"][item_id])
    fn.__name__ = fn.__qualname__ = f"look_up_item_{i:02d}"
    fn.__doc__ = f"Look an item up in register {i}. item_id: such as 'I001'"
    return fn

def world_of(how: str, timeout: float, calls_in: str = "threads") -> FunctionWorld:
    return FunctionWorld([make(i, how) for i in range(N_TOOLS)], state(), name=f"slow-{how}",
                         options=WorldOptions(server_timeout_s=timeout, calls_in=calls_in))

def play(world: FunctionWorld, k: int, concurrency: int) -> tuple:
    "(rows, seconds) of the world's situations (one per tool), `k` samples each, at `concurrency`."
    spec = AgentSpec("registers", world.tools, POLICY)
    sits = [situation_from_cell({"tool": t.name, "world": "exists", "condition": "ok"}, spec, world=world)
            for t in world.tools]
    opts = RolloutOptions(concurrency=concurrency)
    t0 = time.perf_counter()
    rows = rollouts(sits, spec, ScriptedAgent(flaw_rate=0.0), TemplateUser(opts), k_samples=k, opts=opts,
                    progress=False)
    return rows, time.perf_counter() - t0

def calls(threads) -> int: return sum(t.name == "whilelab-call" and t.is_alive() for t in threads)

def call_processes() -> int:
    "This process's children still running (call processes of `calls_in='processes'`)."
    return sum(p.is_running() and p.status() != psutil.STATUS_ZOMBIE for p in psutil.Process().children(recursive=True))

def overlap(k: int, timeout: float):
    print(f"\n1. Overlap: {N_TOOLS} functions of 100 ms, one situation each, k = {k} x concurrency / 8 "
          f"(at least {k}); "
          "rollouts/s by concurrency")
    head = (f"{'functions, calls in':18} {'conc':>4} {'rollouts':>8} {'seconds':>8} {'roll/s':>7} {'speed-up':>8} "
            f"{'calls/row':>9} {'same rows':>9}")
    print(head); print("-" * len(head))
    for how, calls_in in (("sleep", "threads"), ("async", "threads"), ("sleep", "processes")):
        base, first = None, None
        for c in (1, 8, 32):
            world = world_of(how, 30.0, calls_in)
            rows, secs = play(world, max(k, k * c // 8), c)   # more rollouts where they are quicker: steadier rates
            world.close()
            rate = len(rows) / secs
            base = base or rate
            key = [strip_timings(r) for r in rows if r["sample"] < k]     # the rows every concurrency played
            first = first or key
            n_calls = sum(len(r["calls"]) for r in rows) / len(rows)
            print(f"{how + ' ' + calls_in:18} {c:4} {len(rows):8} {secs:8.2f} {rate:7.1f} {rate / base:7.1f}x "
                  f"{n_calls:9.1f} "
                  f"{'yes' if key == first else 'NO':>9}")
    print("target: >= 20x at concurrency 32 (sleep and async); same rows: the rows of samples < k, byte for byte "
          "(timings aside), as at concurrency 1")

def hung(k: int, timeout: float):
    print(f"\n2. A function that never returns (time.sleep(10**6)), concurrency 32, server_timeout_s={timeout:g}, "
          f"max_stuck_calls={WorldOptions().max_stuck_calls}, max_call_threads={WorldOptions().max_call_threads}")
    head = (f"{'functions, calls in':18} {'rollouts':>8} {'seconds':>8} {'roll/s':>7} {'timeouts':>8} "
            f"{'slowest row':>11} {'blocked after run':>17} {'left after close':>16} {'errors':>6}")
    print(head); print("-" * len(head))
    for calls_in in ("processes", "threads"):       # processes first: the threads one leaves its blocked threads
        for how in ("fast", "hang"):
            world = world_of(how, timeout, calls_in)
            rows, secs = play(world, 2 * k, 32)
            stuck = calls(threading.enumerate()) + call_processes()
            with warnings.catch_warnings(record=True):
                warnings.simplefilter("always"); world.close()
            left = calls(threading.enumerate()) + call_processes()
            timeouts = sum(c["status"] == "timeout" for r in rows for c in r["calls"])
            slowest = max(r["timings"]["seconds"] for r in rows)       # a row of one call: that call's time
            errors = sum(r["error"] is not None for r in rows)
            print(f"{how + ' ' + calls_in:18} {len(rows):8} {secs:8.2f} {len(rows) / secs:7.1f} {timeouts:8} "
                  f"{slowest:9.2f} s {stuck:17} {left:16} {errors:6}")
    print("blocked after run: whilelab-call threads and call processes alive after the run (idle workers, and calls "
          "blocked in C); left after close: with calls_in='threads' the blocked ones, abandoned as daemon threads (at "
          "most max_call_threads), with 'processes' none (a call past its time-out is killed); slowest row: a row "
          "holds one call, so no call outran its time-out by more")

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--k", type=int, default=2,
                    help="samples per situation (default 2; concurrency c plays max(k, k*c/8) a tool)")
    ap.add_argument("--timeout", type=float, default=0.5, help="server_timeout_s of the hung world (default 0.5)")
    a = ap.parse_args()
    print(f"python {sys.version.split()[0]}, {len(__import__('os').sched_getaffinity(0))} cores")
    overlap(a.k, a.timeout)
    hung(a.k, a.timeout)

if __name__ == "__main__":
    main()

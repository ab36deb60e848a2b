"""What tests/test_openenv.py checks on each OpenEnv release, through OpenEnv's own server and client: in process on the
pinned release, and as `python tests/openenv_play.py` in a venv that holds the latest (it prints the release and `ok`
when every check held). Each check plays the plan's episodes over 127.0.0.1 and asserts what a user would see."""
import asyncio, contextlib, importlib.metadata, socket, threading, time, warnings
import requests, uvicorn
from whilelab.defaults import SimOptions
from whilelab.rl import server, SituationClient, SessionRefused, ToolAction, _ASYNC_CLIENT

OPTS = SimOptions(k_samples=1, n_phrasings=1, search=None)
START_S = 30          # how long a server may take to start on a loaded machine before the check fails


@contextlib.contextmanager
def served(sim, max_sessions: int):
    "OpenEnv's app for `sim`'s plan, served by uvicorn on 127.0.0.1 (its url); stopped on exit."
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        app = server(sim.spec, OPTS, max_sessions=max_sessions)
    with socket.socket() as s: s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="critical"))
    t = threading.Thread(target=srv.run, daemon=True)
    t.start()
    t0 = time.time()
    while not srv.started:
        assert t.is_alive() and time.time() - t0 < START_S, "the OpenEnv server did not start"
        time.sleep(0.05)
    try: yield f"http://127.0.0.1:{port}"
    finally:
        srv.should_exit = True
        t.join(10)


def turns(row):
    "The offline agent's turns of `row` as `ToolAction`s, in order."
    for m in (m for m in row["messages"] if m["role"] == "assistant"):
        for c in m.get("tool_calls") or []:
            yield ToolAction(tool=c["function"]["name"], arguments=c["function"]["arguments"], call_id=c["id"],
                             message=m["content"])
        if not m.get("tool_calls"): yield ToolAction(message=m["content"])


def broken_row(sim):
    "A rollout that called tools and broke a rule: its replay must come back graded 0 with those rules."
    return next(r for r in sim.rows if r["reward"] == 0.0 and r["calls"])


def check_client(sim, url):
    "The documented `with SituationClient(...) as env:` plays a row to its end, graded as whilelab graded it."
    row = broken_row(sim)
    with SituationClient(base_url=url) as env:
        first = env.reset(situation_id=row["situation_id"], phrasing=row["phrasing"], sample=row["sample"])
        assert first.observation.content == row["messages"][0]["content"]
        for a in turns(row): last = env.step(a)
        state = env.state()
    assert last.done and last.reward == row["reward"] == 0.0, (last.done, last.reward)
    assert last.observation.failed == [v["rule"] for v in row["rules"] if not v["passed"]]
    assert state.calls == row["calls"] and state.reward == row["reward"]


def check_async_client(sim, url):
    "On OpenEnv >= 0.3, whose client is async, `async with SituationClient(...)` plays too."
    row = broken_row(sim)
    async def play():
        async with SituationClient(base_url=url) as env:
            await env.reset(situation_id=row["situation_id"], phrasing=row["phrasing"], sample=row["sample"])
            for a in turns(row): last = await env.step(a)
            return last
    last = asyncio.run(play())
    assert last.done and last.reward == row["reward"]


def check_refused(sim):
    "A client over the session limit is refused with the reason and the fix, not dropped in silence."
    with served(sim, max_sessions=1) as url, SituationClient(base_url=url) as first:
        first.reset(seed=0)                                  # its session is open on the server
        for _ in range(3):                                   # each refusal the same, whichever side closes first
            try:
                with SituationClient(base_url=url) as second: second.reset(seed=1)
            except SessionRefused as e: msg = str(e)
            else: raise AssertionError("a second session over max_sessions=1 was not refused")
            assert "capacity" in msg and "max_sessions" in msg, msg
        assert first.step(ToolAction(message="Hello, how can I help?")).observation.role == "user"   # it still plays


def check_http(sim, url):
    """OpenEnv's HTTP routes: `/step` with no episode answers 409 with the fix (not 500); `/reset` with an episode_id
    then `/step` with it plays the row to its graded end; an unknown situation answers 422 naming the field."""
    row = broken_row(sim)
    r = requests.post(f"{url}/step", json={"action": {"message": "hi"}}, timeout=60)
    assert r.status_code == 409 and "episode_id" in r.json()["detail"], (r.status_code, r.text)
    r = requests.post(f"{url}/reset", json={"situation_id": "s-nope"}, timeout=60)
    assert r.status_code == 422 and "situation_id" in r.json()["detail"], (r.status_code, r.text)
    eid = f"http-{row['situation_id']}"
    r = requests.post(f"{url}/reset", json={"episode_id": eid, "situation_id": row["situation_id"],
                                            "phrasing": row["phrasing"], "sample": row["sample"]}, timeout=60)
    assert r.status_code == 200 and r.json()["observation"]["content"] == row["messages"][0]["content"], r.text
    for a in turns(row):
        r = requests.post(f"{url}/step", json={"action": a.model_dump(exclude={"metadata"}), "episode_id": eid},
                          timeout=60)
        assert r.status_code == 200, (r.status_code, r.text)
    last = r.json()
    assert last["done"] and last["reward"] == row["reward"], last
    assert last["observation"]["failed"] == [v["rule"] for v in row["rules"] if not v["passed"]]
    r = requests.post(f"{url}/step", json={"action": {"message": "hi"}, "episode_id": eid}, timeout=60)
    assert r.status_code == 409 and eid in r.json()["detail"], (r.status_code, r.text)   # that episode is over


def check_all(sim) -> list:
    "Every check on this OpenEnv release; the names of those run."
    with served(sim, max_sessions=2) as url:
        check_client(sim, url)
        check_http(sim, url)
        if _ASYNC_CLIENT: check_async_client(sim, url)
    check_refused(sim)
    return ["client", "http", "refused"] + (["async client"] if _ASYNC_CLIENT else [])


if __name__ == "__main__":
    from whilelab.simulate import simulate
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sim = simulate(options=OPTS, progress=False)
    done = check_all(sim)
    print("openenv-core", importlib.metadata.version("openenv-core"), "ok:", ", ".join(done))

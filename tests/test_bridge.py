"""Framework agents with their own tool loop, through the bridge, offline: the OpenAI Agents SDK and LangGraph (with
langchain-openai), each with its model at a local OpenAI-compatible server (tests/wire.py's `Strict`, which refuses
what the real API refuses) whose replies are the offline stand-in's next step over the tools each request lists. A full
`simulate()` with the default search delivers every deliverable pair, faults fire inside the framework's loop, and the
same seed gives the same rows."""
import asyncio, warnings, pytest
from whilelab.bridge import bridge, serve_standin, StandinModel, to_items, BridgeOptions
from whilelab.core import shopfront, stable_hash, validate_row
from whilelab.rollout import rollouts, situation_from_cell, strip_timings
from whilelab.standins import TemplateUser
from whilelab.simulate import simulate
from whilelab.defaults import SimOptions
from whilelab.axes import default_axes
from whilelab.cover import covering_array
from wire import Strict, serve

agents = pytest.importorskip("agents", reason="needs whilelab[agents]")
pytest.importorskip("langgraph", reason="needs whilelab[langgraph]")
SPEC = shopfront()


def openai_agents_support(url, policy):
    from openai import AsyncOpenAI
    agents.set_tracing_disabled(True)

    @bridge(family="openai-agents")
    async def support(messages, tools):
        async with AsyncOpenAI(base_url=url, api_key="offline", max_retries=0) as client:
            agent = agents.Agent(name="support", instructions=policy, tools=[agents.function_tool(f) for f in tools],
                                 model=agents.OpenAIChatCompletionsModel("standin", client))
            return (await agents.Runner.run(agent, to_items(messages), max_turns=20)).final_output
    return support


def langgraph_support(url, policy):
    import httpx
    from langchain_openai import ChatOpenAI
    from langchain_core.tools import tool as lc_tool
    from langgraph.graph import StateGraph, MessagesState, START
    from langgraph.prebuilt import ToolNode, tools_condition

    @bridge(family="langgraph")
    async def support(messages, tools):
        lc_tools = [lc_tool(f) for f in tools]
        async with httpx.AsyncClient() as http:
            model = ChatOpenAI(model="standin", base_url=url, api_key="offline", max_retries=0,
                               http_async_client=http).bind_tools(lc_tools)
            async def think(state): return {"messages": [await model.ainvoke(state["messages"])]}
            g = StateGraph(MessagesState)
            g.add_node("model", think); g.add_node("tools", ToolNode(lc_tools))
            g.add_edge(START, "model"); g.add_conditional_edges("model", tools_condition); g.add_edge("tools", "model")
            out = await g.compile().ainvoke({"messages": [{"role": "system", "content": policy}, *messages]})
            return out["messages"][-1].content
    return support


FRAMEWORKS = {"openai-agents": openai_agents_support, "langgraph": langgraph_support}


class Served:
    "The stand-in model behind tests/wire.py's strict chat-completions server: a request the real API refuses fails."
    def __init__(self, spec):
        self.model = StandinModel(spec.tools)
        self.strict = Strict(lambda body: self.model.reply(body))
    def __enter__(self):
        self._cm = serve(self.strict)
        return self._cm.__enter__() + "/v1"
    def __exit__(self, *a):
        self._cm.__exit__(*a)
        assert self.strict.refused == [], self.strict.refused[:3]


def search_axes():
    "The example's axes kept to three tools, two stances, three conditions: a whole search in CI's time (the chapter plays"
    " them all)."
    from whilelab.axes import agent_axes
    axes = agent_axes(SPEC)
    return (axes.restrict("tool", ["get_order", "cancel_order", "refund_order"])
            .restrict("stance", ["cooperative", "impatient"]).restrict("condition", ["ok", "timeout", "denied"]))


@pytest.mark.parametrize("name", FRAMEWORKS)
def test_full_search_delivers_every_pair_through_the_framework(name):
    served = Served(SPEC)
    with served as url, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sim = simulate(FRAMEWORKS[name](url, SPEC.policy), axes=search_axes(), progress=False,
                       options=SimOptions(n_phrasings=1, k_samples=1))    # the default search, one draw per situation
    s = sim.summary()
    assert s["delivered_fraction"] == 1.0 and s["undelivered_pairs"] == 0, s
    assert s["errors"] == 0 and s["rollouts"] > 50
    for r in sim.rows: validate_row(r)
    assert {r["agent_family"] for r in sim.rows} == {name}
    # every call the framework made went through the world: one recorded call per tool answer in the conversation
    assert all(len(r["calls"]) == sum(m["role"] == "tool" for m in r["messages"]) for r in sim.rows)
    # faults fired inside the framework's own loop, and the framework's model saw the fault's answer and went on
    faulted = [r for r in sim.rows if r["faults"]]
    assert len(faulted) > 10 and {f["fault"] for r in faulted for f in r["faults"]} >= {"timeout", "denied"}
    assert any(r["calls"][-1]["status"] == "ok" and any(c["status"] == "timeout" for c in r["calls"]) for r in faulted)
    # the framework's requests really went to the model, with the tool list it built from the callables
    assert served.model.requests > len(sim.rows)
    assert any({t["function"]["name"] for t in b.get("tools", [])} == {t.api_name for t in SPEC.tools}
               for b in served.strict.calls)


def _sample_situations(every=8):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plan = covering_array(default_axes(SPEC.tools, SPEC.policy), seed=0)
    cells = [{a: str(plan[a].values[i]) for a in plan.data_vars} for i in range(0, plan.sizes["cell"], every)]
    return [situation_from_cell(c, SPEC, seed=0) for c in cells]


@pytest.mark.parametrize("name", FRAMEWORKS)
def test_same_seed_same_rows(name):
    sits = _sample_situations()
    def once():
        with Served(SPEC) as url:
            return rollouts(sits, SPEC, FRAMEWORKS[name](url, SPEC.policy), TemplateUser(), progress=False)
    a, b = once(), once()
    assert len(a) == len(sits) and [strip_timings(r) for r in a] == [strip_timings(r) for r in b]
    assert sum(bool(r["faults"]) for r in a) > 0


def test_both_frameworks_make_the_stand_ins_calls():
    "The row is the agent's behaviour: the same model behind either loop (or none) makes the same calls."
    from whilelab.standins import ScriptedAgent
    sits = _sample_situations(every=16)
    direct = rollouts(sits, SPEC, ScriptedAgent(flaw_rate=0), TemplateUser(), progress=False)
    with Served(SPEC) as url:
        via = {n: rollouts(sits, SPEC, make(url, SPEC.policy), TemplateUser(), progress=False)
               for n, make in FRAMEWORKS.items()}
    calls = lambda rows: [[(c["tool"], c["status"]) for c in r["calls"]] for r in rows]
    assert calls(via["openai-agents"]) == calls(via["langgraph"]) == calls(direct)


def test_calls_made_together_are_one_turn_in_order():
    @bridge
    async def both(messages, tools):
        got = await asyncio.gather(tools.by_name("list_orders")("C1"), tools.by_name("get_order")("#W1"),
                                   tools.by_name("find_customer")("a@b.test"))
        return f"{len(got)} answers"
    sit = _sample_situations()[0]
    row = rollouts([sit], SPEC, both, TemplateUser(), progress=False)[0]
    turns = [[c["function"]["name"] for c in m["tool_calls"]] for m in row["messages"] if m.get("tool_calls")]
    assert turns == [["list_orders", "get_order", "find_customer"]]
    assert [c["tool"] for c in row["calls"]] == ["list_orders", "get_order", "find_customer"]
    assert row["messages"][-1]["content"] == "3 answers"


def test_a_sync_framework_gets_plain_functions_in_its_own_thread():
    @bridge
    def plain(messages, tools):
        assert not asyncio.iscoroutinefunction(tools[0])
        return tools.by_name("find_customer")(email="nobody@example.com")
    row = rollouts([_sample_situations()[0]], SPEC, plain, TemplateUser(), progress=False)[0]
    assert row["error"] is None and [c["tool"] for c in row["calls"]] == ["find_customer"]


def test_bad_runs_are_clear_errors_on_the_row():
    sit = _sample_situations()[0]
    @bridge
    async def number(messages, tools): return 42
    @bridge
    async def blocks(messages, tools): return tools.sync[0](email="a@b.test")
    r1, r2 = (rollouts([sit], SPEC, a, TemplateUser(), progress=False)[0] for a in (number, blocks))
    assert "final_output" in r1["error"] and "async tools" in r2["error"]
    with pytest.raises(TypeError, match="run\\(messages, tools\\)"): bridge("not a function")
    with pytest.raises(TypeError, match="BridgeOptions"): BridgeOptions(settle=3)

"""Framework agents with their own tool loop, through the bridge, offline: the OpenAI Agents SDK and LangGraph (with
langchain-openai), each with its model at a local OpenAI-compatible server (tests/wire.py's `Strict`, which refuses
what the real API refuses) whose replies are the offline stand-in's next step over the tools each request lists. A full
`simulate()` with the default search delivers every deliverable pair, faults fire inside the framework's loop, and the
same seed gives the same rows. The SDK agent also takes its tools over MCP (the bridge's streamable-HTTP server, one
per turn, gone with it); the usage a framework's model reports reaches rows and spend limits; nested parameters of real
tool sets build strict schemas (or say why not) and reach the world intact."""
import asyncio, json, warnings, importlib.util, psutil, pytest
from pathlib import Path
from whilelab.bridge import bridge, serve_standin, StandinModel, to_items, BridgeOptions, Toolbox, usage_of
from whilelab.core import AgentSpec, shared_data, tools as as_tools
from whilelab.defaults import RolloutOptions
from whilelab.core import shopfront, stable_hash, validate_row
from whilelab.rollout import rollouts, situation_from_cell, strip_timings
from whilelab.standins import TemplateUser
from whilelab.simulate import simulate
from whilelab.defaults import SimOptions
from whilelab.axes import default_axes
from whilelab.cover import covering_array
from wire import Strict, serve, strict_schema_problem

agents = pytest.importorskip("agents", reason="needs whilelab[agents]")
agents.set_tracing_disabled(True)      # else the SDK sends its traces to OpenAI
pytest.importorskip("langgraph", reason="needs whilelab[langgraph]")
SPEC = shopfront()


def openai_agents_support(url, policy):
    from openai import AsyncOpenAI
    agents.set_tracing_disabled(True)

    @bridge(family="openai-agents")
    async def support(messages, tools):
        async with AsyncOpenAI(base_url=url, api_key="offline", max_retries=0) as client:
            agent = agents.Agent(name="support", instructions=policy, tools=tools.function_tools(),
                                 model=agents.OpenAIChatCompletionsModel("standin", client))
            return await agents.Runner.run(agent, to_items(messages), max_turns=20)     # the text and the usage
    return support


SERVED_AT = []     # every MCP server a bridged turn was given, to check none is left
SHARED = []        # a server a turn was given while another turn still held it
_HELD = set()


def openai_agents_mcp_support(url, policy, prices=None):
    from openai import AsyncOpenAI
    agents.set_tracing_disabled(True)

    @bridge(family="openai-agents", mcp=True, **({"prices": prices} if prices else {}))
    async def support(messages, tools):
        SERVED_AT.append(tools.mcp_url)
        if tools.mcp_url in _HELD: SHARED.append(tools.mcp_url)
        _HELD.add(tools.mcp_url)
        try:
            async with (agents.mcp.MCPServerStreamableHttp({"url": tools.mcp_url}, cache_tools_list=True) as server,
                        AsyncOpenAI(base_url=url, api_key="offline", max_retries=0) as client):
                agent = agents.Agent(name="support", instructions=policy, mcp_servers=[server],
                                     model=agents.OpenAIChatCompletionsModel("standin", client))
                return await agents.Runner.run(agent, to_items(messages), max_turns=20)
        finally: _HELD.discard(tools.mcp_url)
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
            return out
    return support


FRAMEWORKS = {"openai-agents": openai_agents_support, "langgraph": langgraph_support,
              "openai-agents+mcp": openai_agents_mcp_support}


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
    assert {r["agent_family"] for r in sim.rows} == {name.split("+")[0]}
    assert s["usage"]["agent"]["input_tokens"] > 0 and s["usage"]["agent"]["calls"] > len(sim.rows)   # the model's
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
    assert calls(via["openai-agents"]) == calls(via["langgraph"]) == calls(via["openai-agents+mcp"]) == calls(direct)
    # over MCP or through the callables, the SDK's agent has the same conversation, byte for byte
    assert [r["messages"] for r in via["openai-agents+mcp"]] == [r["messages"] for r in via["openai-agents"]]


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


# ---- the bridge as an MCP server -----------------------------------------------------------------------------------

@pytest.mark.parametrize("concurrency", [1, 8])
def test_mcp_rows_are_the_same_at_any_concurrency_and_no_server_is_left(concurrency):
    sits = _sample_situations(every=6)
    SERVED_AT.clear(); SHARED.clear()
    with Served(SPEC) as url:
        rows = rollouts(sits, SPEC, openai_agents_mcp_support(url, SPEC.policy), TemplateUser(), progress=False,
                        opts=RolloutOptions(concurrency=concurrency))
    with Served(SPEC) as url:
        once = rollouts(sits, SPEC, openai_agents_mcp_support(url, SPEC.policy), TemplateUser(), progress=False,
                        opts=RolloutOptions(concurrency=1))
    assert all(r["error"] is None for r in rows) and sum(bool(r["faults"]) for r in rows) > 0
    assert [strip_timings(r) for r in rows] == [strip_timings(r) for r in once]
    # one server per framework turn, never one another turn still holds, every one closed. A port the OS hands out
    # again once its server has closed is not a shared server; and only this process's own sockets are looked at, as
    # another process may by now listen on a port one of ours had.
    assert len(SERVED_AT) >= len(sits) * 2 and SHARED == []
    ports = {int(u.split(":")[2].split("/")[0]) for u in SERVED_AT}
    assert [c for c in psutil.Process().net_connections("tcp")
            if c.status == psutil.CONN_LISTEN and c.laddr.port in ports] == []


def test_mcp_lists_the_schemas_whilelab_holds_and_calls_reach_the_world():
    "tools/list over HTTP gives each tool's JSON Schema as whilelab holds it; an unknown name goes to the world."
    from whilelab.bridge import mcp_server, serve_mcp_http
    got = []
    async def ask(name, args):
        got.append((name, args)); return json.dumps({"ok": name})
    async def talk():
        async with serve_mcp_http(mcp_server(SPEC.tools, ask)) as url:
            async with agents.mcp.MCPServerStreamableHttp({"url": url}) as s:
                listed = await s.list_tools()
                said = await s.call_tool("cancel_order", {"order_id": "#W1", "reason": "ordered by mistake"})
                await s.call_tool("no_such_tool", {})
        return listed, said
    listed, said = asyncio.run(talk())
    assert [(t.name, t.inputSchema if hasattr(t, "inputSchema") else t.input_schema) for t in listed] == \
        [(t.api_name, t.input_schema) for t in SPEC.tools]
    assert said.content[0].text == '{"ok": "cancel_order"}'
    assert got == [("cancel_order", {"order_id": "#W1", "reason": "ordered by mistake"}), ("no_such_tool", {})]


# ---- the usage a framework's model reports -------------------------------------------------------------------------

def test_framework_usage_reaches_rows_and_spend_limits_stop_a_bridged_run():
    sits = _sample_situations(every=4)
    with Served(SPEC) as url:
        free = rollouts(sits, SPEC, openai_agents_support(url, SPEC.policy), TemplateUser(), progress=False,
                        opts=RolloutOptions(concurrency=1))
    u = [r["usage"]["agent"] for r in free]
    assert all(x["input_tokens"] > 0 and x["output_tokens"] > 0 and x["calls"] >= 1 for x in u)
    assert all(x["cost_usd"] is None for x in u)          # "standin" has no known price: unknown, never 0
    spent = sum(x["input_tokens"] + x["output_tokens"] for x in u)
    limit = spent // 4
    with Served(SPEC) as url, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stopped = rollouts(sits, SPEC, openai_agents_support(url, SPEC.policy), TemplateUser(), progress=False,
                           opts=RolloutOptions(concurrency=1, max_tokens_total=limit))
    assert "token limit" in stopped.stopped and 0 < len(stopped) < len(sits)
    # priced: a bridge given the model's price counts dollars, and a dollar limit stops it too (over MCP here)
    price = {"standin": (2.0, 8.0)}
    with Served(SPEC) as url, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        paid = rollouts(sits, SPEC, openai_agents_mcp_support(url, SPEC.policy, prices=price), TemplateUser(),
                        progress=False, opts=RolloutOptions(concurrency=1, max_cost_usd=0.01))
    assert all(r["usage"]["agent"]["cost_usd"] > 0 for r in paid)
    assert "spend limit" in paid.stopped and 0 < len(paid) < len(sits)


def test_usage_of_reads_each_frameworks_result():
    from langchain_core.messages import AIMessage
    said = [AIMessage("", usage_metadata={"input_tokens": 900, "output_tokens": 40, "total_tokens": 940},
                      response_metadata={"model_name": "gpt-4.1"}),
            AIMessage("ok", usage_metadata={"input_tokens": 1000, "output_tokens": 10, "total_tokens": 1010,
                                             "input_token_details": {"cache_read": 800}},
                      response_metadata={"model_name": "gpt-4.1"})]
    u = usage_of({"messages": said}, prices={"gpt-4.1": {"input": 2.0, "output": 8.0, "cached_input": 0.5}})
    assert (u["calls"], u["input_tokens"], u["output_tokens"], u["cache_read_tokens"]) == (2, 1100, 50, 800)
    assert u["cost_usd"] == pytest.approx((1100 * 2.0 + 50 * 8.0 + 800 * 0.5) / 1e6)
    assert usage_of({"messages": [{"role": "user", "content": "hi"}]}) is None and usage_of("text") is None


# ---- strict schemas with nested parameters, on real tool sets ------------------------------------------------------

TAU = shared_data("tau_bench_domains.json", __file__)
_rt = importlib.util.spec_from_file_location("real_tools",
                                             Path(__file__).resolve().parents[1] / "bench" / "real_tools.py")
real_tools = importlib.util.module_from_spec(_rt); _rt.loader.exec_module(real_tools)


@pytest.mark.skipif(TAU is None, reason="../shared/data/tau_bench_domains.json not found beside the project")
def test_strict_nested_schemas_reach_the_world_intact_tau_bench_airline():
    """tau-bench's airline tools (lists of nested objects: flights, passengers, payments) as the SDK's strict function
    tools: they build, a server that refuses what OpenAI refuses takes them, and the nested values the model sends
    reach the world as it sent them -- the same calls as the stand-in makes with no framework at all."""
    d = json.loads(TAU.read_text())["airline"]
    spec = AgentSpec("airline", as_tools(d["tools"]), d["policy"])
    nested = ["book_reservation", "update_reservation_passengers", "update_reservation_flights"]
    from whilelab.standins import ScriptedAgent
    from openai import AsyncOpenAI
    @bridge(family="openai-agents")
    async def strict_agent(messages, tools):
        made = tools.function_tools()          # strict
        assert all(t.strict_json_schema for t in made)
        async with AsyncOpenAI(base_url=URL[0], api_key="offline", max_retries=0) as client:
            agent = agents.Agent(name="airline", instructions=spec.policy, tools=made,
                                 model=agents.OpenAIChatCompletionsModel("standin", client))
            return await agents.Runner.run(agent, to_items(messages), max_turns=20)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plan = covering_array(default_axes(spec.tools, spec.policy).restrict("tool", nested), seed=0)
    sits = [situation_from_cell({a: str(plan[a].values[i]) for a in plan.data_vars}, spec, seed=0)
            for i in range(0, plan.sizes["cell"], 3)]
    direct = rollouts(sits, spec, ScriptedAgent(flaw_rate=0), TemplateUser(), progress=False)
    served, URL = Served(spec), []
    with served as url:
        URL.append(url)
        via = rollouts(sits, spec, strict_agent, TemplateUser(), progress=False)
    assert all(r["error"] is None for r in via)
    strict_lists = [b["tools"] for b in served.strict.calls if b.get("tools")]
    assert strict_lists and all(t["function"].get("strict") for ts in strict_lists for t in ts)
    assert all(strict_schema_problem(t["function"]["parameters"]) is None for ts in strict_lists for t in ts)
    args = lambda rows: [[(c["function"]["name"], c["function"]["arguments"]) for m in r["messages"]
                          for c in m.get("tool_calls") or []] for r in rows]
    assert args(via) == args(direct)
    deep = [a for r in args(via) for n, a in r if n in nested and any(isinstance(v, list) and v and
                                                                     isinstance(v[0], dict) for v in a.values())]
    assert len(deep) > 10, "nested objects reached the world"


def test_notion_shaped_free_form_dicts_are_a_clear_error_or_not_strict():
    "Notion-API-shaped tools (bench/real_tools.py): nested objects, free-form dicts, optional fields."
    (_, _, tools, _), *_ = real_tools.notion_api()
    got = []
    async def ask(name, args):
        got.append((name, args)); return "{}"
    box = Toolbox(as_tools(tools), ask, lambda n, a: "{}")
    with pytest.raises(ValueError, match=r"tool 'create_page': parameter 'properties' is a free-form object.*"
                                         r"strict=False"):
        box.function_tools()
    made = {t.name: t for t in box.function_tools(strict=None)}
    assert not made["create_page"].strict_json_schema and made["search"].strict_json_schema
    assert made["create_comment"].strict_json_schema           # a nested parent and rich text: strict
    assert strict_schema_problem(made["search"].params_json_schema) is None
    # a strict call: every key given, the unset ones as null; the world gets the nested values, the nulls left out
    from agents.tool_context import ToolContext
    sent = {"query": "roadmap", "filter": {"value": "page", "property": "object"},
            "sort": {"direction": "descending", "timestamp": None}, "start_cursor": None, "page_size": None}
    ctx = ToolContext(context=None, tool_name="search", tool_call_id="c1", tool_arguments=json.dumps(sent))
    asyncio.run(made["search"].on_invoke_tool(ctx, json.dumps(sent)))
    assert got[-1] == ("search", {"query": "roadmap", "filter": {"value": "page", "property": "object"},
                                  "sort": {"direction": "descending"}})
    # non-strict, a free-form dict goes through as it is
    page = {"parent": {"type": "page_id", "page_id": "0b5c2f6e-1f4e-4a3c-9c1e-2f1d3b4a5c6d"},
            "properties": {"title": [{"text": {"content": "Q3"}}]}}
    ctx = ToolContext(context=None, tool_name="create_page", tool_call_id="c2", tool_arguments=json.dumps(page))
    asyncio.run(made["create_page"].on_invoke_tool(ctx, json.dumps(page)))
    assert got[-1] == ("create_page", page)


# Faults the frameworks feel: BridgeOptions(faults=...) raises a planned fault in the framework's tool call (or waits a
# time-out out first), so the agent's own error handling answers its model. One cancellation whose first call times
# out, played through each real framework against the stand-in model; what the model was sent shows whose path ran.
TIMEOUT_CELL = {"tool": "cancel_order", "world": "exists", "condition": "timeout", "stance": "cooperative"}


def faulted_rollout(make_agent):
    "The row of the timed-out cancellation and the tool messages the framework sent its model, in order."
    served = Served(SPEC)
    with served as url:
        row = rollouts([situation_from_cell(TIMEOUT_CELL, SPEC, seed=0)], SPEC, make_agent(url), TemplateUser(),
                       progress=False)[0]
    told = [m["content"] for b in served.strict.calls for m in b["messages"] if m["role"] == "tool"]
    return row, list(dict.fromkeys(told))        # each tool message once, in the order the model first saw it


def sdk_agent(opts, timeout_s=None):
    from openai import AsyncOpenAI
    def make(url):
        @bridge(family="openai-agents", opts=opts)
        async def support(messages, tools):
            async with AsyncOpenAI(base_url=url, api_key="offline", max_retries=0) as client:
                agent = agents.Agent(name="support", instructions=SPEC.policy,
                                     tools=tools.function_tools(timeout_s=timeout_s),
                                     model=agents.OpenAIChatCompletionsModel("standin", client))
                return await agents.Runner.run(agent, to_items(messages), max_turns=20)
        return support
    return make


def graph_agent(opts, handled: bool, statuses: list = None):
    """LangGraph's canonical loop; `handled`: its tools handle a `ToolException` (LangChain's `handle_tool_error`).
    `statuses` gets the status of each tool message of its final states ('error' where a tool error was handled)."""
    import httpx
    from langchain_openai import ChatOpenAI
    from langchain_core.tools import tool as lc_tool
    from langgraph.graph import StateGraph, MessagesState, START
    from langgraph.prebuilt import ToolNode, tools_condition
    def make(url):
        @bridge(family="langgraph", opts=opts)
        async def support(messages, tools):
            lc_tools = [lc_tool(f) for f in tools]
            for t in lc_tools: t.handle_tool_error = handled
            async with httpx.AsyncClient() as http:
                model = ChatOpenAI(model="standin", base_url=url, api_key="offline", max_retries=0,
                                   http_async_client=http).bind_tools(lc_tools)
                async def think(state): return {"messages": [await model.ainvoke(state["messages"])]}
                g = StateGraph(MessagesState)
                g.add_node("model", think); g.add_node("tools", ToolNode(lc_tools))
                g.add_edge(START, "model"); g.add_conditional_edges("model", tools_condition)
                g.add_edge("tools", "model")
                out = await g.compile().ainvoke({"messages": [{"role": "system", "content": SPEC.policy}, *messages]})
                if statuses is not None: statuses.extend(m.status for m in out["messages"] if m.type == "tool")
                return out
        return support
    return make


TIMED_OUT = '{"error":"the call timed out after 30 s"}'       # the world's answer to the planted time-out


def test_by_default_a_fault_reaches_the_framework_as_the_tools_result():
    row, told = faulted_rollout(sdk_agent(BridgeOptions()))
    assert [c["status"] for c in row["calls"]] == ["ok", "timeout", "ok"] and row["error"] is None
    assert TIMED_OUT in told and not any("error occurred" in t for t in told)


def test_raised_faults_take_the_agents_sdk_error_path_and_its_agent_retries():
    row, told = faulted_rollout(sdk_agent(BridgeOptions(faults="raise")))
    # the SDK caught the tool's exception and told its model its own failure text, not the world's answer
    assert "An error occurred while running the tool. Please try again." in told and TIMED_OUT not in told, told
    assert [c["status"] for c in row["calls"]] == ["ok", "timeout", "ok"] and row["error"] is None    # it retried
    assert row["state_hash_after"] == row["reference_hash"]         # and the cancellation went through
    assert TIMED_OUT in [m["content"] for m in row["messages"] if m["role"] == "tool"]   # the row keeps the world's


def test_a_delayed_timeout_takes_the_agents_sdk_own_time_out_path():
    # the SDK's time-out (0.05 s) is shorter than the bridge's wait (5 s): the SDK's timer is the one that fires
    row, told = faulted_rollout(sdk_agent(BridgeOptions(faults="delay", fault_delay_s=5.0), timeout_s=0.05))
    assert "Tool 'cancel_order' timed out after 0.05 seconds." in told, told
    assert [c["status"] for c in row["calls"]] == ["ok", "timeout", "ok"] and row["error"] is None


def test_raised_faults_are_langchain_tool_exceptions_handled_or_not_as_the_agent_chose():
    statuses = []
    row, told = faulted_rollout(graph_agent(BridgeOptions(faults="raise"), handled=True, statuses=statuses))
    assert "error" in statuses, statuses          # LangChain handled the ToolException: an error ToolMessage
    assert [c["status"] for c in row["calls"]] == ["ok", "timeout", "ok"] and row["error"] is None
    statuses = []
    faulted_rollout(graph_agent(BridgeOptions(), handled=True, statuses=statuses))
    assert statuses and "error" not in statuses, statuses       # by default the fault is the tool's result
    # an agent that does not handle tool errors fails on it, as it would on a real tool's error
    row, _ = faulted_rollout(graph_agent(BridgeOptions(faults="raise"), handled=False))
    assert row["error"] and "UnhandledFault" in row["error"] and "ToolTimeout" in row["error"], row["error"]
    assert [c["status"] for c in row["calls"]] == ["ok", "timeout"]         # no retry of the agent's own failure


def test_a_delayed_timeout_in_langgraph_waits_then_raises_a_timeout_error():
    row, told = faulted_rollout(graph_agent(BridgeOptions(faults="delay", fault_delay_s=0.2), handled=False))
    assert row["error"] and "ToolTimeout" in row["error"], row["error"]        # a TimeoutError the graph did not catch
    assert "UnhandledFault" in row["error"]
    row, told = faulted_rollout(graph_agent(BridgeOptions(faults="delay", fault_delay_s=0.2), handled=True))
    assert [c["status"] for c in row["calls"]] == ["ok", "timeout", "ok"] and row["error"] is None


def test_fault_options_refuse_a_mode_they_do_not_know():
    with pytest.raises(ValueError, match=r"BridgeOptions.faults must be one of .* Fix"): BridgeOptions(faults="throw")

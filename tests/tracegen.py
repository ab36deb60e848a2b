"""Production traces made with the real instrumentation libraries, offline: a scripted model behind tests/wire.py's
strict chat-completions server, driven through the real OpenAI SDK (instrumented by the official OpenTelemetry
openai-v2 package, in its legacy event mode and its latest attribute mode, or by Traceloop's OpenLLMetry), the OpenAI
Agents SDK (OpenInference) and LangGraph/LangChain (OpenInference). Spans go to the SDK's in-memory exporter and are
written as the OTLP exporters encode them: OTLP/JSON (hex ids, as the collector's file exporter writes) or protobuf.

`script(n)` is what happened, known in advance: conversations of 1-3 person turns, each turn 0-3 tool calls (some
parallel), some calls failing on purpose (raised in the tool, as a production tool fails). A reader of the traces
should find every conversation, every call with its declared argument names, and every failure."""

import asyncio, base64, contextlib, functools, json, os, random
from wire import Strict, serve, chat

# the tools every framework declares; `get_order` takes one argument, which LangChain's tracing renames `input`
TOOLS = {"find_customer": {"email": "string"}, "get_order": {"order_id": "string"},
         "cancel_order": {"order_id": "string", "reason": "string"},
         "refund_order": {"order_id": "string", "amount": "number"}}
FAULTS = {"timeout": (TimeoutError, "upstream timed out"), "denied": (PermissionError, "permission denied"),
          "rate_limited": (RuntimeError, "429 too many requests")}


def script(n=60, seed=0):
    """n conversations: [{"id", "turns": [{"user", "rounds": [[(call_id, tool, args, fault|None)]], "reply"}]}]."""
    rng, out = random.Random(seed), []
    for c in range(n):
        turns = []
        for t in range(rng.choice([1, 1, 2, 2, 3])):
            rounds = []
            for r in range(rng.choice([0, 1, 1, 2])):
                calls = []
                for k in range(2 if rng.random() < 0.15 else 1):
                    tool = rng.choice(sorted(TOOLS))
                    args = {p: (round(rng.uniform(1, 90), 2) if ty == "number" else
                                f"#W{rng.randrange(10**6):06d}" if p == "order_id" else
                                f"u{rng.randrange(999)}@shop.test" if p == "email" else "ordered by mistake")
                            for p, ty in TOOLS[tool].items()}
                    fault = rng.choice(sorted(FAULTS)) if rng.random() < 0.2 else None
                    calls.append((f"call_{c}_{t}_{r}_{k}", tool, args, fault))
                rounds.append(calls)
            turns.append({"user": f"[c{c} t{t}] " + rng.choice(["where is my order", "please cancel it", "refund me",
                                                                   "yes", "thanks"]),
                          "rounds": rounds, "reply": f"done with c{c} t{t}"})
        out.append({"id": f"conv-{c:03d}", "turns": turns})
    return out


def calls_of(conv):
    "(tool, args, fault) of every call of a conversation, in order."
    return [(tool, args, fault) for t in conv["turns"] for r in t["rounds"] for _, tool, args, fault in r]


def run_tool(tool, args, conv):
    "What the tool does: a small record, or the planned failure raised."
    for t in conv["turns"]:
        for r in t["rounds"]:
            for _, name, a, fault in r:
                if name == tool and a == args and fault:
                    exc, msg = FAULTS[fault]
                    raise exc(msg)
    return json.dumps({"ok": True, "tool": tool, **args})


class Model:
    "The scripted model: reads where a conversation is from the request and answers the next step."

    def __init__(self, convs):
        self.turns = {t["user"]: t for c in convs for t in c["turns"]}

    def reply(self, body, path=None):
        msgs = body["messages"]
        last_user = max(i for i, m in enumerate(msgs) if m["role"] == "user")
        text = msgs[last_user]["content"]
        text = text if isinstance(text, str) else " ".join(p.get("text", "") for p in text)
        turn = self.turns[text]
        done = sum(1 for m in msgs[last_user:] if m["role"] == "assistant" and m.get("tool_calls"))
        if done < len(turn["rounds"]):
            return chat(None, [{"id": cid, "type": "function",
                                "function": {"name": tool, "arguments": json.dumps(args)}}
                               for cid, tool, args, _ in turn["rounds"][done]])
        return chat(turn["reply"])


def tool_schemas():
    return [{"type": "function", "function": {"name": n, "description": f"{n.replace('_', ' ')}", "parameters": {
        "type": "object", "properties": {p: {"type": t} for p, t in ps.items()}, "required": list(ps)}}}
        for n, ps in TOOLS.items()]


@contextlib.contextmanager
def _env(**kv):
    old = {k: os.environ.get(k) for k in kv}
    os.environ.update(kv)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _providers():
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor, InMemoryLogRecordExporter
    spans, logs = InMemorySpanExporter(), InMemoryLogRecordExporter()
    tp, lp = TracerProvider(), LoggerProvider()
    tp.add_span_processor(SimpleSpanProcessor(spans))
    lp.add_log_record_processor(SimpleLogRecordProcessor(logs))
    return tp, lp, spans, logs


def _openai_loop(convs, url, tracer, conv_attr):
    "An app on the plain OpenAI SDK: its own tool loop, each person turn in a span of the app's own."
    from openai import OpenAI
    client = OpenAI(base_url=url, api_key="offline", max_retries=0)
    for conv in convs:
        history = []
        for turn in conv["turns"]:
            with tracer.start_as_current_span("handle_turn", attributes={conv_attr: conv["id"]}):
                history.append({"role": "user", "content": turn["user"]})
                while True:
                    r = client.chat.completions.create(model="gpt-4o-mini", messages=history, tools=tool_schemas())
                    m = r.choices[0].message
                    if not m.tool_calls:
                        history.append({"role": "assistant", "content": m.content})
                        break
                    history.append(m.model_dump(exclude_none=True))
                    for tc in m.tool_calls:
                        try:
                            out = run_tool(tc.function.name, json.loads(tc.function.arguments), conv)
                        except Exception as e:
                            out = json.dumps({"error": f"{type(e).__name__}: {e}"})
                        history.append({"role": "tool", "tool_call_id": tc.id, "content": out})
    client.close()


def openai_v2(convs, mode="span_only"):
    """The official openai-v2 instrumentation (latest GenAI conventions), message content captured as `mode` says:
    `span_only` (gen_ai.input/output.messages attributes on the chat spans) or `event_only` (the same on an
    inference-details event, a log record). Each person turn in the app's span carrying `gen_ai.conversation.id`.
    Returns (spans, log records)."""
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
    tp, lp, spans, logs = _providers()
    env = {"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
           "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": mode}
    with _env(**env), serve(Strict(Model(convs).reply)) as url:
        inst = OpenAIInstrumentor()
        inst.instrument(tracer_provider=tp, logger_provider=lp)
        try:
            _openai_loop(convs, url + "/v1", tp.get_tracer("app"), "gen_ai.conversation.id")
        finally:
            inst.uninstrument()
    return spans.get_finished_spans(), logs.get_finished_logs()


def openllmetry(convs, events=False):
    """Traceloop's OpenLLMetry instrumentation of the same app, its turns carrying `session.id`: messages as span
    attributes, or (`events`) as the older event conventions (gen_ai.user.message, gen_ai.choice, ... log records)."""
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor
    tp, lp, spans, logs = _providers()
    with _env(TRACELOOP_TRACE_CONTENT="true"), serve(Strict(Model(convs).reply)) as url:
        inst = OpenAIInstrumentor(use_attributes=not events)
        inst.instrument(tracer_provider=tp, logger_provider=lp)
        try:
            _openai_loop(convs, url + "/v1", tp.get_tracer("app"), "session.id")
        finally:
            inst.uninstrument()
    return spans.get_finished_spans(), logs.get_finished_logs()


def _py_tools(conv_of):
    "The tools as typed Python functions (what both frameworks declare from); `conv_of()` is the conversation playing."
    def get_order(order_id: str) -> str:
        "Get an order by its id."
        return run_tool("get_order", {"order_id": order_id}, conv_of())

    def find_customer(email: str) -> str:
        "Find a customer by email."
        return run_tool("find_customer", {"email": email}, conv_of())

    def cancel_order(order_id: str, reason: str) -> str:
        "Cancel an order."
        return run_tool("cancel_order", {"order_id": order_id, "reason": reason}, conv_of())

    def refund_order(order_id: str, amount: float) -> str:
        "Refund an order."
        return run_tool("refund_order", {"order_id": order_id, "amount": amount}, conv_of())
    return [find_customer, get_order, cancel_order, refund_order]


def openinference_agents(convs):
    "The OpenAI Agents SDK, traced by OpenInference; each conversation in `using_session`, each turn a Runner.run."
    import agents
    from openai import AsyncOpenAI
    from openinference.instrumentation import using_session
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
    tp, lp, spans, logs = _providers()
    playing = [None]
    tools = [agents.function_tool(f) for f in _py_tools(lambda: playing[0])]

    async def main(url):
        async with AsyncOpenAI(base_url=url, api_key="offline", max_retries=0) as client:
            agent = agents.Agent(name="support", instructions="Help the customer.", tools=tools,
                                 model=agents.OpenAIChatCompletionsModel("gpt-4o-mini", client))
            for conv in convs:
                playing[0], items = conv, []
                with using_session(conv["id"]):
                    for turn in conv["turns"]:
                        res = await agents.Runner.run(agent, items + [{"role": "user", "content": turn["user"]}],
                                                      run_config=agents.RunConfig(group_id=conv["id"]))
                        items = res.to_input_list()

    with serve(Strict(Model(convs).reply)) as url:
        inst = OpenAIAgentsInstrumentor()
        inst.instrument(tracer_provider=tp)
        # the SDK's tracing is one switch for the process: a test run earlier in this worker (the bridge's) may have
        # turned it off, and then no span reaches the instrumentation
        agents.set_tracing_disabled(False)
        try:
            asyncio.run(main(url + "/v1"))
        finally:
            agents.set_tracing_disabled(True)       # off again: the SDK's own exporter would send traces to OpenAI
            inst.uninstrument()
    return spans.get_finished_spans(), []


def openinference_langchain(convs):
    """LangGraph's prebuilt ReAct agent on LangChain's ChatOpenAI, traced by OpenInference; a conversation is a
    LangGraph thread (its `thread_id`), tool errors handled by the ToolNode (the error inside the tool message)."""
    from langchain_openai import ChatOpenAI
    from langchain_core.tools import tool as lc_tool, ToolException
    from langgraph.prebuilt import create_react_agent, ToolNode
    from langgraph.checkpoint.memory import InMemorySaver
    from openinference.instrumentation.langchain import LangChainInstrumentor
    tp, lp, spans, logs = _providers()
    playing = [None]

    def as_tool(f):
        "Denied and rate-limited calls raise LangChain's ToolException, which the tool answers itself (its"
        " `handle_tool_error`); a time-out raises as it is, and the ToolNode answers it."
        @functools.wraps(f)
        def run(*a, **k):
            try:
                return f(*a, **k)
            except (PermissionError, RuntimeError) as e:
                raise ToolException(f"{type(e).__name__}: {e}") from e
        t = lc_tool(run)
        t.handle_tool_error = True
        return t
    tools = [as_tool(f) for f in _py_tools(lambda: playing[0])]
    with serve(Strict(Model(convs).reply)) as url:
        inst = LangChainInstrumentor()
        inst.instrument(tracer_provider=tp)
        try:
            model = ChatOpenAI(model="gpt-4o-mini", base_url=url + "/v1", api_key="offline", max_retries=0)
            agent = create_react_agent(model, ToolNode(tools, handle_tool_errors=True), checkpointer=InMemorySaver())
            for conv in convs:
                playing[0] = conv
                for turn in conv["turns"]:
                    agent.invoke({"messages": [("user", turn["user"])]}, {"configurable": {"thread_id": conv["id"]}})
        finally:
            inst.uninstrument()
    return spans.get_finished_spans(), []


def _hex_ids(d):
    "OTLP/JSON as the spec writes it: trace and span ids hex, not protobuf-JSON's base64."
    if isinstance(d, list):
        return [_hex_ids(x) for x in d]
    if not isinstance(d, dict):
        return d
    return {k: (base64.b64decode(v).hex() if k in ("traceId", "spanId", "parentSpanId") and v else _hex_ids(v))
            for k, v in d.items()}


def write_otlp(path, spans, logs=(), encoding="json"):
    """Write spans (and log records) as the OTLP exporters encode them: `json` (one ExportTraceServiceRequest, then one
    ExportLogsServiceRequest, a line each) or `proto` (the binary ExportTraceServiceRequest; logs are not written)."""
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
    req = encode_spans(list(spans))
    if encoding == "proto":
        path.write_bytes(req.SerializeToString())
        return path
    lines = [json.dumps(_hex_ids(MessageToDict(req)))]
    if logs:
        lines.append(json.dumps(_hex_ids(MessageToDict(encode_logs(list(logs))))))
    path.write_text("\n".join(lines) + "\n")
    return path

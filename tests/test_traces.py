"""Production traces in: OTLP JSON GenAI spans and OpenInference spans read into valid rows; secrets never reach a row;
tools inferred from calls; the coverage gap; bad input named with the file, the span or line, and the fix."""
import json, pytest
from pathlib import Path
from whilelab.core import shopfront, canonical_json, find_secrets, validate_row, shared_data, tools as as_tools
from whilelab.traces import from_traces, TraceError, infer_tools, production_gap, gap_pairs, aim, error_kind, phrasings
from whilelab.axes import default_axes
from whilelab.cover import covering_array

SECRET = "sk-ant-api03-" + "Zx9" * 12
kv = lambda d: [{"key": k, "value": {"intValue": str(v)} if isinstance(v, int) else {"stringValue": str(v)}}
                for k, v in d.items()]


def genai_export(traces, base=0):
    "An OTLP JSON export: traces is a list of (first message, [(tool, args, result, error)])."
    spans, n = [], 0
    for k, (first, calls) in enumerate(traces):
        tid = f"{base + k + 1:032x}"; n += 1
        spans.append({"traceId": tid, "spanId": f"{n:016x}", "name": "chat m", "startTimeUnixNano": str(n),
                      "endTimeUnixNano": str(n + 1), "attributes": kv({
                          "gen_ai.operation.name": "chat", "gen_ai.provider.name": "anthropic",
                          "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text", "content": first}]}])})})
        for tool, args, result, err in calls:
            n += 1
            a = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool, "gen_ai.tool.call.id": f"c{n}",
                 "gen_ai.tool.call.arguments": json.dumps(args), "gen_ai.tool.call.result": result}
            if err: a["error.type"] = err
            spans.append({"traceId": tid, "spanId": f"{n:016x}", "name": f"execute_tool {tool}", "startTimeUnixNano": str(n),
                          "endTimeUnixNano": str(n + 1), "status": {"code": 2, "message": err} if err else {},
                          "attributes": kv(a)})
    return {"resourceSpans": [{"resource": {"attributes": kv({"service.name": "shop"})}, "scopeSpans": [{"spans": spans}]}]}


PROD = [("cancel #W1 please, my token is " + SECRET, [("find_customer", {"email": "a@b.test"}, '{"customer_id":"C1"}', None),
                                                    ("cancel_order", {"order_id": "#W1", "reason": "ordered by mistake",
                                                                      "api_key": SECRET}, '{"error":"timed out"}', "TimeoutError")]),
        ("where is #W2", [("get_order", {"order_id": "#W2"}, '{"error":"order #W2 not found"}', None)]),
        ("refund #W3", [("refund_order", {"order_id": "#W3", "amount": 5.0, "reason": "x"}, '{"error":"forbidden"}', "PermissionError")])]


@pytest.fixture
def export(tmp_path):
    p = tmp_path / "prod.json"; p.write_text(json.dumps(genai_export(PROD)))
    return p


def test_rows_are_valid_and_say_what_happened(export):
    t = from_traces(export)
    assert len(t) == 3
    for r in t.rows: validate_row(r)
    cells = [r["cell"] for r in t.rows]
    assert cells == [{"tool": "cancel_order", "condition": "timeout", "world": "exists"},
                     {"tool": "get_order", "condition": "ok", "world": "missing"},
                     {"tool": "refund_order", "condition": "denied", "world": "exists"}]
    assert t.rows[0]["agent_family"] == "anthropic" and [c["tool"] for c in t.rows[0]["calls"]] == ["find_customer", "cancel_order"]


def test_secrets_never_reach_a_row(export):
    t = from_traces(export)
    text = canonical_json(t.rows)
    assert SECRET not in text and find_secrets(text) == []
    assert "[redacted]" in text
    assert all(SECRET not in p for ps in phrasings(t).values() for p in ps)


def test_same_file_same_rows(export):
    assert canonical_json(from_traces(export).rows) == canonical_json(from_traces(export).rows)


def test_tools_inferred_from_calls(export):
    tools = {t.name: t for t in infer_tools(from_traces(export))}
    assert set(tools) == {"find_customer", "cancel_order", "get_order", "refund_order"}
    assert tools["refund_order"].params["amount"]["type"] == "number"
    assert set(tools["refund_order"].required) == {"order_id", "amount", "reason"}


def test_inferred_tools_of_a_real_domain_keep_its_names_and_types(tmp_path):
    "tau-bench retail: calls made with each tool's required arguments infer the same names, required sets and types."
    P = shared_data("tau_bench_domains.json", __file__)
    if P is None: pytest.skip("../shared/data/tau_bench_domains.json not found")
    from whilelab.core import tools as as_tools
    from whilelab.world import _synth
    from whilelab.defaults import WorldOptions
    import numpy as np
    ts = as_tools(json.loads(P.read_text())["retail"]["tools"])
    rng, traces = np.random.default_rng(0), []
    for t in ts:
        args = {p: _synth(p, t.params[p], rng, WorldOptions(), t.input_schema) for p in t.required}
        traces.append((f"please {t.name}", [(t.name, args, "{}", None)]))
    p = tmp_path / "retail.json"; p.write_text(json.dumps(genai_export(traces)))
    got = {t.name: t for t in infer_tools(from_traces(p))}
    assert set(got) == {t.name for t in ts}
    for t in ts:
        assert set(got[t.name].required) == set(t.required), t.name
        for q in t.required:
            want = t.params[q].get("type")
            assert want is None or got[t.name].params[q]["type"] == want, (t.name, q)


def test_gap_and_aimed_plan(export):
    spec = shopfront()
    t = from_traces(export)
    axes = default_axes(spec.tools, spec.policy)
    plan = covering_array(axes, seed=0)
    gap = production_gap(t, plan)
    assert set(gap.coords) >= {"tool", "condition", "world"} and gap.attrs["traces"] == 3
    assert gap.attrs["both"] + gap.attrs["production_only"] >= 3
    aimed, seeds, facts = aim(axes, t)
    plan2 = covering_array(aimed, seed=0, seed_rows=seeds)
    assert gap_pairs(production_gap(t, plan2), "production_only") == []
    assert facts["order_id"] == ["#W1", "#W2", "#W3"]


def test_error_kinds():
    assert [error_kind("ReadTimeout"), error_kind(None, '{"error": "rate limit exceeded"}'), error_kind("KeyError: x")] == \
        ["timeout", "rate_limited", "error:KeyError"]


def test_bad_input_names_file_span_and_fix(tmp_path, export):
    p = tmp_path / "x.csv"; p.write_text("a,b\n1,2\n")
    with pytest.raises(TraceError, match=r"x\.csv: the file: an unknown trace format.*Fix:"): from_traces(p)
    lines = [json.dumps(genai_export([x], base=i)) for i, x in enumerate(PROD)]
    torn = tmp_path / "torn.jsonl"; torn.write_text(lines[0] + "\n" + lines[1] + "\n" + lines[2][:50])
    with pytest.raises(TraceError, match=r"torn\.jsonl: line 3: .*Fix:") as e: from_traces(torn)
    assert len(e.value.kept.rows) == 2          # what was read before is kept
    http = tmp_path / "http.json"
    http.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [
        {"traceId": "ab12", "spanId": "1", "name": "GET /", "attributes": kv({"http.method": "GET"})}]}]}]}))
    with pytest.raises(TraceError, match=r"http\.json: span ab12: no span is a model or tool call.*Fix:"): from_traces(http)
    with pytest.raises(TraceError, match="not found"): from_traces([export, tmp_path / "missing.json"])


def test_real_first_messages_as_phrasings_on_a_real_domain(tmp_path):
    """tau-bench retail: production's first messages, read from traces, open the plan's situations; the ids and email
    in them are the situation's (production's are gone), each tool's openings are used in turn, secrets never reach a
    row, and the run is deterministic."""
    P = shared_data("tau_bench_domains.json", __file__)
    if P is None: pytest.skip("../shared/data/tau_bench_domains.json not found")
    from whilelab.simulate import simulate
    from whilelab.defaults import SimOptions
    from whilelab.standins import TemplateUser
    from whilelab.rollout import strip_timings
    from whilelab.core import stable_hash
    d = json.loads(P.read_text())["retail"]
    prod = [("Hi, please cancel order #W9999999, I ordered by mistake. I'm noah.kim5@corp.example " + SECRET,
             [("cancel_pending_order", {"order_id": "#W9999999", "reason": "ordered by mistake"}, "{}", None)]),
            ("cancel #W7777777 pls", [("cancel_pending_order", {"order_id": "#W7777777", "reason": "no longer needed"},
                                       "{}", None)]),
            ("can you get me the details of my order #W5555555? (item 1008292230) mail: jo.lee@corp.example",
             [("get_order_details", {"order_id": "#W5555555"}, "{}", None)])]
    p = tmp_path / "retail.json"; p.write_text(json.dumps(genai_export(prod)))
    real = phrasings(from_traces(p))
    assert sorted(real) == ["cancel_pending_order", "get_order_details"] and len(real["cancel_pending_order"]) == 2
    axes = default_axes(as_tools(d["tools"]), d["policy"]).restrict("tool", list(real))
    opts = SimOptions(k_samples=1, search=None)
    run = lambda: simulate(tools=d["tools"], policy=d["policy"], axes=axes, options=opts,
                           user=TemplateUser(opts.rollout, openings=real), progress=False)
    sim = run()
    firsts = {}
    for r in sim.rows:
        sit = next(s for s in sim.situations if s.id == r["situation_id"])
        first = r["messages"][0]["content"]
        texts = real[sit.goal["tool"]]
        words = texts[r["phrasing"] % len(texts)].split()[:1]     # production's own words open it ...
        assert first.split()[:1] == words or first.startswith(("I wrote in", "I already")), (first, words)
        for gone in ("#W9999999", "#W7777777", "#W5555555", "1008292230", "noah.kim5", "jo.lee"):
            assert gone not in first, first                   # ... with none of production's facts
        stance = sit.cell.get("stance")
        if stance in ("cooperative", "impatient", "multi_request"):    # ... and the situation's own
            assert sit.know["order_id"] in first and sit.know["email"] in first, first
        firsts.setdefault(sit.goal["tool"], set()).add(r["phrasing"])
        assert not find_secrets(canonical_json(r)), first
    assert firsts == {"cancel_pending_order": {0, 1}, "get_order_details": {0, 1}}
    # the plan is played as it is: what it leaves undelivered is held only by cells trying found impossible (a read of
    # an ineligible order answers ok), and each says so
    short = sim.undelivered_pairs()
    assert all(u["pair"]["world"] == "ineligible" and "none of its records can be" in u["reasons"][0] for u in short)
    assert sim.summary()["delivered_fraction"] >= 0.99, short
    h = lambda s: stable_hash([strip_timings(r) for r in s.rows], n=16)
    assert h(sim) == h(run())


def test_one_inspect_reader(tmp_path):
    "A run written as an Inspect log reads back the same calls through from_traces as through interop.from_inspect."
    pytest.importorskip("inspect_ai")
    import warnings
    from whilelab.simulate import simulate
    from whilelab.defaults import SimOptions
    from whilelab.interop import from_inspect
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sim = simulate(options=SimOptions(k_samples=1, n_phrasings=1, search=None), progress=False)
    p = sim.to_inspect(tmp_path / "run.eval", created="2026-01-01T00:00:00+00:00")
    rows, got = from_inspect(p), from_traces(p)
    assert len(got.rows) == len(rows) == len(sim.rows)
    key = lambda r: [m["content"] for m in r["messages"] if m["role"] == "user"][:1]
    want = sorted((key(r), [c["tool"] for c in r["calls"]]) for r in rows)
    assert sorted((key(r), [c["tool"] for c in r["calls"]]) for r in got.rows) == want
    ok = lambda rs: sum(c["status"] == "ok" for r in rs for c in r["calls"])     # a fault is an error kind in a trace
    assert ok(got.rows) >= ok(rows)


# ---- traces made with the real instrumentation libraries (tests/tracegen.py) ----------------------------------------
import gzip, importlib.util, sys, warnings
sys.path.insert(0, str(Path(__file__).parent))
import tracegen

N_CONVERSATIONS = 30     # conversations per instrumentation: every kind of turn, call and failure, in CI's time
READ_AT_LEAST = 0.95     # the share of tool calls and of failures a reader must find (the bar)
V2 = "opentelemetry.instrumentation.openai_v2"
LIBS = {"openai-v2 span_only": (V2, lambda c: tracegen.openai_v2(c, "span_only")),
        "openai-v2 event_only": (V2, lambda c: tracegen.openai_v2(c, "event_only")),
        "openllmetry": ("opentelemetry.instrumentation.openai", tracegen.openllmetry),
        "openllmetry events": ("opentelemetry.instrumentation.openai", lambda c: tracegen.openllmetry(c, events=True)),
        "openinference agents": ("openinference.instrumentation.openai_agents", tracegen.openinference_agents),
        "openinference langchain": ("openinference.instrumentation.langchain", tracegen.openinference_langchain)}


def _made(name, convs):
    mod, make = LIBS[name]
    if importlib.util.find_spec(mod.split(".")[0]) is None or importlib.util.find_spec(mod) is None:
        pytest.skip(f"{mod} is not installed (settings.ini dev_requirements pins it)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return make(convs)


def _read_back(rows, convs):
    "(calls found, failures found, conversations whose turns are all there in order) of rows against the script."
    found = faults = turns = 0
    for c in convs:
        first = c["turns"][0]["user"]
        r = [r for r in rows if r["messages"] and r["messages"][0]["content"] == first]
        assert len(r) == 1, (c["id"], len(r))          # one row per conversation
        r = r[0]
        turns += [m["content"] for m in r["messages"] if m["role"] == "user"] == [t["user"] for t in c["turns"]]
        got = [(m["tool_calls"][0]["function"]["name"], canonical_json(m["tool_calls"][0]["function"]["arguments"]))
               for m in r["messages"] if m.get("tool_calls")]
        got = [(t, a, s["status"]) for (t, a), s in zip(got, r["calls"])]
        for tool, args, fault in tracegen.calls_of(c):
            k = next((x for x in got if x[:2] == (tool, canonical_json(args))), None)
            if k is None: continue
            got.remove(k); found += 1; faults += bool(fault and k[2] != "ok")
    return found, faults, turns


@pytest.mark.parametrize("name", LIBS)
def test_real_instrumentation_one_row_per_conversation_every_call_and_failure(name, tmp_path):
    """Traces made by the real library around the real SDK (offline, tests/wire.py's strict server): one row per
    conversation with every person turn in order, >= 95% of tool calls (named arguments as the tool declares them) and
    of the planned failures read."""
    convs = tracegen.script(N_CONVERSATIONS)
    spans, logs = _made(name, convs)
    t = from_traces(tracegen.write_otlp(tmp_path / "prod.json", spans, logs))
    calls = sum(len(tracegen.calls_of(c)) for c in convs)
    failures = sum(1 for c in convs for *_, f in tracegen.calls_of(c) if f)
    found, faults, turns = _read_back(t.rows, convs)
    assert len(t.rows) == len(convs) and turns == len(convs)
    assert found >= READ_AT_LEAST * calls and faults >= READ_AT_LEAST * failures, (found, calls, faults, failures)
    assert calls > len(convs) and failures >= 5          # the script has enough of both to tell
    assert t.missing == {}
    for r in t.rows: validate_row(r)


def test_protobuf_and_gzip_read_as_json(tmp_path):
    "The same spans as OTLP protobuf (one request, or a length-prefixed stream), and gzipped, give the same rows."
    pytest.importorskip("opentelemetry.proto")
    convs = tracegen.script(6)
    spans, logs = _made("openai-v2 span_only", convs)
    want = canonical_json(from_traces(tracegen.write_otlp(tmp_path / "a.json", spans)).rows)
    pb = tracegen.write_otlp(tmp_path / "a.pb", spans, encoding="proto")
    stream = tmp_path / "b.bin"
    half = len(spans) // 2
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    stream.write_bytes(b"".join(len(b).to_bytes(4, "big") + b for b in
                                (encode_spans(list(spans[:half])).SerializeToString(),
                                 encode_spans(list(spans[half:])).SerializeToString())))
    gz = tmp_path / "a.json.gz"; gz.write_bytes(gzip.compress((tmp_path / "a.json").read_bytes()))
    pbgz = tmp_path / "a.pb.gz"; pbgz.write_bytes(gzip.compress(pb.read_bytes()))
    norun = lambda rows: canonical_json([{k: v for k, v in r.items() if k != "run_id"} for r in rows])
    for p in (pb, stream, gz, pbgz):
        assert norun(from_traces(p).rows) == norun(json.loads(want)), p.name
    bad = tmp_path / "junk.pb"; bad.write_bytes(b"\x00\x00\x00\x09\xff\xff")
    with pytest.raises(TraceError, match=r"junk\.pb: .*Fix:"): from_traces(bad)


def test_turns_in_different_files_are_one_conversation(tmp_path):
    "A conversation's turns exported to two files (a rotation) read back as one row when both are given."
    convs = [c for c in tracegen.script(12) if len(c["turns"]) > 1][:3]
    spans, logs = _made("openllmetry", convs)
    traces = sorted({s.context.trace_id for s in spans})
    a = [s for s in spans if traces.index(s.context.trace_id) % 2 == 0]
    b = [s for s in spans if traces.index(s.context.trace_id) % 2 == 1]
    t = from_traces([tracegen.write_otlp(tmp_path / "a.json", a), tracegen.write_otlp(tmp_path / "b.json", b)])
    assert len(t.rows) == len(convs) and _read_back(t.rows, convs)[2] == len(convs)


def test_gap_on_no_tool_call_warns_naming_the_attribute(tmp_path):
    "openai-v2 without message capture: no call can be read, and the gap says so, naming the attribute and the fix."
    convs = tracegen.script(4)
    _made("openai-v2 span_only", [])                   # skips where the library is not installed
    spans, logs = tracegen.openai_v2(convs, "no_content")
    t = from_traces(tracegen.write_otlp(tmp_path / "bare.json", spans, logs))
    assert len(t.rows) == len(convs) and sum(len(r["calls"]) for r in t.rows) == 0
    spec = shopfront()
    plan = covering_array(default_axes(spec.tools, spec.policy), seed=0)
    with pytest.warns(UserWarning, match=r"0 tool calls read.*gen_ai\.output\.messages.*CAPTURE_MESSAGE_CONTENT"):
        production_gap(t, plan)


def test_gap_on_tool_spans_without_results_warns(tmp_path):
    "execute_tool spans that carry no result and no error: the gap names the attribute they lack."
    ex = genai_export([("where is #W2", [("get_order", {"order_id": "#W2"}, None, None)])])
    for s in ex["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        s["attributes"] = [a for a in s["attributes"] if a["key"] != "gen_ai.tool.call.result"]
    p = tmp_path / "noresult.json"; p.write_text(json.dumps(ex))
    t = from_traces(p)
    spec = shopfront()
    plan = covering_array(default_axes(spec.tools, spec.policy), seed=0)
    with pytest.warns(UserWarning, match=r"1 of 1 tool spans lack gen_ai\.tool\.call\.result"):
        production_gap(t, plan)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        production_gap(from_traces(_write(tmp_path / "ok.json", genai_export(PROD))), plan)   # a full export: silent


def _write(p, doc):
    p.write_text(json.dumps(doc)); return p

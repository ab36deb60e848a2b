"""Claude and OpenAI-compatible backends, offline, through each SDK's own HTTP layer: an httpx
MockTransport that speaks the real wire formats (Messages API tool_use / tool_result blocks; chat
completions with tool_calls and logprobs; completions with echo), including error statuses,
timeouts and malformed bodies. A live smoke test runs only when ANTHROPIC_API_KEY is set."""
import asyncio, importlib, json, os, re, time
import numpy as np
import pytest
# The transport must come from the httpx family the SDKs are built on (httpx2 for current anthropic/openai releases).
httpx = importlib.import_module("httpx2") if importlib.util.find_spec("httpx2") else importlib.import_module("httpx")
from whilelab.core import shopfront, canonical_json
from whilelab.defaults import RolloutOptions, SimOptions
from whilelab.rollout import situation_from_cell, rollouts
from whilelab.models import (ClaudeAgent, ClaudeBackend, ClaudeUser, ClaudeWriter, OpenAIAgent, OpenAIBackend, ReferenceScorer,
                             BackendError, NotAligned, TemplateUser, claude_judge, kl_estimate, STOP)
from whilelab.grade import judge_all

KEY = "sk-ant-api03-TESTKEYthatmustneverleak0123456789"
FAST = RolloutOptions(backoff_base_s=0.001, backoff_cap_s=0.002, max_retries=3)
SPEC = shopfront()
CELL = {"tool": "get_order", "rule": "x", "stance": "cooperative", "world": "exists", "condition": "ok", "history": "fresh"}

def message(content, stop="end_turn", usage=(120, 30)):
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": content,
            "stop_reason": stop, "stop_sequence": None, "usage": {"input_tokens": usage[0], "output_tokens": usage[1]}}

class Server:
    """A scripted Messages API: a queue of faults to answer first, then a tool_use turn, then a text turn."""
    def __init__(self, faults=()):
        self.faults, self.calls, self.seen_keys = list(faults), [], set()
    def __call__(self, request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/v1/messages", request.url.path
        self.seen_keys.add(request.headers.get("x-api-key") or request.headers.get("authorization", "").removeprefix("Bearer "))
        body = json.loads(request.content); self.calls.append(body)
        if self.faults:
            f = self.faults.pop(0)
            if f == "timeout": raise httpx.ReadTimeout("read timed out", request=request)
            if f == "truncated": return httpx.Response(200, content=b'{"id": "msg_1", "type": "mess', headers={"content-type": "application/json"})
            if f == "malformed": return httpx.Response(200, json={"unexpected": True})
            status, headers = f if isinstance(f, tuple) else (f, {})
            return httpx.Response(status, json={"type": "error", "error": {"type": "overloaded_error" if status == 529 else "api_error", "message": "x"}}, headers=headers)
        last = body["messages"][-1]
        if isinstance(last["content"], list) and any(b.get("type") == "tool_result" for b in last["content"]):
            return httpx.Response(200, json=message([{"type": "text", "text": "Here is your order. It is on its way."}]))
        oid = SITUATION.know["order_id"]
        return httpx.Response(200, json=message([{"type": "text", "text": "Let me look that up."},
                                                 {"type": "tool_use", "id": "toolu_1", "name": "get_order", "input": {"order_id": oid}}], "tool_use"))

SITUATION = situation_from_cell(CELL, SPEC, seed=0)

def agent(server, **kw): return ClaudeAgent(backend=ClaudeBackend(api_key=KEY, transport=httpx.MockTransport(server), opts=FAST, **kw))
def play(a, user=None): return rollouts([SITUATION], SPEC, a, user or TemplateUser(), opts=FAST, progress=False)[0]

def test_claude_agent_speaks_the_messages_api_and_records_usage_and_cost():
    srv = Server(); row = play(agent(srv))
    assert row["error"] is None and row["calls"] == [{"tool": "get_order", "status": "ok"}]
    second = srv.calls[1]
    assert second["system"] == SPEC.policy and {t["name"] for t in second["tools"]} == {t.name for t in SPEC.tools}
    tr = second["messages"][-1]["content"][0]
    assert tr["type"] == "tool_result" and tr["tool_use_id"] == "toolu_1"                    # our tool result went back as a block
    assert row["usage"]["input_tokens"] == 240 and row["usage"]["output_tokens"] == 60 and row["usage"]["cost_usd"] > 0
    assert row["sampling"]["model"] == "claude-sonnet-4-5" and row["token_logprobs"] == []

@pytest.mark.parametrize("faults", [[429], [529], [500], [503], ["timeout"], [529, 500, "timeout"]])
def test_transient_failures_are_retried(faults):
    srv = Server(faults); row = play(agent(srv))
    assert row["error"] is None and len(srv.calls) == 2 + len(faults)

def test_retry_after_is_honoured():
    srv = Server([(429, {"retry-after": "0.3"})]); t = time.perf_counter(); row = play(agent(srv))
    assert row["error"] is None and time.perf_counter() - t >= 0.3

def test_a_failure_that_outlasts_the_retries_is_a_row_with_its_error():
    srv = Server([529] * 10); row = play(agent(srv))
    assert row["error"] and ("529" in row["error"] or "Overloaded" in row["error"]) and "attempts" in row["error"]
    assert len(srv.calls) == FAST.max_retries + 1 and row["messages"][0]["role"] == "user"

def test_a_malformed_body_ends_as_an_error_row_not_a_crash():
    row = play(agent(Server(["malformed"])))
    assert row["error"] is not None and "no content" in row["error"] and KEY not in canonical_json(row)

def test_a_truncated_body_is_retried_like_a_dropped_connection():
    srv = Server(["truncated"]); row = play(agent(srv))
    assert row["error"] is None and len(srv.calls) == 3
    row = play(agent(Server(["truncated"] * 10)))
    assert "JSONDecodeError after 4 attempts" in row["error"]

def test_rejected_and_missing_keys_say_what_to_fix_and_never_show_the_key(monkeypatch):
    row = play(agent(Server([401])))
    assert "rejected the key" in row["error"] and "ANTHROPIC_API_KEY" in row["error"] and KEY not in canonical_json(row)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(BackendError, match="set ANTHROPIC_API_KEY"): ClaudeBackend()

def test_the_key_comes_from_the_environment_and_goes_only_in_the_header(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    srv = Server([500]); a = ClaudeAgent(backend=ClaudeBackend(transport=httpx.MockTransport(srv), opts=FAST))
    row = play(a)
    assert srv.seen_keys == {KEY} and KEY not in canonical_json(row)

def test_claude_user_judge_and_writer():
    def handler(request):
        body = json.loads(request.content)
        if "grade" in body["system"]: return httpx.Response(200, json=message([{"type": "text", "text": "LABEL: fail\nREASON: no confirmation."}]))
        if "opening messages" in body["system"]: return httpx.Response(200, json=message([{"type": "text", "text": "Hello, my order is late."}]))
        said = sum(m["role"] == "assistant" for m in body["messages"])      # the person's own earlier turns
        return httpx.Response(200, json=message([{"type": "text", "text": STOP if said else "Hi, where is my order?"}]))
    b = ClaudeBackend(api_key=KEY, transport=httpx.MockTransport(handler), opts=FAST)
    row = play(agent(Server()), ClaudeUser(backend=b))
    assert row["messages"][0] == {"role": "user", "content": "Hi, where is my order?"} and row["messages"][-1]["role"] == "assistant"
    lab = judge_all(claude_judge(SPEC.policy, backend=b), [row])[0]
    assert lab.label == "fail" and lab.family == "anthropic" and lab.rubric_hash
    from whilelab.axes import agent_axes
    import asyncio
    d = asyncio.run(ClaudeWriter(agent_axes(SPEC), backend=b).draft(CELL, "k"))
    assert d["opening"] == "Hello, my order is late." and d["cell"] == CELL

def chat(content, tool_calls=None, logprobs=(-0.1, -0.2, -0.3), tokens=None):
    msg = {"role": "assistant", "content": content}
    if tool_calls: msg["tool_calls"] = tool_calls
    return {"id": "c1", "object": "chat.completion", "created": 0, "model": "my-model",
            "choices": [{"index": 0, "message": msg, "finish_reason": "tool_calls" if tool_calls else "stop",
                         "logprobs": {"content": [{"token": tokens[i] if tokens else f"t{i}", "logprob": lp, "bytes": None, "top_logprobs": []}
                                                     for i, lp in enumerate(logprobs)]}}],
            "usage": {"prompt_tokens": 50, "completion_tokens": len(logprobs), "total_tokens": 50 + len(logprobs)}}

def test_openai_compatible_agent_carries_logprobs_and_handles_bad_arguments():
    seen = []
    def handler(request):
        body = json.loads(request.content); seen.append(body)
        assert request.url.path.endswith("/chat/completions") and body["logprobs"] is True
        if len(seen) == 1: return httpx.Response(429, json={"error": {"message": "slow down"}}, headers={"retry-after": "0"})
        if body["messages"][-1]["role"] == "tool": return httpx.Response(200, json=chat("It is on its way."))
        return httpx.Response(200, json=chat(None, [{"id": "call_1", "type": "function", "function": {"name": "get_order", "arguments": json.dumps({"order_id": SITUATION.know["order_id"]})}},
                                                    {"id": "call_2", "type": "function", "function": {"name": "get_order", "arguments": "{not json"}}]))
    a = OpenAIAgent("my-model", backend=OpenAIBackend("my-model", base_url="http://vllm.local/v1", transport=httpx.MockTransport(handler), opts=FAST))
    row = play(a)
    assert row["error"] is None and row["token_count"] == 6 and abs(row["logprob_sum"] - (-1.2)) < 1e-9 and len(row["token_logprobs"]) == 6
    assert seen[1]["messages"][0]["role"] == "system" and isinstance(seen[2]["messages"][2]["tool_calls"][0]["function"]["arguments"], str)
    assert [c["status"] for c in row["calls"]] == ["ok", "invalid"]                  # the malformed call reached the world, which refused it
    assert row["messages"][1]["tool_calls"][1]["function"]["arguments"] == {"_unparsed": "{not json"}

def tokenize(text):
    "A word-piece tokenizer both mock models share: newlines alone, words with their leading spaces."
    return re.findall(r"\n|[^\S\n]*[^\s]+|[^\S\n]+", text)

def policy_lp(token): return -0.2 - 0.1 * (len(token) % 5)   # the policy's logprob of a token
PLANTED_KL = 0.1                                              # the reference gives every token exactly this much less

def policy_server(request):
    "Chat completions: a tool call first (its tokens are call syntax, not text), then text, each with per-token logprobs."
    body = json.loads(request.content)
    if not any(m["role"] == "assistant" for m in body["messages"]):
        args = json.dumps({"order_id": SITUATION.know["order_id"]})
        call = [{"id": "call_1", "type": "function", "function": {"name": "get_order", "arguments": args}}]
        toks = tokenize(f'<tool_call>{{"name": "get_order", "arguments": {args}}}</tool_call>')
        return httpx.Response(200, json=chat(None, call, [policy_lp(t) for t in toks], toks))
    text = "It is on its way, and should arrive on Friday."
    return httpx.Response(200, json=chat(text, None, [policy_lp(t) for t in tokenize(text)], tokenize(text)))

def reference_server(split=tokenize, offsets=True):
    "Completions with echo: a BOS token that takes no text, the prompt's tokens, one generated token."
    def handler(request):
        body = json.loads(request.content)
        assert request.url.path.endswith("/completions") and body["echo"] is True
        prompt = body["prompt"]; toks = split(prompt)
        offs = [0] + [int(x) for x in np.cumsum([len(t) for t in toks])]
        lp = {"tokens": ["<s>"] + toks + ["<g>"], "token_logprobs": [None] + [policy_lp(t) - PLANTED_KL for t in toks] + [-1.0],
              "top_logprobs": None, "text_offset": [0] + offs if offsets else None}
        return httpx.Response(200, json={"id": "x", "object": "text_completion", "created": 0, "model": "ref",
                                         "choices": [{"index": 0, "text": prompt + "<g>", "finish_reason": "length", "logprobs": lp}]})
    return handler

def scorer(handler):
    return ReferenceScorer("ref", backend=OpenAIBackend("ref", base_url="http://vllm.local/v1", transport=httpx.MockTransport(handler), opts=FAST))

def test_reference_kl_is_exact_on_the_policys_own_tokens():
    """Known answer: every policy token is PLANTED_KL more likely under the policy. The tool-call turn, the BOS echo and the
    first token of each turn must neither shift nor pad the match."""
    a = OpenAIAgent("my-model", backend=OpenAIBackend("my-model", base_url="http://vllm.local/v1", transport=httpx.MockTransport(policy_server), opts=FAST))
    row = play(a)
    texts = [t for t in row["agent_tokens"] if row["messages"][t["message"]].get("content")]
    assert row["error"] is None and len(row["agent_tokens"]) > len(texts) >= 1        # a tool-call turn and text turns
    scored = asyncio.run(scorer(reference_server()).score_row(row))
    assert scored["skipped_turns"] == len(row["agent_tokens"]) - len(texts)
    assert scored["tokens"] == sum(len(t["tokens"]) for t in texts)                    # every text token, the first ones included
    est = kl_estimate(scored["policy"], scored["reference"])
    assert est["aligned"] and abs(est["kl"] - PLANTED_KL) < 1e-12, est
    with pytest.raises(NotAligned, match="tokenised it differently"):                  # another tokenizer: refused, not estimated
        asyncio.run(scorer(reference_server(split=lambda p: [p[i:i + 4] for i in range(0, len(p), 4)])).score_row(row))
    with pytest.raises(NotAligned, match="do not spell the prompt"):                   # a BOS echo and no offsets to place it
        asyncio.run(scorer(reference_server(offsets=False)).score_row(row))

@pytest.mark.skipif(not os.environ.get("ANTHROPIC_API_KEY"), reason="live smoke test: set ANTHROPIC_API_KEY to run it")
def test_live_claude_end_to_end():
    from whilelab.simulate import simulate
    from whilelab.axes import agent_axes
    axes = agent_axes(SPEC)
    small = axes.restrict("tool", ["get_order", "cancel_order"]).restrict("rule", axes["rule"].levels[:2]).restrict("stance", ["cooperative"]) \
                .restrict("world", ["exists"]).restrict("condition", ["ok", "timeout"]).restrict("history", ["fresh"])
    sim = simulate(ClaudeAgent(max_tokens=400), options=SimOptions(n_phrasings=1, k_samples=1, search=None), user=ClaudeUser(max_tokens=200),
                   axes=small, progress=False)
    assert sim.rows and all(r["error"] is None for r in sim.rows) and all(r["usage"].get("output_tokens") for r in sim.rows)
    assert os.environ["ANTHROPIC_API_KEY"] not in canonical_json(sim.rows)

def test_dotted_tool_names_reach_the_apis_as_aliases_and_come_back_as_themselves():
    """BFCL-style names ('math.factorial') are refused by both APIs: they see the alias, the row keeps the name."""
    from whilelab.core import AgentSpec
    spec = AgentSpec("calc", [{"name": "math.factorial", "description": "Compute n!", "parameters": {"type": "dict",
                               "properties": {"n": {"type": "integer"}}, "required": ["n"]}}], "Answer with the tool's result.")
    sit = situation_from_cell({"tool": "math.factorial", "rule": "x", "stance": "cooperative", "world": "exists", "condition": "ok",
                               "history": "fresh"}, spec, seed=0)
    seen = []
    def claude(request):
        body = json.loads(request.content); seen.append(body)
        if len(seen) == 1: return httpx.Response(200, json=message([{"type": "tool_use", "id": "toolu_1", "name": "math_factorial", "input": {"n": 5}}], "tool_use"))
        return httpx.Response(200, json=message([{"type": "text", "text": "5! is 120."}]))
    row = rollouts([sit], spec, agent(claude), TemplateUser(), opts=FAST, progress=False)[0]
    assert [t["name"] for t in seen[0]["tools"]] == ["math_factorial"]                    # the API sees a name it accepts
    assert seen[1]["messages"][1]["content"][0]["name"] == "math_factorial"              # and the history it sent back, too
    assert row["calls"] == [{"tool": "math.factorial", "status": "ok"}]                   # the row keeps the tool's own name
    assert row["messages"][1]["tool_calls"][0]["function"]["name"] == "math.factorial"
    def chat_server(request):
        body = json.loads(request.content); seen.append(body)
        if not any(m["role"] == "assistant" for m in body["messages"]):
            return httpx.Response(200, json=chat(None, [{"id": "call_1", "type": "function", "function": {"name": "math_factorial", "arguments": '{"n": 5}'}}]))
        return httpx.Response(200, json=chat("5! is 120."))
    oa = OpenAIAgent("m", backend=OpenAIBackend("m", base_url="http://vllm.local/v1", transport=httpx.MockTransport(chat_server), opts=FAST))
    row = rollouts([sit], spec, oa, TemplateUser(), opts=FAST, progress=False)[0]
    assert seen[-1]["tools"][0]["function"]["name"] == "math_factorial" and row["calls"] == [{"tool": "math.factorial", "status": "ok"}]
    assert seen[-1]["messages"][2]["tool_calls"][0]["function"]["name"] == "math_factorial"

"""Claude and OpenAI-compatible backends, offline, through each SDK's own HTTP layer, against strict test
servers (`wire.py`) that refuse what the real APIs refuse: role alternation, non-empty content, tool_use /
tool_result pairing, tool-call answers, name patterns. Every scenario here also asserts that nothing was
refused. Faults a provider really sends -- error statuses, timeouts, truncated and malformed bodies, empty
replies, replies cut at max_tokens, markdown judge labels, outages mid-batch -- each have a test. A live
smoke test runs only when ANTHROPIC_API_KEY is set."""

import asyncio, dataclasses, gc, json, os, re, time
from pathlib import Path
import numpy as np
import pytest
from wire import Strict, serve, message, chat, httpx
from whilelab.core import shopfront, canonical_json
from whilelab.defaults import RolloutOptions, SimOptions
from whilelab.rollout import situation_from_cell, rollouts, user_msg
from whilelab.roles import ClaudeAgent, ClaudeUser, ClaudeWriter, OpenAIAgent, ReferenceScorer, NotAligned, claude_judge, kl_estimate, STOP
from whilelab.backends import ClaudeBackend, OpenAIBackend, BackendError
from whilelab.standins import TemplateUser
from whilelab.grade import judge_all, grade
from whilelab.cut import cut_sft

KEY = "sk-ant-api03-TESTKEYthatmustneverleak0123456789"
FAST = RolloutOptions(backoff_base_s=0.001, backoff_cap_s=0.002, max_retries=3)
SPEC = shopfront()
CELL = {
    "tool": "get_order",
    "rule": "x",
    "stance": "cooperative",
    "world": "exists",
    "condition": "ok",
    "history": "fresh",
}
SITUATION = situation_from_cell(CELL, SPEC, seed=0)


def looks_up(faults=()):
    """The agent's side of a Messages API conversation: answers queued faults first, then a tool_use turn,
    then a text turn once the tool result is back."""
    faults = list(faults)

    def reply(body):
        if faults:
            f = faults.pop(0)
            if f == "timeout":
                return httpx.ReadTimeout("read timed out")
            if f == "truncated":
                return 200, {}, b'{"id": "msg_1", "type": "mess'
            if f == "malformed":
                return {"unexpected": True}
            status, headers = f if isinstance(f, tuple) else (f, {})
            kind = "overloaded_error" if status == 529 else "api_error"
            return status, headers, {"type": "error", "error": {"type": kind, "message": "x"}}
        last = body["messages"][-1]
        if isinstance(last["content"], list) and any(b.get("type") == "tool_result" for b in last["content"]):
            status = re.search(r'\\?"status\\?":\s*\\?"(\w+)', json.dumps(last["content"]))  # tells what it read
            return message([{"type": "text", "text": f"Here is your order: it is {status.group(1) if status else 'found'}."}])
        return message(
            [
                {"type": "text", "text": "Let me look that up."},
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "get_order",
                    "input": {"order_id": SITUATION.know["order_id"]},
                },
            ],
            "tool_use",
        )

    return reply


def claude(srv: Strict, **kw) -> ClaudeBackend:
    return ClaudeBackend(api_key=KEY, transport=srv.transport(), **{"opts": FAST, **kw})


def agent(srv, **kw):
    return ClaudeAgent(backend=claude(srv, **kw))


def play(a, user=None, sit=SITUATION, **kw):
    return rollouts([sit], SPEC, a, user or TemplateUser(), **{"opts": FAST, "progress": False, **kw})[0]


def test_claude_agent_speaks_the_messages_api_and_records_usage_and_cost():
    srv = Strict(looks_up())
    row = play(agent(srv))
    assert row["error"] is None and row["calls"] == [{"tool": "get_order", "status": "ok", "world_said": "ok"}] and srv.refused == []
    second = srv.calls[1]
    assert second["system"][0]["text"] == SPEC.policy and {t["name"] for t in second["tools"]} == {t.name for t in SPEC.tools}
    tr = second["messages"][-1]["content"][0]
    assert tr["type"] == "tool_result" and tr["tool_use_id"] == "toolu_1"  # our tool result went back as a block
    assert row["usage"] == {"agent": {"calls": 2, "input_tokens": 240, "output_tokens": 60, "cost_usd": 0.00162}}
    assert row["stop_reasons"] == [{"message": 1, "reason": "tool_use"}, {"message": 3, "reason": "end_turn"}]
    assert row["sampling"]["model"] == "claude-sonnet-4-5" and row["token_logprobs"] == []


@pytest.mark.parametrize("faults", [[429], [529], [500], [503], ["timeout"], [529, 500, "timeout"]])
def test_transient_failures_are_retried(faults):
    srv = Strict(looks_up(faults))
    row = play(agent(srv))
    assert row["error"] is None and len(srv.calls) == 2 + len(faults)


def test_retry_after_is_honoured():
    srv = Strict(looks_up([(429, {"retry-after": "0.3"})]))
    t = time.perf_counter()
    row = play(agent(srv))
    assert row["error"] is None and time.perf_counter() - t >= 0.3


def test_a_failure_that_outlasts_the_retries_is_a_row_with_its_error():
    srv = Strict(looks_up([529] * 10))
    row = play(agent(srv))
    assert row["error"] and ("529" in row["error"] or "Overloaded" in row["error"]) and "attempts" in row["error"]
    assert len(srv.calls) == FAST.max_retries + 1 and row["messages"][0]["role"] == "user"


def test_retry_settings_of_the_run_reach_a_backend_that_has_none():
    """RolloutOptions(max_retries=1) given to the run is what the backend does; a backend's own opts still win."""
    once = RolloutOptions(backoff_base_s=0.001, backoff_cap_s=0.002, max_retries=1)
    srv = Strict(looks_up([529] * 10))
    row = play(ClaudeAgent(backend=ClaudeBackend(api_key=KEY, transport=srv.transport())), opts=once)
    assert "after 2 attempts" in row["error"] and len(srv.calls) == 2
    srv = Strict(looks_up([529] * 10))
    play(ClaudeAgent(backend=ClaudeBackend(api_key=KEY, transport=srv.transport(), opts=FAST)), opts=once)
    assert len(srv.calls) == FAST.max_retries + 1
    srv = Strict(looks_up([529] * 10))
    oa = OpenAIAgent("m", backend=OpenAIBackend("m", base_url="http://vllm.local/v1", transport=srv.transport()))
    assert "after 2 attempts" in play(oa, opts=once)["error"] and len(srv.calls) == 2


def test_a_malformed_body_ends_as_an_error_row_not_a_crash():
    row = play(agent(Strict(looks_up(["malformed"]))))
    assert row["error"] is not None and "no content" in row["error"] and KEY not in canonical_json(row)


def test_a_truncated_body_is_retried_like_a_dropped_connection():
    srv = Strict(looks_up(["truncated"]))
    row = play(agent(srv))
    assert row["error"] is None and len(srv.calls) == 3
    row = play(agent(Strict(looks_up(["truncated"] * 10))))
    assert "JSONDecodeError after 4 attempts" in row["error"]


def test_rejected_and_missing_keys_say_what_to_fix_and_never_show_the_key(monkeypatch):
    row = play(agent(Strict(looks_up([401]))))
    assert "rejected the key" in row["error"] and "ANTHROPIC_API_KEY" in row["error"] and KEY not in canonical_json(row)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(BackendError, match="set ANTHROPIC_API_KEY"):
        ClaudeBackend()


def test_the_key_comes_from_the_environment_and_goes_only_in_the_header(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    srv = Strict(looks_up([500]))
    a = ClaudeAgent(backend=ClaudeBackend(transport=srv.transport(), opts=FAST))
    row = play(a)
    assert srv.keys == {KEY} and KEY not in canonical_json(row)


def asks_twice(messages, ctx):
    "A person who asks, and asks again when the agent says nothing, then leaves."
    said = sum(m["role"] == "user" for m in messages)
    return user_msg(["Where is my order?", "Hello? Are you there?"][said]) if said < 2 else None


def test_an_empty_reply_is_kept_and_the_next_request_is_still_valid():
    """content [] with end_turn: the row shows the silence; the next request leaves it out (refused if sent)."""
    replies = iter([message([]), message([{"type": "text", "text": "Sorry -- which order?"}])])
    srv = Strict(lambda body: next(replies))
    row = play(agent(srv), asks_twice)
    assert row["error"] is None and srv.refused == [] and len(srv.calls) == 2
    assert [m["content"] for m in row["messages"]] == [
        "Where is my order?",
        "",
        "Hello? Are you there?",
        "Sorry -- which order?",
    ]
    assert srv.calls[1]["messages"] == [{"role": "user", "content": "Where is my order?\n\nHello? Are you there?"}]
    g = grade([row], SPEC)[0]
    assert g["markers"]["empty_reply"] == 0.0 and g["reward"] is not None


def test_a_reply_cut_at_max_tokens_is_stored_ends_the_rollout_and_is_floored():
    cut = message([{"type": "text", "text": "Your order o-1 is"}], stop="max_tokens")
    srv = Strict(lambda body: cut)
    row = play(agent(srv))
    assert row["stop_reasons"] == [{"message": 1, "reason": "max_tokens"}] and len(srv.calls) == 1
    g = grade([row], SPEC)[0]
    assert g["reward"] == 0.0 and "truncated_reply" in g["floored_by"] and g["judge"] is None
    cut_call = chat("Your order", finish="length")  # chat completions says "length"
    srv = Strict(lambda body: cut_call)
    row = play(
        OpenAIAgent(
            "m", backend=OpenAIBackend("m", base_url="http://vllm.local/v1", transport=srv.transport(), opts=FAST)
        )
    )
    assert row["stop_reasons"] == [{"message": 1, "reason": "max_tokens"}] and len(srv.calls) == 1


def test_an_agent_outage_is_counted_never_graded_or_cut():
    """An agent whose API was down used to get reward 1.0 and count in the pass rate."""
    rows = rollouts(
        [SITUATION], SPEC, agent(Strict(looks_up([529] * 40))), TemplateUser(), k_samples=3, opts=FAST, progress=False
    )
    rows += rollouts(
        [SITUATION], SPEC, agent(Strict(looks_up())), TemplateUser(), k_samples=1, opts=FAST, progress=False
    )
    assert sum(r["error"] is not None for r in rows) == 3
    g = grade(rows, SPEC, judge=lambda row: "pass")
    assert [r["reward"] for r in g] == [None, None, None, 1.0] and g.report()["ungraded"] == {"rollout error": 3}
    assert g.judged == 1  # the judge never saw an outage
    assert cut_sft(g, SPEC).dropped["rollout error"] == 3


def judge_server(outage_on: str):
    "A judge that answers in markdown, and whose API is down (529 forever) for the conversation mentioning `outage_on`."

    def reply(body):
        prompt = body["messages"][0]["content"].split("CONVERSATION:")[-1]
        if outage_on in prompt:
            return 529, {}, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
        return message(
            [
                {
                    "type": "text",
                    "text": (
                        "**LABEL:** Fail\n**REASON:** no confirmation."
                        if "cancel" in prompt
                        else '{"label": "pass", "reason": "fine"}'
                    ),
                }
            ],
            usage=(900, 12),
        )

    return reply


def test_a_judge_outage_mid_batch_costs_one_label_and_markdown_labels_parse():
    rows = rollouts(
        [
            situation_from_cell({**CELL, "tool": t}, SPEC, seed=0)
            for t in ("get_order", "cancel_order", "find_customer")
        ],
        SPEC,
        agent(Strict(looks_up())),
        TemplateUser(),
        opts=FAST,
        progress=False,
    )
    outage_on = rows[2]["messages"][0]["content"]
    srv = Strict(judge_server(outage_on))
    with pytest.warns(UserWarning, match="gave no label for 1 of 3 rows"):
        labels = judge_all(claude_judge(SPEC.policy, backend=claude(srv)), rows)
    assert [l.label for l in labels[:2]] == ["pass", "fail"] and labels[1].reason == "no confirmation."
    assert labels[2].label is None and "after 4 attempts" in labels[2].error
    assert labels[0].usage == {"calls": 1, "input_tokens": 900, "output_tokens": 12, "cost_usd": 0.00288}


JUDGE_FORMS = [   # how judge models really answer (issue 35), and the label each must give; both labels: none
    ("PASS - the agent looked the order up and answered.", "pass"), ("Pass.", "pass"), ("Result: PASS", "pass"),
    ("**PASS**\n\nThe agent confirmed the order id before answering.", "pass"), ("<label>pass</label>", "pass"),
    ("FAIL - the agent never confirmed.", "fail"), ("Fail.", "fail"), ("Result: FAIL", "fail"),
    ("**FAIL**\n\nNo confirmation was asked for.", "fail"), ("<label>fail</label>", "fail"),
    ("LABEL: pass\nLABEL: fail", None), ("PASS\n\nVerdict: fail", None), ("I cannot tell.", None),
]


@pytest.mark.parametrize("said,label", JUDGE_FORMS)
def test_a_claude_judge_reads_the_label_forms_judges_write(said, label):
    row = play(agent(Strict(looks_up())))
    srv = Strict(lambda body: message([{"type": "text", "text": said}], usage=(900, 12)))
    import warnings
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        lab = judge_all(claude_judge(SPEC.policy, backend=claude(srv)), [row])[0]
    assert lab.label == label and srv.refused == [] and len(srv.calls) == 1, (lab, srv.refused)
    assert (lab.error is None) if label else ("no pass/fail label" in lab.error and any("no label" in str(x.message) for x in w))


def test_claude_user_judge_and_writer_speak_valid_requests():
    def reply(body):
        system = body["system"] if isinstance(body["system"], str) else body["system"][0]["text"]
        if "grade" in system:
            return message([{"type": "text", "text": "LABEL: fail\nREASON: no confirmation."}])
        if "opening messages" in system:
            return message([{"type": "text", "text": "Hello, my order is late."}])
        said = sum(m["role"] == "assistant" for m in body["messages"])  # the person's own earlier turns
        return message([{"type": "text", "text": STOP if said else "Hi, where is my order?"}], usage=(200, 10))

    person_side = Strict(reply)
    b = claude(person_side)
    agent_side = Strict(looks_up())
    row = play(agent(agent_side), ClaudeUser(backend=b))
    assert (
        row["messages"][0] == {"role": "user", "content": "Hi, where is my order?"}
        and row["messages"][-1]["role"] == "assistant"
    )
    assert (
        person_side.refused == [] and agent_side.refused == []
    )  # the agent spoke twice in a row: joined for the person
    assert row["usage"]["user"] == {
        "calls": 2,
        "input_tokens": 400,
        "output_tokens": 20,
        "cost_usd": 0.0015,
    }  # the STOP reply counted
    lab = judge_all(claude_judge(SPEC.policy, backend=b), [row])[0]
    assert lab.label == "fail" and lab.family == "anthropic" and lab.rubric_hash
    from whilelab.axes import agent_axes

    d = asyncio.run(ClaudeWriter(agent_axes(SPEC), backend=b).draft(CELL, "k"))
    assert d["opening"] == "Hello, my order is late." and d["cell"] == CELL


def tiny_axes():
    from whilelab.axes import agent_axes

    axes = agent_axes(SPEC)
    return (
        axes.restrict("tool", ["get_order"])
        .restrict("rule", axes["rule"].levels[:1])
        .restrict("stance", ["cooperative"])
        .restrict("world", ["exists"])
        .restrict("condition", ["ok"])
        .restrict("history", ["fresh"])
    )


def test_simulate_uses_the_judge_and_reports_every_roles_usage_and_cost():
    """The plan played once is graded by the judge given (it used to be ignored); usage of agent, person, judge add up;
    a model with no price makes the cost unknown, not 0."""
    from whilelab.simulate import simulate

    person = Strict(
        lambda body: message(
            [{"type": "text", "text": STOP if len(body["messages"]) > 1 else "Where is order?"}], usage=(100, 5)
        )
    )
    judge = Strict(judge_server("no outage"))
    openai_agent = OpenAIAgent(
        "my-local-model",
        backend=OpenAIBackend(
            "my-local-model",
            base_url="http://vllm.local/v1",
            opts=FAST,
            transport=Strict(lambda body: chat("Which order?")).transport(),
        ),
    )
    sim = simulate(
        openai_agent,
        options=SimOptions(search=None, rollout=FAST),
        user=ClaudeUser(backend=claude(person)),
        judge=claude_judge(SPEC.policy, backend=claude(judge)),
        axes=tiny_axes(),
        progress=False,
    )
    s = sim.summary()
    assert s["graded"] == len(sim.rows) == len(judge.calls) and all(
        r["judge"]["judge"].startswith("claude:") for r in sim.rows
    )
    assert (
        set(s["usage"]) == {"agent", "user", "judge", "all_roles"} and s["usage"]["agent"]["cost_usd"] is None
    )  # unpriced: unknown
    assert s["usage"]["all_roles"]["cost_usd"] is None and s["usage"]["all_roles"]["calls"] == sum(
        s["usage"][r]["calls"] for r in ("agent", "user", "judge"))     # one unknown price makes the total unknown
    assert s["usage"]["user"]["calls"] == len(person.calls) and s["usage"]["user"]["cost_usd"] > 0
    assert s["usage"]["judge"] == {
        "calls": len(judge.calls),
        "input_tokens": 900 * len(judge.calls),
        "output_tokens": 12 * len(judge.calls),
        "cost_usd": round(0.00288 * len(judge.calls), 8),
    }


def test_one_agent_reused_across_runs_closes_its_clients_on_their_own_loop(capfd, caplog):
    """Each rollouts() call runs its own event loop; a client left open used to be collected later and fail on the
    loop ('Task exception was never retrieved ... Event loop is closed')."""
    srv = Strict(looks_up())
    with serve(srv) as url:
        a, person = ClaudeAgent(backend=ClaudeBackend(api_key=KEY, base_url=url, opts=FAST)), TemplateUser()

        async def collecting(messages, ctx):  # a collection inside the next run's loop finds the last run's client
            gc.collect()
            return await person.respond(messages, ctx)

        rows = [play(a, collecting) for _ in range(6)]
        gc.collect()
    err = capfd.readouterr().err + "\n".join(
        r.getMessage() + str(r.exc_info) for r in caplog.records
    )  # asyncio logs there
    assert all(r["error"] is None for r in rows) and srv.refused == []
    assert "Event loop is closed" not in err and "never retrieved" not in err, err[-2000:]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_backend_used_from_your_own_asyncio_run_closes_its_client_on_that_loop(capfd, caplog, provider):
    """A user's own `asyncio.run(backend.answer(...))`, ten times over (not whilelab's run_sync): each loop's client is
    closed before that loop ends, so none is collected later on another loop ('Task exception was never retrieved ...
    Event loop is closed', seen on 4 of 10 such calls before)."""
    reply = (lambda body: chat("PASS")) if provider == "openai" else (lambda body: message([{"type": "text", "text": "PASS"}]))
    srv = Strict(reply)
    with serve(srv) as url:
        b = (OpenAIBackend("m", base_url=url + "/v1", api_key="sk-x", cache=False, opts=FAST) if provider == "openai"
             else ClaudeBackend(api_key=KEY, base_url=url, cache=False, opts=FAST))
        said = [asyncio.run(b.answer("Grade.", "POLICY: x"))["text"] for _ in range(10)]
        gc.collect()
    err = capfd.readouterr().err + "\n".join(r.getMessage() + str(r.exc_info) for r in caplog.records)
    assert said == ["PASS"] * 10 and srv.refused == []
    assert "Event loop is closed" not in err and "never retrieved" not in err, err[-2000:]


def test_openai_compatible_agent_carries_logprobs_and_handles_bad_arguments():
    def reply(body):
        assert body["logprobs"] is True
        if len(srv.calls) == 1:
            return 429, {"retry-after": "0"}, {"error": {"message": "slow down"}}
        if body["messages"][-1]["role"] == "tool":
            return chat("It is on its way.")
        return chat(
            None,
            [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {
                        "name": "get_order",
                        "arguments": json.dumps({"order_id": SITUATION.know["order_id"]}),
                    },
                },
                {"id": "call_2", "type": "function", "function": {"name": "get_order", "arguments": "{not json"}},
            ],
        )

    srv = Strict(reply)
    a = OpenAIAgent(
        "my-model",
        backend=OpenAIBackend("my-model", base_url="http://vllm.local/v1", transport=srv.transport(), opts=FAST),
    )
    row = play(a)
    assert (
        row["error"] is None
        and row["token_count"] == 6
        and abs(row["logprob_sum"] - (-1.2)) < 1e-9
        and len(row["token_logprobs"]) == 6
    )
    assert srv.calls[1]["messages"][0]["role"] == "system" and srv.refused == []
    assert [c["status"] for c in row["calls"]] == [
        "ok",
        "invalid",
    ]  # the malformed call reached the world, which refused it
    assert row["messages"][1]["tool_calls"][1]["function"]["arguments"] == {"_unparsed": "{not json"}


def test_the_strict_servers_refuse_what_the_real_apis_refuse():
    """The checks themselves can fail: each bad request below is one the real API answers with 400."""
    from wire import check_messages, check_chat, Refused

    ok = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
    check_messages(ok)
    bad = [
        {"messages": [{"role": "user", "content": "hi"}, {"role": "user", "content": "again"}]},
        {
            "messages": [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": ""},
                {"role": "user", "content": "x"},
            ]
        },
        {
            "messages": [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}]},
                {"role": "user", "content": "and?"},
            ]
        },
        {"tools": [{"name": "math.factorial", "input_schema": {"type": "object"}}]},
    ]
    for b in bad:
        with pytest.raises(Refused):
            check_messages({**ok, **b})
    with pytest.raises(Refused, match="tool_call_ids did not have response"):
        check_chat(
            {
                "model": "m",
                "messages": [
                    {"role": "user", "content": "hi"},
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
                    },
                    {"role": "user", "content": "x"},
                ],
            }
        )


def tokenize(text):
    "A word-piece tokenizer both mock models share: newlines alone, words with their leading spaces."
    return re.findall(r"\n|[^\S\n]*[^\s]+|[^\S\n]+", text)


def policy_lp(token):
    return -0.2 - 0.1 * (len(token) % 5)  # the policy's logprob of a token


PLANTED_KL = 0.1  # the reference gives every token exactly this much less


def policy_server(body):
    "Chat completions: a tool call first (its tokens are call syntax), then text, each with per-token logprobs."
    if not any(m["role"] == "assistant" for m in body["messages"]):
        args = json.dumps({"order_id": SITUATION.know["order_id"]})
        call = [{"id": "call_1", "type": "function", "function": {"name": "get_order", "arguments": args}}]
        toks = tokenize(f'<tool_call>{{"name": "get_order", "arguments": {args}}}</tool_call>')
        return chat(None, call, [policy_lp(t) for t in toks], toks)
    text = "It is on its way, and should arrive on Friday."
    return chat(text, None, [policy_lp(t) for t in tokenize(text)], tokenize(text))


def reference_server(split=tokenize, offsets=True, bos="<s>", bos_in_offsets=False, echoed=lambda p: p):
    """Completions with echo: a BOS token the prompt does not hold, the prompt's tokens, one generated token. Llama-style
    servers (vLLM with `<|begin_of_text|>`) count the BOS token's text in the offsets: `bos_in_offsets`."""

    def reply(body):
        assert body["echo"] is True
        prompt = echoed(body["prompt"])
        toks = split(prompt)
        start = len(bos) if bos_in_offsets else 0
        offs = [start + int(x) for x in np.cumsum([0] + [len(t) for t in toks])]
        lp = {
            "tokens": [bos] + toks + ["<g>"],
            "token_logprobs": [None] + [policy_lp(t) - PLANTED_KL for t in toks] + [-1.0],
            "top_logprobs": None,
            "text_offset": [0] + offs if offsets else None,
        }
        return {
            "id": "x",
            "object": "text_completion",
            "created": 0,
            "model": "ref",
            "choices": [{"index": 0, "text": prompt + "<g>", "finish_reason": "length", "logprobs": lp}],
            "usage": {"prompt_tokens": len(toks) + 1, "completion_tokens": 1, "total_tokens": len(toks) + 2},
        }

    return reply


def scorer(reply):
    return ReferenceScorer(
        "ref",
        backend=OpenAIBackend("ref", base_url="http://vllm.local/v1", transport=Strict(reply).transport(), opts=FAST),
    )


def test_reference_kl_is_exact_on_the_policys_own_tokens():
    """Known answer: every policy token is PLANTED_KL more likely under the policy. The tool-call turn, the BOS echo,
    first token of each turn must neither shift nor pad the match."""
    a = OpenAIAgent(
        "my-model",
        backend=OpenAIBackend(
            "my-model", base_url="http://vllm.local/v1", transport=Strict(policy_server).transport(), opts=FAST
        ),
    )
    row = play(a)
    texts = [t for t in row["agent_tokens"] if row["messages"][t["message"]].get("content")]
    assert row["error"] is None and len(row["agent_tokens"]) > len(texts) >= 1  # a tool-call turn and text turns
    scored = asyncio.run(scorer(reference_server()).score_row(row))
    assert scored["skipped_turns"] == len(row["agent_tokens"]) - len(texts)
    assert scored["tokens"] == sum(len(t["tokens"]) for t in texts)  # every text token, the first ones included
    est = kl_estimate(scored["policy"], scored["reference"])
    assert est["aligned"] and abs(est["kl"] - PLANTED_KL) < 1e-12, est
    with pytest.raises(NotAligned, match="tokenised it differently"):  # another tokenizer: refused, not estimated
        asyncio.run(
            scorer(reference_server(split=lambda p: [p[i : i + 4] for i in range(0, len(p), 4)])).score_row(row)
        )
    with pytest.raises(NotAligned, match="do not spell the prompt"):  # an echo of other text and no offsets to place it
        asyncio.run(scorer(reference_server(offsets=False, echoed=lambda p: "x" + p)).score_row(row))
    with pytest.raises(NotAligned, match="not a tokenizer difference"):  # offsets that place nothing: not the tokenizer
        asyncio.run(scorer(reference_server(echoed=lambda p: "x" + p)).score_row(row))


@pytest.mark.parametrize("bos,in_offsets,offsets", [("<|begin_of_text|>", True, True), ("<|begin_of_text|>", False, True),
                                                    ("<s>", False, False), ("<|begin_of_text|>", True, False)])
def test_reference_kl_is_exact_behind_a_bos_token(bos, in_offsets, offsets):
    """A Llama-style reference behind vLLM echoes `<|begin_of_text|>` first and counts its text in the offsets; with
    offsets or without, the same tokenizer gives the planted KL exactly, and the calls' usage is kept."""
    row = play(OpenAIAgent("my-model", backend=OpenAIBackend("my-model", base_url="http://vllm.local/v1",
                                                             transport=Strict(policy_server).transport(), opts=FAST)))
    sc = scorer(reference_server(bos=bos, bos_in_offsets=in_offsets, offsets=offsets))
    scored = asyncio.run(sc.score_row(row))
    est = kl_estimate(scored["policy"], scored["reference"])
    assert est["aligned"] and est["tokens"] > 0 and abs(est["kl"] - PLANTED_KL) < 1e-12, est
    text_turns = len(row["agent_tokens"]) - scored["skipped_turns"]
    assert scored["usage"]["calls"] == text_turns and sc.usage == scored["usage"] and scored["usage"]["input_tokens"] > 0


@pytest.mark.skipif(not os.environ.get("ANTHROPIC_API_KEY"), reason="live smoke test: set ANTHROPIC_API_KEY to run it")
def test_live_claude_end_to_end():
    from whilelab.simulate import simulate
    from whilelab.axes import agent_axes

    axes = agent_axes(SPEC)
    small = (
        axes.restrict("tool", ["get_order", "cancel_order"])
        .restrict("rule", axes["rule"].levels[:2])
        .restrict("stance", ["cooperative"])
        .restrict("world", ["exists"])
        .restrict("condition", ["ok", "timeout"])
        .restrict("history", ["fresh"])
    )
    sim = simulate(
        ClaudeAgent(max_tokens=400),
        options=SimOptions(n_phrasings=1, k_samples=1, search=None),
        user=ClaudeUser(max_tokens=200),
        axes=small,
        progress=False,
    )
    assert (
        sim.rows
        and all(r["error"] is None for r in sim.rows)
        and all(r["usage"]["agent"]["output_tokens"] for r in sim.rows)
    )
    assert os.environ["ANTHROPIC_API_KEY"] not in canonical_json(sim.rows)


def test_dotted_tool_names_reach_the_apis_as_aliases_and_come_back_as_themselves():
    """BFCL-style names ('math.factorial') are refused by both APIs: they see the alias, the row keeps the name."""
    from whilelab.core import AgentSpec

    spec = AgentSpec(
        "calc",
        [
            {
                "name": "math.factorial",
                "description": "Compute n!",
                "parameters": {"type": "dict", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
            }
        ],
        "Answer with the tool's result.",
    )
    sit = situation_from_cell(
        {
            "tool": "math.factorial",
            "rule": "x",
            "stance": "cooperative",
            "world": "exists",
            "condition": "ok",
            "history": "fresh",
        },
        spec,
        seed=0,
    )

    def claude_side(body):
        if len(srv.calls) == 1:
            return message(
                [{"type": "tool_use", "id": "toolu_1", "name": "math_factorial", "input": {"n": 5}}], "tool_use"
            )
        return message([{"type": "text", "text": "5! is 120."}])

    srv = Strict(claude_side)
    seen = srv.calls
    row = rollouts([sit], spec, agent(srv), TemplateUser(), opts=FAST, progress=False)[0]
    assert srv.refused == []
    assert [t["name"] for t in seen[0]["tools"]] == ["math_factorial"]  # the API sees a name it accepts
    assert seen[1]["messages"][1]["content"][0]["name"] == "math_factorial"  # and the history it sent back, too
    assert row["calls"] == [{"tool": "math.factorial", "status": "ok", "world_said": "ok"}]  # the row keeps the tool's own name
    assert row["messages"][1]["tool_calls"][0]["function"]["name"] == "math.factorial"

    def chat_side(body):
        if not any(m["role"] == "assistant" for m in body["messages"]):
            return chat(
                None,
                [{"id": "call_1", "type": "function", "function": {"name": "math_factorial", "arguments": '{"n": 5}'}}],
            )
        return chat("5! is 120.")

    srv = Strict(chat_side)
    seen = srv.calls
    oa = OpenAIAgent(
        "m", backend=OpenAIBackend("m", base_url="http://vllm.local/v1", transport=srv.transport(), opts=FAST)
    )
    row = rollouts([sit], spec, oa, TemplateUser(), opts=FAST, progress=False)[0]
    assert seen[-1]["tools"][0]["function"]["name"] == "math_factorial" and row["calls"] == [
        {"tool": "math.factorial", "status": "ok", "world_said": "ok"}
    ]
    assert seen[-1]["messages"][2]["tool_calls"][0]["function"]["name"] == "math_factorial"
    assert srv.refused == []


def test_the_stable_prefix_is_marked_for_prompt_caching_and_cached_tokens_are_costed():
    def reply(body):
        out = looks_up()(body)
        out["usage"] = {"input_tokens": 40, "output_tokens": 30, "cache_read_input_tokens": 2000, "cache_creation_input_tokens": 0}
        return out
    srv = Strict(reply)
    row = play(agent(srv))
    assert srv.refused == [] and all(b["system"][0]["cache_control"] == {"type": "ephemeral"} for b in srv.calls)
    u = row["usage"]["agent"]
    assert u["cache_read_tokens"] == 4000 and u["input_tokens"] == 80
    assert abs(u["cost_usd"] - 2 * (40 * 3 + 30 * 15 + 2000 * 3 * 0.1) / 1e6) < 1e-12      # cache hits at a tenth of the price
    srv = Strict(looks_up())
    play(agent(srv, prompt_cache=False))
    assert all(isinstance(b["system"], str) for b in srv.calls)


def test_a_spend_limit_stops_the_run_keeps_finished_rows_and_a_second_call_resumes(tmp_path):
    sits = [situation_from_cell(CELL, SPEC, seed=0, variant=str(i)) for i in range(10)]
    capped = RolloutOptions(backoff_base_s=0.001, max_retries=1, concurrency=1, max_cost_usd=0.005)  # 0.00162 per rollout
    srv = Strict(looks_up())
    with pytest.warns(UserWarning, match="spend limit"):
        first = rollouts(sits, SPEC, agent(srv), TemplateUser(), store=tmp_path / "rows.jsonl", opts=capped, progress=False)
    assert len(first) == 4 and first.stopped.startswith("spend limit: $0.0065") and len(srv.calls) == 8
    srv2 = Strict(looks_up())
    more = dataclasses.replace(capped, max_cost_usd=1.0)
    rest = rollouts(sits, SPEC, agent(srv2), TemplateUser(), store=tmp_path / "rows.jsonl", opts=more, progress=False)
    assert len(rest) == 10 and rest.stopped is None and len(srv2.calls) == 12          # only the six not played before
    assert [r["situation_id"] for r in first] == [r["situation_id"] for r in rest if r["situation_id"] in {x["situation_id"] for x in first}]


def test_a_spend_limit_holds_across_the_batches_of_a_search():
    from whilelab.simulate import simulate
    opts = SimOptions(rollout=RolloutOptions(backoff_base_s=0.001, max_retries=1, max_cost_usd=0.01), k_samples=2)
    srv = Strict(looks_up())
    with pytest.warns(UserWarning):
        sim = simulate(agent(srv), options=opts, axes=tiny_axes(), progress=False)
    spent = sum(u["cost_usd"] for r in sim.rows for u in r["usage"].values())
    assert sim.stopped.startswith("spend limit") and 0.01 <= spent < 0.01 + 0.00162 * 16, (sim.stopped, spent)


def test_a_rerun_is_served_from_the_request_cache_with_the_same_rows(tmp_path):
    """The first run calls the API; the same run again makes no call and gives the same rows; another sample is another
    call; a second process (a fresh backend on the same file) reads what the first stored."""
    from whilelab.backends import RequestCache
    from whilelab.rollout import strip_timings
    sits = [situation_from_cell(CELL, SPEC, seed=0, variant=str(i)) for i in range(3)]
    srv = Strict(looks_up())
    a = ClaudeAgent(backend=ClaudeBackend(api_key=KEY, transport=srv.transport(), opts=FAST, cache=tmp_path / "c.sqlite"))
    first = rollouts(sits, SPEC, a, TemplateUser(), opts=FAST, progress=False)
    assert len(srv.calls) == 6 and a.backend.cache.misses == 6 and a.backend.cache.hits == 0
    again = rollouts(sits, SPEC, a, TemplateUser(), opts=FAST, progress=False)
    assert len(srv.calls) == 6 and a.backend.cache.hits == 6
    assert [strip_timings(r) for r in again] == [strip_timings(r) for r in first]
    rollouts(sits, SPEC, a, TemplateUser(), k_samples=2, opts=FAST, progress=False)   # sample 1 is new: 3 rollouts, 6 calls
    assert len(srv.calls) == 12
    fresh = ClaudeAgent(backend=ClaudeBackend(api_key=KEY, transport=Strict(looks_up([500] * 99)).transport(), opts=FAST,
                                              cache=RequestCache(tmp_path / "c.sqlite")))
    assert [strip_timings(r) for r in rollouts(sits, SPEC, fresh, TemplateUser(), opts=FAST, progress=False)] == \
           [strip_timings(r) for r in first]                                    # the API is down, and nothing needed it
    assert KEY.encode() not in (tmp_path / "c.sqlite").read_bytes()


def test_the_openai_compatible_backend_uses_the_cache_too(tmp_path):
    srv = Strict(lambda body: chat("It is on its way."))
    mk = lambda: OpenAIAgent("m", backend=OpenAIBackend("m", base_url="http://vllm.local/v1", transport=srv.transport(), opts=FAST,
                                                        cache=tmp_path / "c.sqlite"))
    first = play(mk()); n = len(srv.calls)
    assert play(mk())["messages"] == first["messages"] and len(srv.calls) == n


def test_a_run_killed_mid_call_keeps_every_reply_it_stored(tmp_path):
    """SIGKILL a process while its 7th request is in flight: the 6 replies it got are in the cache file, which is intact,
    and the run finished here asks only for the other 34."""
    import signal, subprocess, sys, threading
    cache, got_seventh, killed = tmp_path / "c.sqlite", threading.Event(), threading.Event()
    inner = looks_up()
    def reply(body):
        if len(srv.calls) == 7: got_seventh.set(); killed.wait(60)     # hold the 7th until the process is gone
        return inner(body)
    srv = Strict(reply)
    script = f"""
import sys; sys.path.insert(0, {str(Path(__file__).parent)!r})
from test_backends import *
sits = [situation_from_cell(CELL, SPEC, seed=0, variant=str(i)) for i in range(20)]
a = ClaudeAgent(backend=ClaudeBackend(api_key=KEY, base_url=sys.argv[1], opts=FAST, cache=sys.argv[2]))
rollouts(sits, SPEC, a, TemplateUser(), opts=dataclasses.replace(FAST, concurrency=1), progress=False)
"""
    with serve(srv) as url:
        p = subprocess.Popen([sys.executable, "-c", script, url, str(cache)], env={**os.environ, "WHILELAB_CACHE": "off"})
        try:
            assert got_seventh.wait(120), "the run never reached its 7th request"
            p.send_signal(signal.SIGKILL); p.wait(30)
        finally:
            killed.set()
            if p.poll() is None: p.kill()
        sits = [situation_from_cell(CELL, SPEC, seed=0, variant=str(i)) for i in range(20)]
        before = len(srv.calls)
        a = ClaudeAgent(backend=ClaudeBackend(api_key=KEY, base_url=url, opts=FAST, cache=cache))
        rows = rollouts(sits, SPEC, a, TemplateUser(), opts=dataclasses.replace(FAST, concurrency=1), progress=False)
    assert p.returncode == -signal.SIGKILL and all(r["error"] is None for r in rows) and len(rows) == 20
    assert a.backend.cache.hits == 6 and len(srv.calls) - before == 34


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_the_request_cache_keys_on_the_endpoint_the_environment_chooses(provider, tmp_path, monkeypatch):
    """Two servers chosen through ANTHROPIC_BASE_URL / OPENAI_BASE_URL do not share cached replies (issue 35): the
    second receives its own requests; the first, asked again, is served from the cache."""
    var = "ANTHROPIC_BASE_URL" if provider == "anthropic" else "OPENAI_BASE_URL"
    reply = looks_up() if provider == "anthropic" else (lambda body: chat("It is on its way."))
    srv_a, srv_b, cache = Strict(reply), Strict(reply), tmp_path / "c.sqlite"
    def fresh():
        if provider == "anthropic": return ClaudeAgent(backend=ClaudeBackend(api_key=KEY, opts=FAST, cache=cache))
        return OpenAIAgent("m", backend=OpenAIBackend("m", api_key=KEY, opts=FAST, cache=cache))
    with serve(srv_a) as url_a, serve(srv_b) as url_b:
        monkeypatch.setenv(var, url_a + ("/v1" if provider == "openai" else ""))
        first = play(fresh()); n_a = len(srv_a.calls)
        assert first["error"] is None and n_a >= 1 and srv_a.refused == []
        monkeypatch.setenv(var, url_b + ("/v1" if provider == "openai" else ""))
        second = play(fresh())
        assert second["error"] is None and len(srv_b.calls) == n_a and srv_b.refused == []   # its own requests
        monkeypatch.setenv(var, url_a + ("/v1" if provider == "openai" else ""))
        assert play(fresh())["messages"] == first["messages"] and len(srv_a.calls) == n_a   # served from the cache


def test_after_an_empty_agent_reply_the_persons_request_is_no_prefill():
    """The agent's first reply is empty: the person's next request used to end with its own previous message as the
    final assistant turn, which the Messages API continues as a prefill (issue 35). The strict server refuses that."""
    from whilelab.roles import SILENT
    turns = iter([message([], stop="end_turn"), message([{"type": "text", "text": "It has shipped."}])])
    agent_side = Strict(lambda body: next(turns))
    def person(body):
        said = sum(m["role"] == "assistant" for m in body["messages"])   # the person's own earlier turns
        return message([{"type": "text", "text": ["Hi, where is my order?", "Hello? Anyone there?"][said]
                         if said < 2 else STOP}])
    person_side = Strict(person)
    row = play(agent(agent_side), ClaudeUser(backend=claude(person_side)))
    assert person_side.refused == [] and agent_side.refused == [], (person_side.refused, agent_side.refused)
    second = person_side.calls[1]["messages"]
    assert second[-1] == {"role": "user", "content": SILENT} and second[-2]["content"] == "Hi, where is my order?"
    assert [m["content"] for m in row["messages"] if m["role"] == "user"][:2] == ["Hi, where is my order?",
                                                                                  "Hello? Anyone there?"]


def test_a_judge_call_that_failed_is_not_counted_as_judged():
    """Graded.report() counted every row that had a judge entry, a failed call's included: 'judged' is rows with a
    label, and the failures are counted as ungraded."""
    from whilelab.grade import LLMJudge
    from whilelab.standins import ScriptedAgent

    rows = rollouts([situation_from_cell(CELL, SPEC, seed=0, variant=str(i)) for i in range(6)], SPEC,
                    ScriptedAgent(flaw_rate=0.0), TemplateUser(), progress=False)
    n = iter(range(100))

    async def flaky(system, prompt):
        if next(n) % 2: raise ConnectionError("judge endpoint down")
        return "PASS"

    with pytest.warns(UserWarning, match="gave no label"):
        g = grade(rows, SPEC, LLMJudge(flaky, SPEC.policy, family="test-judge"))
    asked = [r for r in g if not r["floored_by"]]
    assert len(asked) == 6 and g.report()["judged"] == 3 and g.report()["ungraded"] == {"judge failed": 3}

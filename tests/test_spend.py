"""Spend of every role -- agent, person, judge, situation writer, reference scorer -- is recorded, summed over all
roles, and counted against the run's limits: a run whose judge alone crosses the limit stops there."""
import json
import pytest
from wire import Strict, message, chat
from whilelab.core import shopfront
from whilelab.defaults import RolloutOptions, SimOptions, SearchOptions
from whilelab.axes import agent_axes
from whilelab.grade import LLMJudge, OVER_LIMIT
from whilelab.simulate import simulate
from whilelab.backends import ClaudeBackend, OpenAIBackend
from whilelab.roles import ClaudeWriter, OpenAIAgent
from whilelab.rollout import rollouts, situation_from_cell
from whilelab.standins import TemplateUser

SPEC = shopfront()
FAST = dict(backoff_base_s=0.001, backoff_cap_s=0.002, max_retries=1)
CALL = {"calls": 1, "input_tokens": 1000, "output_tokens": 5, "cost_usd": 0.0125}   # one judge call's usage


def small_axes():
    axes = agent_axes(SPEC)
    return (axes.restrict("tool", ["get_order", "cancel_order"]).restrict("rule", axes["rule"].levels[:2])
            .restrict("condition", ["ok", "timeout"]).restrict("history", ["fresh"]))


def paid_judge(calls):
    async def model(system, prompt):   # answers at once: calls run one after another, so the count is exact
        calls.append(prompt)
        return {"text": "PASS", "usage": dict(CALL)}
    return LLMJudge(model, SPEC.policy, name="paid", family="test-judge")


def asked(rows):
    "Rows the judge would be asked about: neither floored by a hard rule nor a rollout error."
    return [r for r in rows if not r["floored_by"] and r["error"] is None]


@pytest.mark.parametrize("search", [None, SearchOptions()], ids=["plan once", "search"])
def test_the_judges_spend_alone_stops_the_run_at_the_limit(tmp_path, search):
    calls = []
    opts = SimOptions(search=search, rollout=RolloutOptions(max_cost_usd=0.05, **FAST))
    with pytest.warns(UserWarning, match="not judged: spend limit"):
        sim = simulate(options=opts, judge=paid_judge(calls), axes=small_axes(), progress=False, out=tmp_path)
    s = sim.summary()
    assert len(calls) == 4                            # the stand-ins are free: the 4th judge call reaches $0.05
    assert s["usage"]["judge"]["cost_usd"] == s["usage"]["all_roles"]["cost_usd"] == 0.05
    assert s["stopped"] == "spend limit: $0.0500 of $0.05"
    left = len(asked(sim.rows)) - 4
    assert left > 0 and s["ungraded"] == {OVER_LIMIT: left} and s["graded"] == len(sim.rows) - left
    assert json.loads((tmp_path / "summary.json").read_text())["usage"] == s["usage"]


def test_a_model_writers_calls_are_recorded_summed_and_limited(tmp_path):
    srv = Strict(lambda body: message([{"type": "text", "text": "Hi, where is my order?"}], usage=(120, 30)))
    backend = ClaudeBackend(api_key="sk-ant-test", transport=srv.transport(), cache=False, opts=RolloutOptions(**FAST))
    axes = small_axes()
    sim = simulate(options=SimOptions(rollout=RolloutOptions(**FAST)), axes=axes, progress=False, out=tmp_path,
                   writer=ClaudeWriter(axes, backend=backend))
    u = sim.summary()["usage"]
    per_call = (120 * 3 + 30 * 15) / 1e6                       # claude-sonnet-4-5: $3 in, $15 out per million
    assert len(srv.calls) > 0 and srv.refused == []
    assert u["writer"]["calls"] == len(srv.calls) and u["writer"]["cost_usd"] == pytest.approx(per_call * len(srv.calls))
    assert u["all_roles"] == u["writer"]                       # the stand-in agent and person spend nothing
    assert json.loads((tmp_path / "summary.json").read_text())["usage"]["writer"] == u["writer"]
    srv2 = Strict(srv.reply)
    capped = SimOptions(rollout=RolloutOptions(max_cost_usd=per_call * 3, **FAST))
    stopped = simulate(options=capped, axes=axes, progress=False, writer=ClaudeWriter(
        axes, backend=ClaudeBackend(api_key="sk-ant-test", transport=srv2.transport(), cache=False)))
    assert stopped.stopped.startswith("spend limit") and 3 <= len(srv2.calls) < len(srv.calls)


def test_openai_cached_prompt_tokens_are_charged_at_the_cached_price():
    """gpt-4o bills cached prompt tokens at half its input price ($1.25 instead of $2.50 per million); the SDK reports
    them inside prompt_tokens, under prompt_tokens_details.cached_tokens."""
    def reply(body):
        out = chat("Your order is on its way.")
        out["usage"] = {"prompt_tokens": 3000, "completion_tokens": 20, "total_tokens": 3020,
                        "prompt_tokens_details": {"cached_tokens": 2048}}
        return out
    srv = Strict(reply)
    agent = OpenAIAgent("gpt-4o", backend=OpenAIBackend("gpt-4o", api_key="sk-test", transport=srv.transport(),
                                                       opts=RolloutOptions(**FAST), cache=False))
    sit = situation_from_cell({"tool": "get_order", "rule": "x", "stance": "cooperative", "world": "exists",
                               "condition": "ok", "history": "fresh"}, SPEC, seed=0)
    row = rollouts([sit], SPEC, agent, TemplateUser(), opts=RolloutOptions(**FAST), progress=False)[0]
    u, n = row["usage"]["agent"], row["usage"]["agent"]["calls"]
    assert srv.refused == [] and u["cache_read_tokens"] == 2048 * n and u["input_tokens"] == (3000 - 2048) * n
    assert u["cost_usd"] == pytest.approx(n * (952 * 2.5 + 2048 * 1.25 + 20 * 10.0) / 1e6)

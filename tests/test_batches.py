"""Batch grading, offline through each SDK's own HTTP layer: Anthropic's Message Batches API and OpenAI's Batch API
(`wire.Batches`, which checks each request in a batch as a direct call is checked). Labels match the direct path's,
at half the price; an errored or expired request costs its own row only; a run stopped while its batch is processing
collects the same batch when run again; a failed batch is forgotten so the next run submits afresh."""

import pytest
from wire import Strict, Batches, message, chat
from whilelab.core import shopfront
from whilelab.defaults import BatchOptions, RolloutOptions
from whilelab.rollout import situation_from_cell, rollouts
from whilelab.backends import request_key, ClaudeBackend, OpenAIBackend
from whilelab.standins import ScriptedAgent, TemplateUser
from whilelab.roles import claude_judge, openai_judge
from whilelab.grade import judge_all, grade

KEY = "sk-ant-api03-TESTKEYthatmustneverleak0123456789"
SPEC = shopfront()
NOW = BatchOptions(poll_seconds=0)  # a test's batch ends at its second status check: no waiting between checks


@pytest.fixture(scope="module")
def rows():
    cells = [
        {"tool": t, "rule": "x", "stance": "cooperative", "world": "exists", "condition": "ok", "history": "fresh"}
        for t in ("get_order", "cancel_order", "find_customer", "update_shipping_address")
    ]
    sits = [situation_from_cell(c, SPEC, seed=0, situation_id=f"s{i}") for i, c in enumerate(cells)]
    return rollouts(sits, SPEC, ScriptedAgent(flaw_rate=0), TemplateUser(), progress=False)


def verdict(text_of_prompt):
    "Fail the conversations that open asking to cancel, pass the rest: a label a reader can predict."
    said = text_of_prompt.split("CONVERSATION:\n")[-1].splitlines()[0]
    return "LABEL: fail\nREASON: no confirmation." if "cancel" in said else "LABEL: pass\nREASON: fine."


def claude_reply(body):
    return message([{"type": "text", "text": verdict(body["messages"][0]["content"])}], usage=(1000, 20))


def openai_reply(body):
    return chat(verdict(body["messages"][1]["content"]), logprobs=(), usage=(1000, 20))


def custom_id(backend, judge, row):
    "The custom_id the Claude backend gives `row`'s judge request in a batch."
    return request_key(
        "anthropic.batch", None, backend.request(judge.rubric, [{"role": "user", "content": judge.prompt(row)}])
    )


def claude(transport, tmp_path, **kw):
    return ClaudeBackend(
        api_key=KEY, transport=transport, cache=tmp_path / "c.sqlite", opts=RolloutOptions(max_retries=0), **kw
    )


def openai(transport, tmp_path):
    return OpenAIBackend(
        "gpt-4.1-mini",
        api_key="sk-test",
        transport=transport,
        cache=tmp_path / "c.sqlite",
        opts=RolloutOptions(max_retries=0),
    )


def test_claude_batch_labels_match_the_direct_path_at_half_the_price(rows, tmp_path):
    direct_srv, batch_srv = Strict(claude_reply), Batches(claude_reply)
    direct = judge_all(claude_judge(SPEC.policy, backend=claude(direct_srv.transport(), tmp_path / "d")), rows)
    batched = judge_all(
        claude_judge(SPEC.policy, backend=claude(batch_srv.transport(), tmp_path / "b"), batch=NOW), rows
    )
    assert [(l.label, l.reason) for l in batched] == [(l.label, l.reason) for l in direct]
    assert sorted({l.label for l in batched}) == ["fail", "pass"]
    # two status checks, then the SDK reads the batch once more for its results URL
    assert (len(direct_srv.calls), batch_srv.created, batch_srv.checks, batch_srv.refused) == (len(rows), 1, 3, [])
    for d, b in zip(direct, batched):
        assert b.usage == {**d.usage, "cost_usd": d.usage["cost_usd"] / 2, "batched": True}
        assert (b.judge, b.family, b.rubric_hash) == (d.judge, d.family, d.rubric_hash)


def test_an_errored_or_expired_request_costs_its_own_row_only(rows, tmp_path):
    too_long = rows[2]["messages"][0]["content"]  # the person's opening of the third row

    def reply(body):
        if too_long in body["messages"][0]["content"]:
            return 400, {"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long"}}
        return claude_reply(body)

    srv = Batches(reply)
    backend = claude(srv.transport(), tmp_path)
    judge = claude_judge(SPEC.policy, backend=backend, batch=NOW)
    srv.expire = {custom_id(backend, judge, rows[3])}
    with pytest.warns(UserWarning, match="gave no label for 2 of 4 rows"):
        graded = grade(rows, SPEC, judge=judge)
    assert [r["reward"] for r in graded] == [1.0, 0.0, None, None] and graded.judged == 2      # an errored or expired request gave no label: not judged
    assert "prompt is too long" in graded[2]["ungraded"] and "expired" in graded[3]["ungraded"]


def test_a_run_stopped_while_its_batch_processes_collects_the_same_batch_when_run_again(rows, tmp_path):
    srv = Batches(claude_reply, polls=2)
    stop_at_once = claude_judge(
        SPEC.policy, backend=claude(srv.transport(), tmp_path), batch=BatchOptions(max_wait_seconds=0)
    )
    with pytest.warns(UserWarning, match="gave no label for 4 of 4 rows"):
        first = judge_all(stop_at_once, rows)
    assert {l.label for l in first} == {None} and "still processing" in first[0].error and "run again" in first[0].error
    again = judge_all(claude_judge(SPEC.policy, backend=claude(srv.transport(), tmp_path), batch=NOW), rows)
    assert (srv.created, [l.label for l in again]) == (1, ["pass", "fail", "pass", "pass"])
    checks = srv.checks
    third = judge_all(claude_judge(SPEC.policy, backend=claude(srv.transport(), tmp_path), batch=NOW), rows)
    assert (srv.created, srv.checks, third) == (
        1,
        checks,
        again,
    )  # every answer from the request cache: no batch at all


def test_openai_batch_labels_match_the_direct_path_and_an_expired_request_is_its_own_rows_loss(rows, tmp_path):
    direct_srv, batch_srv = Strict(openai_reply), Batches(openai_reply)
    direct = judge_all(
        openai_judge(SPEC.policy, "gpt-4.1-mini", backend=openai(direct_srv.transport(), tmp_path / "d")), rows
    )
    backend = openai(batch_srv.transport(), tmp_path / "b")
    judge = openai_judge(SPEC.policy, "gpt-4.1-mini", backend=backend, batch=NOW)
    batch_srv.expire = {
        request_key("openai.batch", "api.openai.com", backend.single(judge.rubric, judge.prompt(rows[1])))
    }
    with pytest.warns(UserWarning, match="gave no label for 1 of 4 rows"):
        batched = judge_all(judge, rows)
    assert [l.label for l in direct] == ["pass", "fail", "pass", "pass"] and direct_srv.refused == []
    assert [l.label for l in batched] == ["pass", None, "pass", "pass"] and "completion window expired" in batched[
        1
    ].error
    assert (batch_srv.created, batch_srv.refused) == (1, [])
    assert batched[0].usage == {**direct[0].usage, "cost_usd": direct[0].usage["cost_usd"] / 2, "batched": True}
    assert (batched[0].judge, batched[0].family) == ("openai:gpt-4.1-mini", "openai-compatible")


def test_a_failed_batch_costs_its_rows_and_is_forgotten_so_the_next_run_submits_afresh(rows, tmp_path):
    srv = Batches(openai_reply, fail="line 3: model not found")
    judge = openai_judge(SPEC.policy, "gpt-4.1-mini", backend=openai(srv.transport(), tmp_path), batch=NOW)
    with pytest.warns(UserWarning, match="gave no label for 4 of 4 rows"):
        first = judge_all(judge, rows)
    assert "model not found" in first[0].error and srv.created == 1
    srv.fail = None
    assert [l.label for l in judge_all(judge, rows)] == ["pass", "fail", "pass", "pass"] and srv.created == 2

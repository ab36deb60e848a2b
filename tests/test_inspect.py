"""Inspect AI, end to end: a run on the real tau-bench retail domain written as an Inspect eval log, read back by
Inspect's own reader with every count of the run's summary; `whilelab export --inspect`; a plan played as an Inspect
task by Inspect's offline mock model, its log back into whilelab's statistics and cuts; and `inspect view` on
127.0.0.1 in a real browser listing the samples with their scores."""
import contextlib, io, json, os, re, subprocess, sys, time, urllib.request, warnings
from collections import Counter
import pytest

inspect_ai = pytest.importorskip("inspect_ai", reason="Inspect AI is not installed (tests/run.sh installs it)")
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log
from inspect_ai.model import (ModelOutput, ModelUsage, get_model, modelapi, ModelAPI, GenerateConfig,
                              ChatCompletionChoice, ChatMessageAssistant)
from inspect_ai.tool import tool, ToolError
from conftest import HAVE_CHROMIUM, chromium_page, free_port
from whilelab.core import AgentSpec, shared_data, stable_hash
from whilelab.defaults import SimOptions
from whilelab.simulate import simulate, load
from whilelab.stats import pass_interval
from whilelab.delta import delta_report
from whilelab.cut import cut_grpo, cut_sft
from whilelab.cli import main
from whilelab.interop import (from_inspect, inspect_task, export_inspect, rewards_of, tool_info, need, eval_sample,
                              inspect_log)

TAU = shared_data("tau_bench_domains.json", __file__)
WHEN = "2026-01-01T00:00:00+00:00"


def retail() -> AgentSpec:
    if TAU is None: pytest.skip("../shared/data/tau_bench_domains.json not found beside the project")
    d = json.loads(TAU.read_text())["retail"]
    return AgentSpec("retail", d["tools"], d["policy"])


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    "The retail domain's plan played once, two phrasings of each situation, into a run folder."
    out = tmp_path_factory.mktemp("retail") / "run"
    spec = retail()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sim = simulate(None, spec.tools, spec.policy, SimOptions(k_samples=1, search=None), out=out, progress=False)
    return sim, out


def counts(samples) -> dict:
    "The summary's counts, recomputed from Inspect samples alone."
    graded = [s.scores["reward"].value for s in samples if s.scores and "reward" in s.scores]
    return {"rollouts": len(samples), "situations": len({s.id for s in samples}),
            "errors": sum(s.error is not None for s in samples), "graded": len(graded),
            "pass_rate": round(sum(graded) / len(graded), 4) if graded else None,
            "faults_fired": sum(e.event == "info" and e.source == "whilelab.fault" for s in samples for e in s.events),
            "flawed": sum(s.metadata["flaw"] is not None for s in samples),
            "signatures": len({s.metadata["signature"] for s in samples}),
            "end_state_unknown": sum(s.store["state_hash_after"] is None or s.store["reference_hash"] is None
                                     for s in samples)}


def test_a_real_run_reads_back_with_every_count_of_its_summary(run, tmp_path):
    sim, _ = run
    p = sim.to_inspect(tmp_path / "retail.eval", created=WHEN)
    log = read_eval_log(str(p))
    summ = sim.summary()
    assert counts(log.samples) == {k: summ[k] for k in counts(log.samples)}
    assert summ["faults_fired"] > 0 and summ["flawed"] > 0          # the counts compared are not all zero
    assert log.results.total_samples == summ["rollouts"] and log.eval.dataset.samples == summ["situations"]
    assert log.eval.task == "whilelab/agent" and log.eval.task_version == summ["policy_version"]
    assert log.eval.config.epochs == 2 and log.eval.metadata["whilelab"]["summary"]["run_id"] == sim.run_id
    # ids and epochs: one sample per rollout, epoch = phrasing * k_samples + sample + 1
    assert {(s.id, s.epoch) for s in log.samples} == {(r["situation_id"], r["phrasing"] + r["sample"] + 1)
                                                      for r in sim.rows}
    # tool calls and their results are Inspect messages; the cell and each axis are metadata; hashes in the store
    s = next(s for s in log.samples if any(m.role == "tool" for m in s.messages))
    call = next(m for m in s.messages if m.role == "assistant" and m.tool_calls)
    assert any(m.role == "tool" and m.tool_call_id == call.tool_calls[0].id for m in s.messages)
    assert all(s.metadata[a] == v for a, v in s.metadata["cell"].items())
    assert s.metadata["axes"] == list(s.metadata["cell"])
    # the reward's and the judge's metadata carry the rubric hash; pass@k per situation where Inspect puts reductions
    judged = next(s for s in log.samples if "judge" in s.scores)
    assert judged.scores["reward"].metadata["rubric_hash"] == judged.scores["judge"].metadata["rubric_hash"]
    reds = {r.reducer: r for r in log.reductions}
    assert set(reds) == {"pass_at_1", "pass_k_1", "pass_at_2", "pass_k_2"}
    per = pass_interval(sim.rewards, 2, kind="pow").estimate
    assert abs(sum(x.value for x in reds["pass_k_2"].samples) / len(reds["pass_k_2"].samples) - per) < 1e-9
    # every row comes back whole, and the same log is the same bytes
    assert from_inspect(log) == sim.rows
    assert sim.to_inspect(tmp_path / "again.eval", created=WHEN).read_bytes() == p.read_bytes()


def test_a_json_log_reads_back_too(run, tmp_path):
    sim, _ = run
    p = sim.to_inspect(tmp_path / "retail.json", created=WHEN)
    assert json.loads(p.read_text())["eval"]["task"] == "whilelab/agent"
    assert from_inspect(p) == sim.rows


def test_error_rows_are_errored_samples_and_ungraded(tmp_path):
    def down(messages, tools): raise ConnectionError("the agent's endpoint is down")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sim = simulate(down, options=SimOptions(k_samples=1, n_phrasings=1, search=None), progress=False)
    log = read_eval_log(str(sim.to_inspect(tmp_path / "down.eval", created=WHEN)))
    summ = sim.summary()
    assert summ["errors"] == summ["rollouts"] > 0 and summ["graded"] == 0
    assert counts(log.samples) == {k: summ[k] for k in counts(log.samples)}
    assert "endpoint is down" in log.samples[0].error.message and log.reductions is None
    assert from_inspect(log) == sim.rows


def test_the_cli_exports_a_run_folder(run, tmp_path):
    sim, out = run
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf): assert main(["export", "--inspect", str(out)]) == 0
    p = out / "inspect" / f"{sim.run_id}.eval"
    assert str(p) in buf.getvalue() and "inspect view --log-dir" in buf.getvalue()
    assert from_inspect(p) == load(out)["rows"]
    err = io.StringIO()
    with contextlib.redirect_stderr(err): assert main(["export", "--inspect", str(tmp_path / "nope")]) == 2
    assert "not a complete run folder" in err.getvalue()


def test_a_missing_extra_is_named(monkeypatch):
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)       # as if Inspect AI were not installed
    with pytest.raises(ImportError, match=r"pip install 'whilelab\[inspect\]'"): need("inspect_ai.log", "to_inspect")


ORDER_TOOL = {"name": "get_order_details", "description": "Look up an order by its id.",
              "input_schema": {"type": "object", "properties": {"order_id": {"type": "string"}},
                               "required": ["order_id"]}}


@tool
def get_order_details():
    async def execute(order_id: str):
        """Look up an order by its id.

        Args:
            order_id: the order's id, e.g. #W0000001
        """
        if order_id == "#W404": raise ToolError("order not found")
        if order_id == "#W500": raise ToolError("TimeoutError: the order service timed out")
        return {"order_id": order_id, "status": "delivered"}
    return execute


def order_bot(answer: str = "Your order {id} was delivered."):
    """A deterministic stand-in model for Inspect's mockllm: it looks up the order id the user quoted, then answers
    (whatever order samples run in, each conversation gets its own outputs)."""
    def respond(messages, tools, tool_choice, config):
        oid = re.search(r"#W\d+", messages[0].text).group(0)
        if not any(m.role == "tool" for m in messages) and tools:
            o = ModelOutput.for_tool_call("mockllm/model", "get_order_details", {"order_id": oid})
        else: o = ModelOutput.from_content("mockllm/model", answer.format(id=oid))
        o.usage = ModelUsage(input_tokens=40, output_tokens=8, total_tokens=48)
        return o
    return respond


def plain_suite(tmp_path, epochs: int = 2):
    "An ordinary Inspect suite -- Inspect's own tool, generate and scorer, no whilelab -- evaluated offline."
    from inspect_ai import Task
    from inspect_ai.dataset import Sample
    from inspect_ai.solver import use_tools, generate
    from inspect_ai.scorer import includes
    samples = [Sample(id="found", input="Where is order #W0000001?", target="delivered",
                      metadata={"stance": "cooperative"}),
               Sample(id="missing", input="Where is order #W404?", target="not found"),
               Sample(id="slow", input="Where is order #W500?", target="try again")]
    task = Task(dataset=samples, solver=[use_tools(get_order_details()), generate()], scorer=includes(), epochs=epochs)
    [log] = inspect_eval(task, model=get_model("mockllm/model", custom_outputs=order_bot()), log_dir=str(tmp_path),
                         display="none")
    return log


def test_a_plain_inspect_log_reads_as_rows_whilelab_grades_and_counts(tmp_path):
    from whilelab.axes import default_axes
    from whilelab.cover import covering_array, coverage
    from whilelab.grade import grade
    log = plain_suite(tmp_path)
    assert log.status == "success"
    rows = from_inspect(log.location)                              # read from the file, as a user would
    assert [(r["situation_id"], r["sample"]) for r in rows] == [(s, e) for s in ("found", "missing", "slow")
                                                                 for e in (0, 1)]
    by = {r["situation_id"]: r for r in rows}
    # the conversation, the tool call and its answer, the tool's errors as faults, the cell it delivered
    call = next(m for m in by["found"]["messages"] if m.get("tool_calls"))["tool_calls"][0]["function"]
    assert call == {"name": "get_order_details", "arguments": {"order_id": "#W0000001"}}
    assert by["found"]["cell"] == {"stance": "cooperative", "tool": "get_order_details", "condition": "ok",
                                   "world": "exists"}
    assert by["missing"]["cell"]["world"] == "missing" and by["missing"]["faults"] == []
    assert by["slow"]["cell"]["condition"] == "timeout" and by["slow"]["faults"][0]["fault"] == "timeout"
    assert by["found"]["inspect_scores"] == {"includes": "C"} and by["found"]["usage"]["agent"]["input_tokens"] == 80
    assert from_inspect(log.location) == rows                      # deterministic
    assert "stance" not in from_inspect(log, axes=["tool"])[0]["cell"]  # only the axes asked for come from metadata
    # whilelab grades them: the agent claims a delivery the world never confirmed for the missing order
    spec = AgentSpec("orders", [ORDER_TOOL], "Only say an order's status after looking it up.")
    g = grade(rows, spec)
    assert all(r["reward"] is not None for r in g)
    assert {r["situation_id"]: r["reward"] for r in g}["found"] == 1.0
    assert {r["situation_id"] for r in g if r["reward"] < 1} >= {"missing", "slow"}
    assert pass_interval(rewards_of(g), 2).estimate == 1 / 3
    # and counts the suite's coverage against a plan: what the plan asks for that the suite never plays
    plan = covering_array(default_axes(spec.tools, spec.policy), seed=0)
    cov = coverage(rows, axes=plan)
    assert 0 < cov.attrs["pairs_covered"] < cov.attrs["pairs_planned"]
    assert cov["world__condition"].sel(world="exists", condition="timeout").item() == 2


def outputs(*turns):
    "Outputs for Inspect's mock model, cycled: a (tool, arguments) pair is a tool call, text a reply; usage given."
    while True:
        for t in turns:
            o = (ModelOutput.for_tool_call("mockllm/model", t[0], t[1]) if isinstance(t, tuple)
                 else ModelOutput.from_content("mockllm/model", t))
            o.usage = ModelUsage(input_tokens=40, output_tokens=8, total_tokens=48)
            yield o


def test_every_real_tool_is_an_inspect_tool():
    spec = retail()
    infos = [tool_info(t) for t in spec.tools]
    assert len(infos) == 16
    for t, i in zip(spec.tools, infos):
        assert i.name == t.api_name and set(i.parameters.properties) == set(t.params)
        assert set(i.parameters.required) == set(t.required)


def test_a_plan_played_as_an_inspect_task_comes_back_into_whilelab(tmp_path):
    spec = retail()
    opts = SimOptions(n_phrasings=1, k_samples=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        task = inspect_task(spec, opts)
    assert len(task.dataset) > 0 and all("cell" in s.metadata for s in task.dataset)
    tool = next(t for t in spec.tools if t.name == "get_order_details")
    mock = get_model("mockllm/model", custom_outputs=outputs((tool.api_name, {"order_id": "#W0000001"}), "All done."))
    [log] = inspect_eval(task, model=mock, limit=6, max_samples=1, log_dir=str(tmp_path), display="none")
    assert log.status == "success" and log.results.total_samples == 12
    rows = from_inspect(read_eval_log(log.location))
    assert len(rows) == 12 and {r["phrasing"] for r in rows} == {0} and {r["sample"] for r in rows} == {0, 1}
    # the model's call reached whilelab's world and its answer is in the row; the person spoke first
    r = rows[0]
    assert r["messages"][0]["role"] == "user" and r["calls"] and r["calls"][0]["tool"] == tool.name
    assert any(m["role"] == "tool" for m in r["messages"])
    u = r["usage"]["agent"]                                          # each of the model's turns, with its usage
    assert u["calls"] == sum(m["role"] == "assistant" for m in r["messages"]) and u["input_tokens"] == 40 * u["calls"]
    # whilelab's grade scored it: an order id nobody gave breaks a hard rule, so every reward is 0
    assert all(x["reward"] == 0.0 for x in rows)
    assert Counter(v["rule"] for x in rows for v in x["rules"] if not v["passed"])["ungrounded_arguments"] == 12
    assert {s.scores["reward"].value for s in log.samples} == {0.0}
    # the rows feed the statistics, the cuts and the before/after report
    assert pass_interval(rewards_of(rows), 1).estimate == 0.0
    assert cut_sft(rows, spec).rows == [] and cut_grpo(rows, spec).rows == []
    # against whilelab's offline agent on the same situations: the plan's situations are the ones simulate plays
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        offline = simulate(None, spec.tools, spec.policy, SimOptions(n_phrasings=1, k_samples=2, search=None),
                           progress=False).rows
    ids = {x["situation_id"] for x in rows}
    assert ids <= {x["situation_id"] for x in offline}
    after = [x for x in offline if x["situation_id"] in ids]
    rep = delta_report(rows, after, n_resamples=200)
    assert rep.results["pass@1"].n == 6 and rep.results["pass@1"].diff == pass_interval(rewards_of(after), 1).estimate


def lookup_bot(tool: str, submit: bool = True):
    """A deterministic stand-in model for Inspect's mockllm: it asks for the person's email until it has one, looks
    them up by it, then answers with what the tool answered -- through react()'s `submit` tool, or as a reply."""
    def say(text: str):
        return (ModelOutput.for_tool_call("mockllm/model", "submit", {"answer": text}) if submit
                else ModelOutput.from_content("mockllm/model", text))
    def respond(messages, tools, tool_choice, config):
        emails = re.findall(r"[\w.+-]+@[\w-]+\.[\w.-]+", " ".join(m.text for m in messages if m.role == "user"))
        if messages[-1].role == "tool": o = say(f"The lookup said: {messages[-1].text}")
        elif emails and not any(m.role == "tool" for m in messages):
            o = ModelOutput.for_tool_call("mockllm/model", tool, {"email": emails[-1]})
        else: o = say("What is the email on your account?")
        o.usage = ModelUsage(input_tokens=40, output_tokens=8, total_tokens=48)
        return o
    return respond


@pytest.mark.parametrize("kind", ["react", "generate"])
def test_your_own_agent_plays_the_plan_against_whilelab_world_person_and_grade(kind, tmp_path):
    "Inspect's react() agent with the plan's tools, or Inspect's plain generate() with the tools inspect_task gives."
    from inspect_ai.agent import react
    from inspect_ai.solver import generate
    from whilelab.core import shopfront
    from whilelab.interop import world_tools
    spec = shopfront()
    own = react(tools=world_tools(spec)) if kind == "react" else generate()
    task = inspect_task(spec, SimOptions(n_phrasings=1, k_samples=1), solver=own)
    mine = {s.id: s.metadata["condition"] for s in task.dataset if s.metadata["tool"] == "find_customer"}
    assert "ok" in mine.values() and set(mine.values()) - {"ok"}       # both a plain and a faulty world are played
    bot = lookup_bot("find_customer", submit=kind == "react")
    [log] = inspect_eval(task, model=get_model("mockllm/model", custom_outputs=bot), sample_id=sorted(mine),
                         log_dir=str(tmp_path), display="none")
    assert log.status == "success" and len(log.samples) == len(mine)
    rows = {r["situation_id"]: r for r in from_inspect(read_eval_log(log.location))}
    for sid, cond in mine.items():
        r = rows[sid]
        # whilelab's person spoke first (not the sample's input), whilelab's world answered the agent's call
        assert r["messages"][0]["role"] == "user" and not r["messages"][0]["content"].startswith("situation ")
        assert r["calls"][0]["tool"] == "find_customer"
        assert [f["fault"] for f in r["faults"]] == ([] if cond == "ok" else [cond])
        answer = next(m for m in r["messages"] if m["role"] == "tool")["content"]
        assert answer in r["messages"][-1]["content"]                  # react's submitted answer is the last turn
        u = r["usage"]["agent"]                                         # each of the model's turns, with its usage
        assert u["calls"] >= 2 and u["input_tokens"] == 40 * u["calls"] and u["cost_usd"] is None
        # and whilelab's grade scored it, in the log and in the row
        assert r["reward"] in (0.0, 1.0) and log.samples[0].scores["reward"].value in (0.0, 1.0)
    assert [r["reward"] for r in rows.values()] == [s.scores["reward"].value for s in sorted(
        log.samples, key=lambda s: s.id)]
    # where the person gave no email, the agent asked, the person answered and the agent ran again
    assert any(sum(m["role"] == "user" for m in r["messages"]) > 1 for r in rows.values())
    # a plain world that answered ok with the person's own email passes; a fault reported as a success does not
    assert any(rows[s]["reward"] == 1.0 for s, c in mine.items() if c == "ok")
    # the tools answer only inside inspect_task
    import asyncio
    with pytest.raises(RuntimeError, match=r"inspect_task\(spec, solver=\.\.\.\)"):
        asyncio.run(world_tools(spec)[0](email="a@b.test"))


DOWN = {"on": True}           # whether the flaky model's endpoint is down, for the retry test


@modelapi(name="whilelab_flaky")
class FlakyModel(ModelAPI):
    """An offline model API (a real Inspect provider, so `eval_retry` finds it again by name): while `DOWN` it fails
    on the conversations whose first words hash odd, always the same ones; otherwise it answers "Done."."""
    def __init__(self, model_name, base_url=None, api_key=None, config=GenerateConfig(), **kw):
        super().__init__(model_name, base_url, api_key, [], config)

    async def generate(self, input, tools, tool_choice, config):
        first = next(m.text for m in input if m.role == "user")
        if DOWN["on"] and int(stable_hash(first), 16) % 2: raise RuntimeError("the model's endpoint is down")
        return ModelOutput(model=self.model_name, choices=[ChatCompletionChoice(
            message=ChatMessageAssistant(content="Done.", model=self.model_name), stop_reason="stop")],
            usage=ModelUsage(input_tokens=40, output_tokens=8, total_tokens=48))


PLAN_TASK = '''from inspect_ai import task
from whilelab.core import shopfront
from whilelab.defaults import SimOptions
from whilelab.interop import inspect_task

@task
def shop_plan(): return inspect_task(shopfront(), SimOptions(n_phrasings=1, k_samples=2))
'''


def test_a_model_error_is_a_sample_error_and_eval_retry_plays_exactly_those_again(tmp_path, monkeypatch):
    from inspect_ai import eval_retry
    monkeypatch.chdir(tmp_path)                                    # a task file, as `inspect eval plan.py` runs one
    (tmp_path / "plan.py").write_text(PLAN_TASK)
    DOWN["on"] = True
    [log] = inspect_eval("plan.py", model="whilelab_flaky/model", limit=6, log_dir=str(tmp_path / "logs"),
                         display="none", fail_on_error=False)
    failed = {(s.id, s.epoch) for s in log.samples if s.error is not None}
    assert 0 < len(failed) < len(log.samples)
    # an outage is Inspect's sample error, with the cause, not a NaN reward on a successful sample
    bad = next(s for s in log.samples if s.error is not None)
    assert "endpoint is down" in bad.error.message and "RolloutError" in bad.error.message and not bad.scores
    assert all(s.scores["reward"].value == s.scores["reward"].value for s in log.samples if s.error is None)
    rows = from_inspect(log.location)                              # errored samples read back as error rows
    assert {(r["situation_id"], r["sample"] + 1) for r in rows if r["error"]} == failed
    assert all(r["reward"] is None for r in rows if r["error"])
    DOWN["on"] = False
    [again] = eval_retry(log.location, log_dir=str(tmp_path / "logs"), display="none")
    assert again.status == "success" and all(s.error is None for s in again.samples)
    played = {(s.id, s.epoch) for s in again.samples if s.uuid not in {x.uuid for x in log.samples}}
    assert played == failed                                        # exactly the failed samples were played again
    back = from_inspect(again.location)
    assert len(back) == len(log.samples) and not any(r["error"] for r in back)
    assert all(r["reward"] is not None for r in back)              # recovered and kept samples, all graded
    kept = {(r["situation_id"], r["sample"]): r for r in rows if not r["error"]}
    assert all(kept[k] == r for r in back if (k := (r["situation_id"], r["sample"])) in kept)


def test_an_exported_log_carries_its_transcript_answer_and_target(run, tmp_path):
    from inspect_ai.analysis import messages_df, samples_df
    import dataclasses
    from whilelab.interop import write_inspect
    sim, _ = run
    some = sim.rows[:40]                       # a part of the run: Inspect's dataframes read every message of it
    assert any(r["faults"] for r in some) and any(r["reward"] == 1.0 for r in some)
    p = write_inspect(inspect_log(some, sim.summary(), dataclasses.asdict(sim.options), created=WHEN),
                      tmp_path / "retail.eval")
    log = read_eval_log(str(p))
    for s in log.samples:                      # a model event per agent turn, a tool event per call it made
        kinds = Counter(e.event for e in s.events)
        assert kinds["model"] == sum(m.role == "assistant" for m in s.messages)
        assert kinds["tool"] == sum(m.role == "tool" for m in s.messages)
    s = next(s for s in log.samples if any(e.event == "tool" for e in s.events))
    call = next(e for e in s.events if e.event == "tool")
    assert call.result == next(m.text for m in s.messages if m.role == "tool" and m.tool_call_id == call.id)
    # the final answer, a readable target (the end state's hash stays in the store)
    graded = [s for s in log.samples if "reward" in (s.scores or {})]
    assert graded and all(s.scores["reward"].answer == s.output.completion for s in graded)
    assert all(s.target.startswith(s.metadata["tool"] + " done as the policy allows") for s in log.samples)
    # Inspect's own dataframes read it: a row per sample, every message the agent saw or sent
    assert len(samples_df(str(p))) == len(log.samples)
    msgs = messages_df(str(p))
    assert set(msgs["role"]) >= {"user", "assistant", "tool"}
    assert msgs.groupby("sample_id").size().min() > 1
    assert from_inspect(p) == sorted(some, key=lambda r: (r["situation_id"], r["phrasing"], r["sample"]))


def test_any_epochs_and_inspect_score_on_a_task_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "plan.py").write_text(PLAN_TASK)
    # --epochs 1 overrides the plan's 2: the every-epoch reducers need no number of epochs of their own
    mock = get_model("mockllm/model", custom_outputs=lookup_bot("find_customer", submit=False))
    [log] = inspect_eval("plan.py", model=mock, limit=6, epochs=1, log_dir=str(tmp_path / "logs"), display="none")
    assert log.status == "success" and log.eval.config.epochs == 1
    reducers = {s.reducer: s for s in log.results.scores}
    assert {"pass_at_every", "pass_k_every"} <= set(reducers)
    assert all(s.scored_samples == 6 and s.unscored_samples == 0 for s in reducers.values())
    before = {s.id: (s.scores["reward"].value, s.scores["reward"].explanation) for s in log.samples}
    assert all(v == v for v, _ in before.values())                 # no NaN offline
    assert {v for v, _ in before.values()} == {0.0, 1.0}
    # `inspect score` builds whilelab's scorer again from the log (the task file imports whilelab) and re-grades
    out = tmp_path / "rescored.eval"
    r = subprocess.run([sys.executable, "-m", "inspect_ai", "score", log.location, "--action", "overwrite",
                        "--output-file", str(out), "--display", "none"], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert r.returncode == 0, r.stderr[-2000:]
    again = read_eval_log(str(out))
    assert {s.id: (s.scores["reward"].value, s.scores["reward"].explanation) for s in again.samples} == before
    assert {s.reducer for s in again.results.scores} == set(reducers)


def wait_http(url, proc, timeout=60):
    t = time.time()
    while time.time() - t < timeout:
        if proc.poll() is not None:
            raise RuntimeError(f"inspect view exited early:\n{proc.stderr.read().decode()[-2000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200: return
        except OSError: time.sleep(0.3)
    raise TimeoutError(f"inspect view did not answer at {url}")


@pytest.mark.skipif(not HAVE_CHROMIUM, reason="Debian chromium is not installed (tests/run.sh installs it)")
def test_inspect_view_lists_the_samples_with_their_scores(run, tmp_path):
    sim, _ = run
    logs = tmp_path / "logs"
    sim.to_inspect(logs / "retail.eval", created=WHEN)
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "inspect_ai", "view", "start", "--log-dir", str(logs),
                             "--host", "127.0.0.1", "--port", str(port)], cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        wait_http(f"http://127.0.0.1:{port}/", proc)
        with chromium_page() as page:
            page.goto(f"http://127.0.0.1:{port}/", wait_until="domcontentloaded", timeout=60_000)
            page.get_by_text("whilelab/agent").first.wait_for(timeout=60_000)
            page.get_by_text(f"{sim.summary()['rollouts']} Samples").first.wait_for(timeout=60_000)
            first = sorted(sim.rows, key=lambda r: r["situation_id"])[0]["situation_id"]
            page.get_by_text(first).first.wait_for(timeout=60_000)
            body = page.inner_text("body")
            page.screenshot(path=str(tmp_path / "inspect_view.png"))
            print("screenshot:", tmp_path / "inspect_view.png")
    finally:
        proc.terminate()
        try: proc.wait(20)
        except subprocess.TimeoutExpired: os.killpg(proc.pid, 9); proc.wait(10)
    graded = [r["reward"] for r in sim.rows if r["reward"] is not None]
    assert "REWARD" in body.upper() and "end_state" in body         # the scores are listed, the reward a column
    assert f"{sum(graded) / len(graded):.3f}" in body                # and its mean is the headline

"""What a real-model run costs, and what the request cache, prompt caching and batch grading save.

A realistic run: the tau-bench retail domain (16 tools, a 5,700-character policy; ../shared/data), its pairwise
plan played once (k=1, n=1) by a Claude agent and a Claude person, graded by an OpenAI-compatible judge (another
model family). Every call goes through the SDKs' own HTTP layers to the strict test servers of tests/wire.py,
which answer as a scripted agent, person and judge would and count tokens the way the APIs bill them:
  * input tokens ~ characters / 4 of the tools, system prompt and messages as sent (the order of magnitude of
    Claude's and GPT's tokenizers on English and JSON; the ratios below do not depend on the constant);
  * prompt caching as Anthropic documents it: the prefix up to the last `cache_control` breakpoint is cached when it
    is at least 1,024 tokens (Sonnet's minimum); the first request writes it (x1.25 the input price), later requests
    with the same prefix read it (x0.1) and are billed input tokens only for what follows it;
  * batch grading at half the price (OpenAI's Batch API).
"rows' cost" is whilelab's own accounting on the rows (`usage_by_role`): what the rows cost to make, which a re-run
from the request cache repeats byte for byte; "paid this run" is what the test servers billed for the calls they
answered in this run, at the same prices (`whilelab.backends.PRICES`).

    python bench/budget.py [--markdown]
"""

import argparse, json, math, re, sys, tempfile, time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from wire import Strict, Batches, message, chat  # noqa: E402
from whilelab.core import shared_data, canonical_json  # noqa: E402
from whilelab.defaults import SimOptions, BatchOptions  # noqa: E402
from whilelab.roles import ClaudeAgent, ClaudeUser, openai_judge, STOP  # noqa: E402
from whilelab.backends import ClaudeBackend, OpenAIBackend, PRICES, _usage  # noqa: E402
from whilelab.rollout import strip_timings  # noqa: E402
from whilelab.simulate import simulate, usage_by_role  # noqa: E402

MIN_CACHEABLE = 1024  # Sonnet 4.5's minimum cacheable prompt, in tokens (Anthropic prompt-caching docs)


def tokens(x) -> int:
    return math.ceil(len(x if isinstance(x, str) else canonical_json(x)) / 4)


class Counting:
    "Messages API replies for the agent and the person, with usage counted as the API bills it."

    def __init__(self):
        self.prefixes, self.billed = set(), 0.0

    def usage(self, body):
        tools, system, msgs = body.get("tools") or [], body.get("system") or "", body["messages"]
        marked = any("cache_control" in t for t in tools) or (
            isinstance(system, list) and any("cache_control" in b for b in system)
        )
        tools = [
            {k: v for k, v in t.items() if k != "cache_control"} for t in tools
        ]  # the marker is not a prompt token
        system = system if isinstance(system, str) else "".join(b["text"] for b in system)
        prefix = tokens(tools) + tokens(system)
        total = prefix + tokens(msgs)
        u = {"input_tokens": total, "output_tokens": 40}
        if marked and prefix >= MIN_CACHEABLE:
            key = canonical_json([tools, system])
            kind = "cache_read_input_tokens" if key in self.prefixes else "cache_creation_input_tokens"
            self.prefixes.add(key)
            u.update({"input_tokens": total - prefix, kind: prefix})
        return u

    def __call__(self, body):
        system = (
            body["system"]
            if isinstance(body.get("system"), str)
            else "".join(b["text"] for b in body.get("system") or [])
        )
        reply = self.person(system, body) if system.startswith("You are a customer") else self.agent(body)
        reply["usage"] = u = self.usage(body)
        self.billed += bill(
            body["model"],
            u["input_tokens"],
            40,
            u.get("cache_read_input_tokens", 0),
            u.get("cache_creation_input_tokens", 0),
        )
        return reply

    def person(self, system, body):
        said = sum(m["role"] == "assistant" for m in body["messages"])
        if said >= 2:
            return message([{"type": "text", "text": STOP}])
        want = re.search(r"You want the agent to (.*?)\. What you know: (.*?)\. How you behave", system)
        text = f"Hi, I'd like you to {want.group(1)}. {want.group(2)}." if said == 0 else "Yes, please go ahead."
        return message([{"type": "text", "text": text}])

    def agent(self, body):
        msgs = body["messages"]
        last = msgs[-1]["content"]
        if isinstance(last, list) and any(b.get("type") == "tool_result" for b in last):
            return message([{"type": "text", "text": "I have looked into it; here is what the system says."}])
        people = [m["content"] for m in msgs if m["role"] == "user" and isinstance(m["content"], str)]
        if len(people) < 2:
            return message([{"type": "text", "text": "Happy to help. Can you confirm the details before I go ahead?"}])
        heard = " ".join(people).lower()
        tool = max(body["tools"], key=lambda t: sum(w in heard for w in t["name"].split("_")))
        ids = re.findall(r"#?\b[a-z]*\d[\w-]*", heard) or ["unknown"]
        args = {p: ids[0].lstrip("#") for p in tool["input_schema"].get("required", [])}
        return message(
            [{"type": "tool_use", "id": f"toolu_{len(msgs)}", "name": tool["name"], "input": args}], "tool_use"
        )


def bill(model, i, o, read=0, write=0, share=1.0):
    "What the provider charges for one reply: its own price list applied to the tokens it counted."
    return _usage(model, i, o, PRICES, read, write, share)["cost_usd"]


class Judging:
    "Chat-completions replies of a judge: fail when a tool said 'not found', else pass; billed as counted."

    def __init__(self, share=1.0):
        self.share, self.billed = share, 0.0

    def __call__(self, body):
        label = "fail" if "not found" in body["messages"][-1]["content"].lower() else "pass"
        n = tokens(body["messages"])
        self.billed += bill(body["model"], n, 12, share=self.share)
        return chat(f"LABEL: {label}\nREASON: scripted.", logprobs=(), usage=(n, 12))


def run(domain, cache, prompt_cache=True, batch=False):
    counting, judging = Counting(), Judging(BatchOptions().price if batch else 1.0)
    claude = Strict(lambda body: counting(body))
    judge_srv = Batches(lambda body: judging(body)) if batch else Strict(lambda body: judging(body))
    kw = dict(api_key="sk-ant-bench", transport=claude.transport(), cache=cache, prompt_cache=prompt_cache)
    jb = OpenAIBackend("gpt-4.1-mini", api_key="sk-bench", transport=judge_srv.transport(), cache=cache)
    judge = openai_judge(
        domain["policy"], "gpt-4.1-mini", backend=jb, batch=BatchOptions(poll_seconds=0) if batch else False
    )
    t = time.perf_counter()
    sim = simulate(
        ClaudeAgent(backend=ClaudeBackend(**kw)),
        domain["tools"],
        domain["policy"],
        SimOptions(k_samples=1, n_phrasings=1, search=None),
        user=ClaudeUser(backend=ClaudeBackend(**kw)),
        judge=judge,
        progress=False,
    )
    calls = len(claude.calls) + (judge_srv.created if batch else len(judge_srv.calls))
    assert not claude.refused and not judge_srv.refused, (claude.refused, judge_srv.refused)
    return sim, calls, counting.billed + judging.billed, time.perf_counter() - t


def figures(name, sim, calls, billed, seconds, first_rows=None):
    u = usage_by_role(sim.rows)
    ins = sum(
        v.get("input_tokens", 0) + v.get("cache_read_tokens", 0) + v.get("cache_write_tokens", 0) for v in u.values()
    )
    read = sum(v.get("cache_read_tokens", 0) for v in u.values())
    cost = {r: u[r]["cost_usd"] for r in ("agent", "user", "judge")}
    same = "-" if first_rows is None else ("yes" if rows_of(sim.rows) == rows_of(first_rows) else "NO")
    return [
        name,
        len(sim.rows),
        calls,
        f"{ins:,}",
        f"{read / ins:.0%}",
        *(f"{cost[r]:.2f}" for r in cost),
        f"{sum(cost.values()):.2f}",
        f"{billed:.2f}",
        same,
        f"{seconds:.1f}",
    ]


def rows_of(rows) -> str:
    "The rows as bytes, without the wall-clock seconds each took (the one field a re-run cannot repeat)."
    return canonical_json([strip_timings(r) for r in rows])


HEAD = [
    "run",
    "rollouts",
    "network calls",
    "input tokens",
    "from prompt cache",
    "agent $",
    "person $",
    "judge $",
    "rows' cost $",
    "paid this run $",
    "rows identical to first",
    "seconds",
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    p = shared_data("tau_bench_domains.json", __file__)
    if p is None:
        sys.exit("../shared/data/tau_bench_domains.json not found beside the project")
    domain = json.loads(p.read_text())["retail"]
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        first = run(domain, d / "a.sqlite")
        table = [figures("first run", *first)]
        table.append(figures("same run again (request cache)", *run(domain, d / "a.sqlite"), first_rows=first[0].rows))
        table.append(figures("first run, no prompt caching", *run(domain, d / "b.sqlite", prompt_cache=False)))
        table.append(figures("first run, judge in one batch", *run(domain, d / "c.sqlite", batch=True)))
    if a.markdown:
        print("| " + " | ".join(HEAD) + " |\n|" + "---|" * len(HEAD))
        for r in table:
            print("| " + " | ".join(map(str, r)) + " |")
    else:
        w = [max(len(str(x)) for x in col) for col in zip(HEAD, *table)]
        for r in [HEAD, *table]:
            print("  ".join(str(x).ljust(n) for x, n in zip(r, w)))


if __name__ == "__main__":
    main()
